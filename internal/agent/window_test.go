package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// The user's words, with what a careless rewrite would change: leading and
// trailing spaces, tabs, typographic quotes, a blank line.
const verbatimPrompt = "  Fix the build of ./cmd/app:\n\t• keep “quotes” and the API as it is  \n\nthen run the tests  "

// listingTool answers each command with a listing whose size the command
// names ("list 30000"), as a build log or a grep over a tree would.
func listingTool() *testTool {
	return newTestTool(func(_ context.Context, cmd string) tool.Result {
		n, _ := strconv.Atoi(strings.TrimPrefix(cmd, "list "))
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%s: pkg/module%03d/file_%d.go:%d: some finding worth reading\n", cmd, i%97, i, i*7)
		}
		return tool.Result{Output: b.String()}
	})
}

// windowServer plays a model working through steps tool steps, then
// answering "finished"; the step sizes come from size(step). Summary
// requests get a summary of a realistic length. It refuses any request over
// limit tokens, as a real server does.
type windowServer struct {
	srv *llmtest.Server

	mu        sync.Mutex
	steps     int
	summaries []llmtest.Request
}

func newWindowServer(t *testing.T, limit, steps int, size func(step int) []int) *windowServer {
	ws := &windowServer{srv: llmtest.New(t)}
	ws.srv.LimitTokens(limit)
	ws.srv.Handle(func(r *llmtest.Request) llmtest.Turn {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if isSummaryRequest(r) {
			ws.summaries = append(ws.summaries, *r)
			return llmtest.TextTurn("## Current state\n" + strings.Repeat("- a listing ran and its findings were noted\n", 60))
		}
		if ws.steps >= steps {
			return llmtest.TextTurn("finished")
		}
		ws.steps++
		var cmds []string
		for _, n := range size(ws.steps) {
			cmds = append(cmds, "list "+strconv.Itoa(n))
		}
		turn := llmtest.BashTurn("s"+strconv.Itoa(ws.steps), cmds...)
		turn.Text = "Step " + strconv.Itoa(ws.steps) + ": reading the next part of the output to find what breaks the build."
		return turn
	})
	return ws
}

// promptKept fails the test unless every conversation request carries the
// prompt message of the first one, byte for byte, as one text block.
func promptKept(t *testing.T, srv *llmtest.Server) {
	t.Helper()
	var want string
	for _, q := range srv.Requests() {
		if isSummaryRequest(&q) {
			continue
		}
		var texts []string
		for _, m := range q.Messages {
			if m.Role == "user" {
				texts = append(texts, m.Texts...)
			}
		}
		if want == "" {
			i := slices.IndexFunc(texts, func(s string) bool { return strings.Contains(s, "Fix the build") })
			if i < 0 {
				t.Fatal("the first request lacks the prompt")
			}
			want = texts[i]
			if !strings.Contains(want, verbatimPrompt) {
				t.Fatalf("the first request's prompt %q does not hold the user's words", want)
			}
			continue
		}
		if !slices.Contains(texts, want) {
			t.Fatalf("request #%d does not carry the prompt verbatim", q.Index)
		}
	}
}

// Issue 27: a 300-step task on a 32k-token window whose tool outputs are
// large, four in a row of 30 KB every so often, against a server that
// refuses any request over the window as a real one does. No request is
// refused, the user's prompt stays byte-identical in every request through
// the compactions, and the summariser reads what offloaded results said.
func TestLongSessionFits32kWindow(t *testing.T) {
	size := func(step int) []int {
		switch {
		case step%40 >= 36: // the newest messages alone are past every threshold
			return []int{30_000}
		case step%10 == 5:
			return []int{6_000, 9_000}
		default:
			return []int{2_000 + step%7*1_000}
		}
	}
	ws := newWindowServer(t, 32_000, 300, size)
	dir := t.TempDir()
	r, rec := newRunner(t, wire(t, llmtest.FormatOpenAI, ws.srv), listingTool(), func(o *Options) {
		o.SessionsDir = dir
		o.MaxTurns = 400
		o.Context = contextmgr.Settings{Window: 32_000}
	})
	res, err := r.Run(context.Background(), verbatimPrompt)
	if err != nil || res.Text != "finished" {
		t.Fatalf("run = %q, %v (refused requests %v)", res.Text, err, ws.srv.Refused())
	}
	if refused := ws.srv.Refused(); len(refused) > 0 {
		t.Fatalf("requests %v were over the window", refused)
	}
	promptKept(t, ws.srv)
	if len(ws.summaries) < 2 {
		t.Errorf("%d compactions over 300 steps, want several", len(ws.summaries))
	}
	read := false
	for _, q := range ws.summaries {
		read = read || strings.Contains(q.LastUserText(), "(offloaded to ") && strings.Contains(q.LastUserText(), "some finding worth reading")
	}
	if !read {
		t.Error("no summary request read an offloaded result's text")
	}
	cut := false
	for _, e := range rec.kinds(ContextNotice) {
		cut = cut || strings.Contains(e.Text, "cut to their start and end")
	}
	if !cut {
		t.Error("the newest large results were never cut")
	}
	// The session file holds the history as it is: resuming gives the
	// model what it had, cuts and offloads included.
	h, onDisk := r.History(), loadSession(t, dir, r.SessionID())
	if len(onDisk) != len(h) {
		t.Fatalf("the session file holds %d messages, the history %d", len(onDisk), len(h))
	}
	for i := range h {
		if onDisk[i].Text != h[i].Text {
			t.Errorf("message %d on disk %.60q, in the history %.60q", i, onDisk[i].Text, h[i].Text)
		}
	}
}

