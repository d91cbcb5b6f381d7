package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/tool"
)

// bigTool answers every command with n characters of output naming it.
func bigTool(n int) *testTool {
	return newTestTool(func(_ context.Context, cmd string) tool.Result {
		head := "output of " + cmd + "\n"
		return tool.Result{Output: head + strings.Repeat("0123456789abcdef\n", (n-len(head))/17+1)}
	})
}

// isSummaryRequest tells the compaction's request from the conversation's.
func isSummaryRequest(r *llmtest.Request) bool { return strings.HasPrefix(r.System, "You summarise") }

// contextServer answers conversation requests with Bash steps until steps
// ran, then with "finished"; summary requests with summary (or status).
type contextServer struct {
	srv       *llmtest.Server
	summaries int
}

func newContextServer(t *testing.T, summary string, summaryStatus int) (*contextServer, *llmtest.Server) {
	cs := &contextServer{}
	srv := llmtest.New(t)
	cs.srv = srv
	srv.Handle(func(r *llmtest.Request) llmtest.Turn {
		if isSummaryRequest(r) {
			cs.summaries++
			if summaryStatus != 0 {
				return llmtest.ErrorTurn(summaryStatus, "summary refused")
			}
			return llmtest.TextTurn(summary)
		}
		if strings.Contains(r.LastUserText(), "prompt-too-long") && !strings.HasPrefix(firstText(r), "[Summary of") {
			return llmtest.ErrorTurn(400, "prompt is too long: 250000 tokens > 200000 maximum")
		}
		if stepsSincePrompt(r) < 12 {
			// Each step says what it does, at some length, as models do:
			// the older history is then worth summarising.
			t := llmtest.BashTurn("s"+strconv.Itoa(r.Index), "step "+strconv.Itoa(r.Index))
			t.Text = strings.Repeat("Looking at the output of the previous step. ", 45)
			return t
		}
		return llmtest.TextTurn("finished")
	})
	return cs, srv
}

func firstText(r *llmtest.Request) string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[0].Text
}

// stepsSincePrompt counts the tool results after the last prompt the user typed.
func stepsSincePrompt(r *llmtest.Request) int {
	n := 0
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "user" && m.Text != "" && len(m.ToolResults) == 0 {
			break
		}
		n += len(m.ToolResults)
	}
	return n
}

func wire(t *testing.T, format string, srv *llmtest.Server) llm.Provider {
	p, _ := wireClient(format, srv.URL(), &llm.RetryPolicy{})
	return p
}

// Past the offload threshold, large older results move to files in the
// session's directory and the request carries one line pointing at each;
// the recent results stay whole, the session file matches, and nothing is
// offloaded twice.
func TestOffloadPastThreshold(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			_, srv := newContextServer(t, "unused", 0)
			dir := t.TempDir()
			r, rec := newRunner(t, wire(t, format, srv), bigTool(6000), func(o *Options) {
				o.SessionsDir = dir
				o.Context = contextmgr.Settings{Window: 100_000, OffloadAt: 5_000, CompactAt: 90_000, KeepRecent: 4, OffloadMinChars: 1000}
			})
			if _, err := r.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			last, _ := srv.LastRequest()
			res := last.ToolResults()
			if len(res) < 6 {
				t.Fatalf("only %d results", len(res))
			}
			offloaded := 0
			for i, tr := range res {
				p := contextmgr.PointerFile(tr.Content)
				if p == "" {
					if i < len(res)-2 {
						t.Errorf("older result %d (%s) was not offloaded: %d chars", i, tr.ToolCallID, len(tr.Content))
					}
					continue
				}
				offloaded++
				if filepath.Dir(p) != filepath.Join(dir, r.SessionID(), "offloaded") {
					t.Errorf("offloaded to %s, outside the session's directory", p)
				}
				data, err := os.ReadFile(p)
				if err != nil || !strings.HasPrefix(string(data), "output of step") || len(data) < 6000 {
					t.Errorf("offloaded file %s: %v, %d bytes", p, err, len(data))
				}
			}
			if res[len(res)-1].Content == "" || contextmgr.PointerFile(res[len(res)-1].Content) != "" {
				t.Error("the newest result was offloaded")
			}
			if n := r.ContextStats().Offloaded; n != offloaded {
				t.Errorf("stats say %d offloaded, the request had %d", n, offloaded)
			}
			onDisk := loadSession(t, dir, r.SessionID())
			if contextmgr.Count(onDisk) != offloaded || !contextmgr.ValidPairs(onDisk[1:]) {
				t.Errorf("session file has %d offloaded results, want %d", contextmgr.Count(onDisk), offloaded)
			}
			if len(rec.kinds(ContextNotice)) == 0 {
				t.Error("no notice of the offload")
			}
		})
	}
}

