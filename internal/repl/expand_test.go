package repl

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

// On a terminal, a long tool output folded on screen is shown whole after
// Ctrl+O at the prompt, with the prompt drawn again under it; a second
// Ctrl+O says nothing is new instead of printing it again. Ctrl+O during a
// turn switches verbose output: the thinking that follows is shown whole.
func TestPTYCtrlOExpandsAndTogglesVerbose(t *testing.T) {
	var v *view.View
	fa := &fakeAgent{}
	toggled := make(chan struct{})
	var out strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&out, "row %d\n", i)
	}
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		if input == "think" {
			<-toggled
			v.Handle(agent.Event{Kind: agent.ThinkingDelta, Text: "idea one\nidea two\nidea three\nidea four\nidea five\n"})
			v.Handle(agent.Event{Kind: agent.TextDelta, Text: "thought it through"})
			v.Handle(agent.Event{Kind: agent.TurnEnd})
			return agent.Result{}, nil
		}
		v.Handle(agent.Event{Kind: agent.ToolStart, CallID: "c1", Command: "seq-rows 300"})
		v.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "c1", Command: "seq-rows 300", Result: &tool.Result{Output: out.String()}})
		v.Handle(agent.Event{Kind: agent.TextDelta, Text: "listed them"})
		v.Handle(agent.Event{Kind: agent.TurnEnd})
		return agent.Result{}, nil
	}
	p := startPTY(t, fa, func(o *Options) { v = o.View })

	p.send("list\r")
	p.waitFor("listed them")
	p.waitScreen("the folded output and the prompt", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "… 296 more lines") && s.cursorLine() == "›"
	})
	if strings.Contains(p.out.String(), "row 150") {
		t.Fatalf("the output was not folded:\n%s", p.out.String())
	}

	p.send("\x0f")
	p.waitScreen("the whole output, then the prompt", func(s *screen) bool {
		l := s.lines()
		return s.cursorLine() == "›" && s.row >= 3 && l[s.row-1] == "    row 300" && l[s.row-2] == "    row 299"
	})
	got := p.out.String()
	at := strings.Index(got, "folded in the last turn")
	if at < 0 {
		t.Fatalf("no expansion:\n%q", got)
	}
	rest := got[at:]
	for i := 1; i <= 300; i++ {
		j := strings.Index(rest, fmt.Sprintf("    row %d\r\n", i))
		if j < 0 {
			t.Fatalf("row %d is missing (or out of order) after Ctrl+O", i)
		}
		rest = rest[j:]
	}

	p.send("\x0f")
	p.waitScreen("the hint that nothing is new", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "nothing new since the last Ctrl+O")
	})
	if n := strings.Count(p.out.String(), "folded in the last turn"); n != 1 {
		t.Errorf("the parts were printed %d times", n)
	}

	p.send("think\r")
	p.waitFor("Working")
	p.send("\x0f")
	p.waitFor("verbose output on")
	close(toggled)
	p.waitFor("thought it through")
	p.waitScreen("the prompt after the turn", func(s *screen) bool { return s.cursorLine() == "›" })
	got = p.out.String()
	got = got[strings.Index(got, "verbose output on"):]
	for _, idea := range []string{"one", "two", "three", "four", "five"} {
		if !strings.Contains(got, "idea "+idea) {
			t.Errorf("idea %s of the thinking is not shown after Ctrl+O:\n%q", idea, got)
		}
	}
	if strings.Contains(got, "of thinking") {
		t.Errorf("thinking folded in verbose mode:\n%q", got)
	}
}

// After a resume the replay is folded; Ctrl+O before any new turn shows
// the resumed session's last turn whole — each command with its output,
// the whole answer — once, sanitised; after a turn of this session Ctrl+O
// is that turn's.
func TestPTYCtrlOShowsTheResumedTurnWhole(t *testing.T) {
	var out strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&out, "file-%d\n", i)
	}
	long := strings.Repeat("answer line\n", 12) + "the end"
	fa := &fakeAgent{model: "m", sessID: "cur", history: []llm.Message{
		{Role: llm.RoleUser, Text: "older prompt"},
		{Role: llm.RoleAssistant, Text: "older answer"},
		{Role: llm.RoleUser, Text: "list the files"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{bash("1", "ls"), bash("2", "printf '\x1b]2;x\x07'")}},
		{Role: llm.RoleTool, ToolCallID: "1", Text: out.String()},
		{Role: llm.RoleTool, ToolCallID: "2", Text: "title \x1b]2;PWNED\x07 set"},
		{Role: llm.RoleAssistant, Text: long},
	}}
	p := startPTY(t, fa, nil)
	p.waitFor("… (7 more lines)") // the replay folds the answer
	if strings.Contains(p.out.String(), "file-40") {
		t.Fatal("the replay showed the command output")
	}
	p.send("\x0f")
	p.waitScreen("the last turn whole, then the prompt", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return s.cursorLine() == "›" && strings.Contains(text, "    file-40\n  ▸ printf ''\n    title  set\nanswer line\n") &&
			strings.Contains(text, "the end\n──")
	})
	if raw := p.out.String(); !strings.Contains(raw, "── the last turn of the resumed session, whole ──\r\n› list the files\r\n  ▸ ls\r\n    file-1\r\n") {
		t.Errorf("the turn's head is missing:\n%q", raw)
	}
	if strings.Contains(p.out.String(), "older answer\n──") || strings.Contains(p.out.String(), "PWNED\x07") {
		t.Errorf("too much, or a raw escape:\n%q", p.out.String())
	}
	p.send("\x0f") // once
	p.waitScreen("the note for a second Ctrl+O", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "no turn has run")
	})
	if n := strings.Count(p.out.String(), "the last turn of the resumed session"); n != 1 {
		t.Errorf("shown %d times", n)
	}
}
