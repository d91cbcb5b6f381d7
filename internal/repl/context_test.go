package repl

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

// bigOutputTool answers every command with a few thousand characters.
type bigOutputTool struct{}

func (bigOutputTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Bash", Description: "run", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (bigOutputTool) Call(context.Context, json.RawMessage) tool.Result {
	return tool.Result{Output: strings.Repeat("a line of output\n", 300)}
}

// /context shows the estimate against the window, both thresholds, the
// counts and a bar; /compact summarises through the real runner and prints
// before → after and the offload files removed.
func TestContextAndCompactCommands(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Turn {
		if strings.HasPrefix(r.System, "You summarise") {
			if !strings.Contains(r.LastUserText(), "mention the tests") {
				return llmtest.ErrorTurn(400, "instructions missing")
			}
			return llmtest.TextTurn("## Current state\n- six steps ran")
		}
		if len(r.ToolResults()) < 6 {
			return llmtest.BashTurn("c"+strconv.Itoa(r.Index), "step")
		}
		return llmtest.TextTurn("all done")
	})
	dir := t.TempDir()
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	v := view.New(rd)
	runner, err := agent.New(agent.Options{OnEvent: v.Handle,
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL()}), Model: "claude-sonnet-4-5",
		Tool: bigOutputTool{}, Cwd: dir, SessionsDir: dir, DisableSkillSearchInstruction: true,
		Context: contextmgr.Settings{Window: 50_000, OffloadAt: 4_000, CompactAt: 40_000, KeepRecent: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	o := Options{In: strings.NewReader("do it\n/context\n/compact mention the tests\n/context\n"), Out: &out, Renderer: rd,
		View: v, Agent: runner, Version: "test", Cwd: dir}
	if code := newREPL(t, o, nil).Run(context.Background()); code != 0 {
		t.Fatalf("exit %d\n%s", code, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"of 50,000 tokens",
		"for claude-sonnet-4-5, estimated for the next request",
		"Thresholds: | offload large older results at 4,000 (8%), ! compact at 40,000 (80%)",
		"Messages: 14 · tool calls: 6 · offloaded results: 4 · compactions: 0",
		"Offloaded results are in " + dir,
		"context past 4000 tokens: large older tool results are moved to " + dir,
		"Compacted: ",
		"(11 messages summarised); offload files removed: 4",
		"The history before compaction is kept in " + dir,
		"Messages: 4 · tool calls: 1 · offloaded results: 0 · compactions: 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`\[█+░*\|░*!░*\]`).MatchString(got) {
		t.Errorf("no bar with the thresholds marked:\n%s", got)
	}
}

// compactAgent is a fake agent whose history is too short to compact.
type compactAgent struct{ *fakeAgent }

func (compactAgent) ContextStats() agent.ContextStats { return agent.ContextStats{Window: 1000} }
func (compactAgent) Compact(context.Context, string) (agent.CompactResult, error) {
	return agent.CompactResult{}, agent.ErrNothingToCompact
}

// /compact on a short conversation says there is nothing to compact, not
// that compaction failed.
func TestCompactNothingYetIsNotAFailure(t *testing.T) {
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	o := Options{In: strings.NewReader("/compact\n"), Out: &out, Renderer: rd, View: view.New(rd), Agent: compactAgent{&fakeAgent{}}, Version: "test", Cwd: "/work"}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	r.Run(context.Background())
	if got := out.String(); !strings.Contains(got, "Nothing to compact yet") || strings.Contains(got, "failed") || strings.Contains(got, "✗") ||
		strings.Contains(got, "Compacting") || strings.Contains(got, "model request") {
		t.Errorf("/compact on a short conversation:\n%s", got)
	}
}

// slowCompactAgent's compaction runs until it is cancelled.
type slowCompactAgent struct{ *fakeAgent }

func (slowCompactAgent) ContextStats() agent.ContextStats {
	return agent.ContextStats{Window: 1000, Compactable: true}
}
func (slowCompactAgent) Compact(ctx context.Context, _ string) (agent.CompactResult, error) {
	<-ctx.Done()
	return agent.CompactResult{}, ctx.Err()
}

// Ctrl+C (or Esc) cancels a running /compact, which says so; a second
// Ctrl+C pressed during it does not count towards exiting.
func TestPTYCompactIsCancellable(t *testing.T) {
	for _, key := range []string{"\x03\x03", "\x1b"} {
		p := startPTY(t, &fakeAgent{}, func(o *Options) { o.Agent = slowCompactAgent{o.Agent.(*fakeAgent)} })
		p.send("/compact\r")
		p.waitFor("(Ctrl+C cancels)")
		p.send(key)
		p.waitFor("Compaction cancelled; the history is unchanged.")
		p.waitFor("› ", 2)
		select {
		case c := <-p.done:
			t.Fatalf("%q during /compact exited the REPL (status %d)", key, c)
		case <-time.After(200 * time.Millisecond):
		}
		if strings.Contains(p.out.String(), "compaction failed") {
			t.Errorf("a cancelled compaction is reported as a failure:\n%s", p.out.String())
		}
	}
}

// The footer and /context read one source: after a turn and after /compact
// the idle footer shows the context figure /context prints (not dropped
// because no request has been measured since the compaction), and the
// session's cost between turns as well as during one.
func TestFooterAgreesWithContextAfterCompact(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Turn {
		if strings.HasPrefix(r.System, "You summarise") {
			return llmtest.TextTurn("## Current state\n- six steps ran")
		}
		if len(r.ToolResults()) < 6 {
			return llmtest.BashTurn("c"+strconv.Itoa(r.Index), "step")
		}
		return llmtest.TextTurn("all done")
	})
	dir := t.TempDir()
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	v := view.New(rd)
	runner, err := agent.New(agent.Options{OnEvent: v.Handle,
		Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL()}), Model: "claude-sonnet-4-5",
		Tool: bigOutputTool{}, Cwd: dir, SessionsDir: dir, DisableSkillSearchInstruction: true,
		Context: contextmgr.Settings{Window: 50_000, OffloadAt: 40_000, CompactAt: 45_000, KeepRecent: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	pctRe := regexp.MustCompile(`Context: [\d,]+ of [\d,]+ tokens \((\d+)%\)`)
	for _, input := range []string{"do it\n/context\n", "do it\n/compact\n/context\n"} {
		out.Reset()
		o := Options{In: strings.NewReader(input), Out: &out, Renderer: rd, View: v, Agent: runner, Version: "test", Cwd: dir,
			ContextWindow: func(string) int { return 50_000 }}
		r := newREPL(t, o, nil)
		if code := r.Run(context.Background()); code != 0 {
			t.Fatalf("exit %d\n%s", code, out.String())
		}
		all := pctRe.FindAllStringSubmatch(out.String(), -1)
		if len(all) == 0 {
			t.Fatalf("%q: no /context figure:\n%s", input, out.String())
		}
		want := "context " + all[len(all)-1][1] + "%"
		if f := r.idleFooter(); !strings.Contains(f, want) {
			t.Errorf("%q: the footer %q does not say %q as /context does:\n%s", input, f, want, out.String())
		}
	}
}