// Past the compaction threshold the older history is summarised by one
// request: the next request starts with the summary, keeps the recent
// messages verbatim with every tool call paired, the session file is the
// new history and an archive holds the old one with offloaded text restored.
func TestCompactionPastThreshold(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			cs, srv := newContextServer(t, "## Technical context\n- the steps ran", 0)
			dir := t.TempDir()
			r, rec := newRunner(t, wire(t, format, srv), bigTool(3000), func(o *Options) {
				o.SessionsDir = dir
				o.Context = contextmgr.Settings{Window: 16_384, OffloadAt: 2_500, CompactAt: 3_000, KeepRecent: 10, OffloadMinChars: 1000, CooldownSteps: 100, MinSaving: 1}
			})
			if _, err := r.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			if cs.summaries != 1 {
				t.Fatalf("%d summary requests, want 1 (the cooldown holds the rest)", cs.summaries)
			}
			// The running turn's prompt stays first and verbatim; the summary
			// of the work on it follows.
			h := r.History()
			if first := srv.Requests()[0].Messages[0].Text; h[0].Text != first ||
				!strings.HasPrefix(h[1].Text, contextmgr.SummaryPrefix+"## Technical context") || !contextmgr.ValidPairs(h[1:]) {
				t.Fatalf("history after compaction starts %q, %q; pairs valid %v", h[0].Text, h[1].Text, contextmgr.ValidPairs(h[1:]))
			}
			var next llmtest.Request
			for _, q := range srv.Requests() {
				if !isSummaryRequest(&q) && len(q.Messages) > 0 && slices.ContainsFunc(q.Messages[0].Texts, func(s string) bool { return strings.HasPrefix(s, "[Summary of") }) ||
					len(q.Messages) > 1 && strings.HasPrefix(q.Messages[1].Text, "[Summary of") {
					next = q
					break
				}
			}
			if next.Messages == nil {
				t.Fatal("no request after the compaction carried the summary")
			}
			if next.Messages[0].Role != "user" {
				t.Errorf("first message role %q", next.Messages[0].Role)
			}
			onDisk := loadSession(t, dir, r.SessionID())
			if len(onDisk) != len(h) || onDisk[0].Text != h[0].Text {
				t.Errorf("session file has %d messages starting %q, memory %d", len(onDisk), onDisk[0].Text, len(h))
			}
			archives, _ := filepath.Glob(filepath.Join(dir, r.SessionID(), "archive-*.jsonl"))
			if len(archives) != 1 {
				t.Fatalf("archives: %v", archives)
			}
			data, _ := os.ReadFile(archives[0])
			if !strings.Contains(string(data), `"text":"go`) && !strings.Contains(string(data), "go") || strings.Contains(string(data), contextmgr.OffloadPrefix) {
				t.Error("the archive lacks the original prompt or still has offload pointers instead of the text")
			}
			if n := len(rec.kinds(ContextNotice)); n == 0 {
				t.Error("no notice of the compaction")
			}
		})
	}
}

// A summary request that fails leaves the history (memory and disk) as it
// was, with one warning, and the run goes on.
func TestFailedSummaryLeavesHistory(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			cs, srv := newContextServer(t, "", 400)
			dir := t.TempDir()
			r, rec := newRunner(t, wire(t, format, srv), bigTool(500), func(o *Options) {
				o.SessionsDir = dir
				o.Context = contextmgr.Settings{Window: 16_384, OffloadAt: 2_000, CompactAt: 2_500, KeepRecent: 4, OffloadMinChars: 10_000, CooldownSteps: 4, MinSaving: 1}
			})
			res, err := r.Run(context.Background(), "go")
			if err != nil || res.Text != "finished" {
				t.Fatalf("run = %+v, %v", res, err)
			}
			if cs.summaries < 2 || cs.summaries > 4 {
				t.Errorf("%d summary attempts over 13 requests with a cooldown of 4", cs.summaries)
			}
			h := r.History()
			if strings.HasPrefix(h[0].Text, "[Summary") || len(h) != 1+12*2+1 || !contextmgr.ValidPairs(h[1:]) {
				t.Errorf("history changed: %d messages, first %q", len(h), h[0].Text)
			}
			if d := loadSession(t, dir, r.SessionID()); len(d) != len(h) {
				t.Errorf("session file %d messages, memory %d", len(d), len(h))
			}
			warns := rec.kinds(Warning)
			if len(warns) != cs.summaries || !strings.Contains(warns[0].Err.Error(), "history is unchanged") {
				t.Errorf("warnings = %v, want one per failed attempt saying the history is unchanged", warns)
			}
		})
	}
}

// The provider's "prompt too long" is answered with one compaction and one
// retry, not a failed run.
func TestPromptTooLongCompactsAndRetries(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			cs, srv := newContextServer(t, "## Current state\n- twelve steps ran", 0)
			r, _ := newRunner(t, wire(t, format, srv), bigTool(200), func(o *Options) {
				o.Context = contextmgr.Settings{KeepRecent: 2}
			})
			if _, err := r.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			res, err := r.Run(context.Background(), "prompt-too-long please")
			if err != nil || res.Text != "finished" {
				t.Fatalf("run = %+v, %v", res, err)
			}
			if cs.summaries != 1 {
				t.Errorf("%d summaries, want 1", cs.summaries)
			}
			h := r.History()
			kept := slices.ContainsFunc(h, func(m llm.Message) bool { return strings.Contains(m.Text, "prompt-too-long please") })
			if !strings.HasPrefix(h[0].Text, contextmgr.SummaryPrefix) || !kept || !contextmgr.ValidPairs(h) {
				t.Errorf("history after the retry: first %q", h[0].Text)
			}
		})
	}
}

