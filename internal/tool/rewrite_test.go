package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// rewritingAsker is a Rewriter (the Agent SDK host's canUseTool): it
// answers each question with the next of edits (the command to run
// instead; "" allows the command as asked), the last one repeating.
type rewritingAsker struct {
	edits []string
	asked []Question
	onAsk func()
}

func (a *rewritingAsker) Ask(ctx context.Context, q Question) Answer {
	ans, in := a.AskRewrite(ctx, q)
	if in != nil {
		return AnswerDeny
	}
	return ans
}

func (a *rewritingAsker) AskRewrite(_ context.Context, q Question) (Answer, *Input) {
	a.asked = append(a.asked, q)
	if a.onAsk != nil {
		a.onAsk()
	}
	e := a.edits[min(len(a.asked), len(a.edits))-1]
	if e == "" {
		return AnswerOnce, nil
	}
	return AnswerOnce, &Input{Command: e}
}

// rewriteTool is the tool over a fake shell whose every command succeeds,
// gated in mode by a gate asking a.
func rewriteTool(a Asker, mode Mode, allow, deny []string) (*Bash, *fakeExec, *Permissions) {
	ex := &fakeExec{cwd: "/w", answer: func(cmd string) command.Result { return command.OK("ran: " + cmd + "\n") }}
	p := NewPermissions(a, mode, "/w")
	al, _ := ParseRules(allow)
	de, _ := ParseRules(deny)
	p.SetRules(al, de)
	return New(Options{Exec: ex, Approver: p}), ex, p
}

func execCmds(ex *fakeExec) []string {
	var out []string
	for _, c := range ex.Calls() {
		out = append(out, c.cmd)
	}
	return out
}

// An ask-mode question answered with another command runs that command
// instead (the model is told), after the new command was asked about in
// turn — naming the call's original command.
func TestGateRewriteRunsNewCommand(t *testing.T) {
	a := &rewritingAsker{edits: []string{"touch b", ""}}
	b, ex, _ := rewriteTool(a, ModeAsk, nil, nil)
	r := b.Run(context.Background(), Input{Command: "touch a"})
	if got := execCmds(ex); len(got) != 1 || got[0] != "touch b" {
		t.Fatalf("ran %q, want only the changed command", got)
	}
	mustContain(t, "output", r.Output, "[The user changed the command to: touch b]")
	mustContain(t, "output", r.Output, "ran: touch b")
	if r.IsError || len(a.asked) != 2 || a.asked[1].Command != "touch b" || a.asked[1].Original != "touch a" || a.asked[0].Original != "" {
		t.Errorf("result %+v, asked %+v", r, a.asked)
	}

	// A change to a command that does not ask runs without a second question.
	a = &rewritingAsker{edits: []string{"echo changed"}}
	b, ex, _ = rewriteTool(a, ModeAsk, nil, nil)
	r = b.Run(context.Background(), Input{Command: "touch a"})
	if got := execCmds(ex); len(got) != 1 || got[0] != "echo changed" || len(a.asked) != 1 {
		t.Errorf("ran %q, asked %d", got, len(a.asked))
	}
	mustContain(t, "output", r.Output, "changed the command to: echo changed")
}

// The changed command is checked by the gate again: a rule of
// --disallowedTools refuses it, and plan mode's refusals hold.
func TestGateRewriteChecked(t *testing.T) {
	a := &rewritingAsker{edits: []string{"rm -rf x"}}
	b, ex, _ := rewriteTool(a, ModeAsk, nil, []string{"Bash(rm:*)"})
	r := b.Run(context.Background(), Input{Command: "touch a"})
	if got := execCmds(ex); len(got) != 0 {
		t.Fatalf("ran %q", got)
	}
	mustContain(t, "output", r.Output, "changed the command to: rm -rf x")
	mustContain(t, "output", r.Output, "Bash(rm:*)")
	if !r.IsError {
		t.Errorf("not an error: %+v", r)
	}

	// A sandbox grant answered with a sub-agent call while the host
	// switched to plan mode: the change is checked in the mode of the
	// moment, and plan mode refuses it.
	px := newPolicyExec("/x")
	a = &rewritingAsker{edits: []string{`task:general "do it"`}}
	p := NewPermissions(a, ModeDefault, "/w")
	p.SetSwitch(func(Mode) error { return nil })
	a.onAsk = func() { _ = p.SetMode(ModePlan) }
	b = New(Options{Exec: px, Approver: p})
	r = b.Run(context.Background(), Input{Command: "touch /x"})
	if len(px.Calls()) != 1 || len(px.log) != 0 || len(a.asked) != 1 || a.asked[0].Kind != AskGrant {
		t.Fatalf("calls %v, grants %v, asked %+v", px.Calls(), px.log, a.asked)
	}
	mustContain(t, "output", r.Output, "changed the command to: task:general")
	mustContain(t, "output", r.Output, PlanModeNote)
}

// A host that keeps changing the command gets MaxRewrites changes; the
// next is refused with a note that says so, and nothing more runs.
func TestGateRewriteLoopBound(t *testing.T) {
	a := &rewritingAsker{edits: []string{"touch b1", "touch b2", "touch b3", "touch b4", "touch b5"}}
	b, ex, _ := rewriteTool(a, ModeAsk, nil, nil)
	r := b.Run(context.Background(), Input{Command: "touch a"})
	if got := execCmds(ex); len(got) != 0 {
		t.Fatalf("ran %q", got)
	}
	if len(a.asked) != MaxRewrites+1 {
		t.Errorf("asked %d times, want %d", len(a.asked), MaxRewrites+1)
	}
	mustContain(t, "output", r.Output, RewriteLimitNote(MaxRewrites+1, "touch b4"))
	if strings.Count(r.Output, "changed the command to") != MaxRewrites {
		t.Errorf("output %q", r.Output)
	}

	// Without a Rewrite (a caller that cannot run another command) a
	// change is refused.
	a = &rewritingAsker{edits: []string{"touch b"}}
	p := NewPermissions(a, ModeAsk, "/w")
	ok, note := p.BeforeRun(context.Background(), runRequest("touch a"))
	if ok || note != RewriteRefusedNote {
		t.Errorf("ok %v note %q", ok, note)
	}
}