// Many compactions in one turn, on both wire formats: the prompt stays
// byte-identical in every request, first in the history, with the summary
// of the work on it after it.
func TestPromptVerbatimThroughCompactions(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			ws := newWindowServer(t, 16_384, 40, func(int) []int { return []int{4_000} })
			r, _ := newRunner(t, wire(t, format, ws.srv), listingTool(), func(o *Options) {
				o.Context = contextmgr.Settings{Window: 16_384, CompactAt: 6_000, OffloadAt: 5_000, MinSaving: 1, CooldownSteps: 1, KeepRecent: 4}
			})
			if _, err := r.Run(context.Background(), verbatimPrompt); err != nil {
				t.Fatal(err)
			}
			if len(ws.summaries) < 3 {
				t.Fatalf("%d compactions, want at least 3", len(ws.summaries))
			}
			promptKept(t, ws.srv)
			if h := r.History(); !strings.Contains(h[0].Text, verbatimPrompt) || !strings.HasPrefix(h[1].Text, contextmgr.SummaryPrefix) {
				t.Errorf("history starts %q, %q", h[0].Text, h[1].Text)
			}
		})
	}
}

// A request that cannot fit (the prompt alone is larger than the window)
// is not sent: the run stops and says what to do.
func TestRequestThatCannotFitIsNotSent(t *testing.T) {
	ws := newWindowServer(t, 16_384, 1, func(int) []int { return []int{100} })
	r, rec := newRunner(t, wire(t, llmtest.FormatOpenAI, ws.srv), listingTool(), func(o *Options) {
		o.Context = contextmgr.Settings{Window: 16_384}
	})
	res, err := r.Run(context.Background(), strings.Repeat("a pasted log line\n", 4000))
	var full *ContextFullError
	if !errors.As(err, &full) || res.StopReason != StopContextFull {
		t.Fatalf("run = %+v, %v; want a ContextFullError", res, err)
	}
	for _, want := range []string{"not sent", "/compact", "/clear", "SYNAPSE_MAX_CONTEXT_WINDOW"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if ws.srv.Count() != 0 || len(rec.kinds(Error)) != 1 {
		t.Errorf("%d requests sent, %d error events", ws.srv.Count(), len(rec.kinds(Error)))
	}
	if h := r.History(); len(h) != 1 || h[0].Role != llm.RoleUser {
		t.Errorf("history %+v", h)
	}
}

// The case: a short history, then four large outputs in a row.
// Summarising would save next to nothing (and only the user's own request
// is older than the newest messages), so no compaction is made: the newest
// results are cut instead, and every request fits.
func TestLittleToSaveIsNotCompacted(t *testing.T) {
	ws := newWindowServer(t, 32_000, 7, func(step int) []int {
		if step > 3 {
			return []int{30_000}
		}
		return []int{500}
	})
	r, _ := newRunner(t, wire(t, llmtest.FormatOpenAI, ws.srv), listingTool(), func(o *Options) {
		o.SessionsDir = t.TempDir()
		o.Context = contextmgr.Settings{Window: 32_000}
	})
	if _, err := r.Run(context.Background(), verbatimPrompt); err != nil {
		t.Fatal(err)
	}
	if len(ws.summaries) != 0 || len(ws.srv.Refused()) != 0 {
		t.Fatalf("%d summary requests, refused %v; want none", len(ws.summaries), ws.srv.Refused())
	}
	if n := r.ContextStats().Offloaded; n == 0 {
		t.Error("no result was cut or offloaded")
	}
	promptKept(t, ws.srv)
	last, _ := ws.srv.LastRequest()
	if tr := last.LastToolResults(); len(tr) != 1 || !strings.Contains(tr[0].Content, "list 30000: pkg/module000/file_0.go") {
		t.Errorf("the newest result lost its start: %+v", tr)
	}
}