// /compact's entry point: instructions reach the summary request; a
// history too short to compact says so.
func TestCompactNowWithInstructions(t *testing.T) {
	cs, srv := newContextServer(t, "## Pending tasks\n- none", 0)
	r, _ := newRunner(t, wire(t, llmtest.FormatAnthropic, srv), bigTool(2000), func(o *Options) {
		o.SessionsDir = t.TempDir()
		o.Context = contextmgr.Settings{KeepRecent: 2}
		o.CompactModel = "claude-3-5-haiku-latest"
	})
	if r.ContextStats().Compactable {
		t.Error("an empty history is compactable")
	}
	if _, err := r.Compact(context.Background(), ""); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("compacting an empty history: %v", err)
	}
	if _, err := r.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if !r.ContextStats().Compactable {
		t.Error("ContextStats says there is nothing to compact, Compact disagrees")
	}
	res, err := r.Compact(context.Background(), "keep every file name")
	if err != nil {
		t.Fatal(err)
	}
	if res.After >= res.Before || res.Summarised == 0 || res.Archive == "" || cs.summaries != 1 {
		t.Errorf("result %+v, %d summaries", res, cs.summaries)
	}
	last, _ := srv.LastRequest()
	if !strings.Contains(last.LastUserText(), "keep every file name") {
		t.Error("the instructions did not reach the summary request")
	}
	if last.Model != "claude-3-5-haiku-latest" {
		t.Errorf("summary written by %q, want the compaction model", last.Model)
	}
}

// Retention keeps the newest MaxSessions sessions, the new one included,
// and removes the others with their own files.
func TestRetentionKeepsNewestSessions(t *testing.T) {
	dir := t.TempDir()
	store := session.NewStore(dir, nil, nil)
	var ids []string
	for i := 0; i < 5; i++ {
		s := store.Create(t.TempDir())
		if err := s.Append(llm.Message{Role: llm.RoleUser, Text: "old " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(s.OffloadDir()), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID())
	}
	p := newProvider(t, llmtest.FormatAnthropic, llmtest.TextTurn("hi"))
	r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = dir; o.MaxSessions = 3 })
	if _, err := r.Run(context.Background(), "new"); err != nil {
		t.Fatal(err)
	}
	list, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]bool{}
	for _, e := range list {
		kept[e.ID] = true
	}
	if len(list) != 3 || !kept[r.SessionID()] {
		t.Fatalf("kept %v, want 3 with the current %s", kept, r.SessionID())
	}
	for _, id := range ids {
		_, errDir := os.Stat(store.FilesDir(id))
		if kept[id] == os.IsNotExist(errDir) {
			t.Errorf("session %s kept=%v but its files dir exists=%v", id, kept[id], errDir == nil)
		}
	}
}

// Offload records its moves by appending to the session file; when the
// file's messages are not the history (a resume repaired an unfinished
// step), the file is rewritten once instead, so that what a later resume
// reads is the history as it was, offloaded results included.
func TestOffloadKeepsTheSessionFileInStep(t *testing.T) {
	for _, repaired := range []bool{false, true} {
		t.Run(fmt.Sprintf("repaired=%v", repaired), func(t *testing.T) {
			_, srv := newContextServer(t, "unused", 0)
			dir := t.TempDir()
			if repaired {
				ss := session.NewStore(dir, nil, nil).Create(t.TempDir())
				dangling := llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "lost", Name: "Bash", Input: json.RawMessage(`{"command":"x"}`)}}}
				if err := ss.Append(llm.Message{Role: llm.RoleUser, Text: "before"}, dangling); err != nil {
					t.Fatal(err)
				}
				if err := ss.Close(); err != nil {
					t.Fatal(err)
				}
			}
			r, _ := newRunner(t, wire(t, llmtest.FormatAnthropic, srv), bigTool(6000), func(o *Options) {
				o.SessionsDir = dir
				if repaired {
					o.ResumeID = "latest"
				}
				o.Context = contextmgr.Settings{Window: 100_000, OffloadAt: 5_000, CompactAt: 90_000, KeepRecent: 4, OffloadMinChars: 1000}
			})
			if _, err := r.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			h, onDisk := r.History(), loadSession(t, dir, r.SessionID())
			if contextmgr.Count(h) == 0 {
				t.Fatal("nothing was offloaded")
			}
			if len(onDisk) != len(h) {
				t.Fatalf("the session file holds %d messages, the history %d", len(onDisk), len(h))
			}
			for i := range h {
				if onDisk[i].Text != h[i].Text || onDisk[i].ToolCallID != h[i].ToolCallID {
					t.Errorf("message %d on disk %.60q, in the history %.60q", i, onDisk[i].Text, h[i].Text)
				}
			}
		})
	}
}
