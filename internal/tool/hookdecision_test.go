package tool

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// A PreToolUse hook's decision reaches the call through its context: its
// updatedInput runs instead of the model's command (as the first of the
// call's changes), and its "ask" puts the call to the person in any mode
// but plan, where plan still refuses first.
func TestPreDecision(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		d       PreDecision
		edits   []string // the asker's answers (see rewritingAsker); nil: no one to ask
		deny    []string
		ran     []string
		asked   int
		outHas  []string
		isError bool
	}{
		{name: "a changed command runs instead", mode: ModeDefault, d: PreDecision{Command: "echo safer"},
			ran: []string{"echo safer"}, outHas: []string{HookChangeNote("echo safer"), "ran: echo safer"}},
		{name: "the same command is no change", mode: ModeDefault, d: PreDecision{Command: " echo hi "},
			ran: []string{"echo hi"}},
		{name: "a changed command is checked by the rules", mode: ModeDefault, d: PreDecision{Command: "rm -rf x"}, deny: []string{"Bash(rm:*)"},
			ran: nil, outHas: []string{HookChangeNote("rm -rf x")}, isError: true},
		{name: "ask in the default mode asks", mode: ModeDefault, d: PreDecision{Ask: "sure?"}, edits: []string{""},
			ran: []string{"echo hi"}, asked: 1},
		{name: "ask with no one to ask refuses", mode: ModeDefault, d: PreDecision{Ask: "sure?"},
			ran: nil, outHas: []string{HookAskNote("sure?")}, isError: true},
		{name: "ask answered with another command", mode: ModeAcceptEdits, d: PreDecision{Ask: "sure?"}, edits: []string{"echo other", ""},
			ran: []string{"echo other"}, asked: 2, outHas: []string{"changed the command to: echo other"}},
		{name: "plan refuses before asking", mode: ModePlan, d: PreDecision{Ask: "sure?"}, edits: []string{""},
			ran: nil, asked: 0, isError: true},
		{name: "rewrites count: hook plus three host changes", mode: ModeDefault, d: PreDecision{Command: "echo 1", Ask: "sure?"},
			edits: []string{"echo 2", "echo 3", "echo 4"}, ran: nil, asked: 3, outHas: []string{"changed the command 4 times"}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a Asker
			var ra *rewritingAsker
			if tc.edits != nil {
				ra = &rewritingAsker{edits: tc.edits}
				a = ra
			}
			cmd := "echo hi"
			if tc.mode == ModePlan {
				cmd = "task:general -p x -d y" // plan refuses what the read-only sandbox cannot hold
			}
			b, ex, p := rewriteTool(a, tc.mode, nil, tc.deny)
			if tc.mode == ModePlan {
				p.mode = ModePlan
			}
			r := b.Run(WithPreDecision(context.Background(), tc.d), Input{Command: cmd})
			if got := execCmds(ex); fmt.Sprint(got) != fmt.Sprint(tc.ran) && !(len(got) == 0 && len(tc.ran) == 0) {
				t.Errorf("ran %q, want %q", got, tc.ran)
			}
			asked := 0
			if ra != nil {
				asked = len(ra.asked)
				for _, q := range ra.asked {
					if q.Hook != "sure?" {
						t.Errorf("question %+v does not carry the hook's reason", q)
					}
				}
			}
			if asked != tc.asked {
				t.Errorf("asked %d times, want %d", asked, tc.asked)
			}
			for _, w := range tc.outHas {
				if !strings.Contains(r.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, r.Output)
				}
			}
			if r.IsError != tc.isError {
				t.Errorf("is_error %v, want %v: %s", r.IsError, tc.isError, r.Output)
			}
		})
	}
}

// Without a gate (a sub-agent's tool) a hook's "ask" refuses the call:
// nothing can put the question, and it never runs unasked.
func TestHookAskWithoutGateRefuses(t *testing.T) {
	ex := &fakeExec{cwd: "/w", answer: func(cmd string) command.Result { return command.OK("ran\n") }}
	r := New(Options{Exec: ex}).Run(WithPreDecision(context.Background(), PreDecision{Ask: "sure?"}), Input{Command: "echo hi"})
	if !r.IsError || len(ex.Calls()) != 0 || !strings.Contains(r.Output, HookAskNote("sure?")) {
		t.Fatalf("result %+v, ran %q", r, execCmds(ex))
	}
}

// The restricted tool holds a hook's changed command to its exclusions.
func TestRestrictedChecksHookChange(t *testing.T) {
	b, ex, _ := rewriteTool(nil, ModeDefault, nil, nil)
	r := NewRestricted(b, []string{"task:"}).Run(WithPreDecision(context.Background(), PreDecision{Command: "task:general -p x -d y"}), Input{Command: "echo hi"})
	if !r.IsError || len(ex.Calls()) != 0 {
		t.Fatalf("result %+v, ran %q", r, execCmds(ex))
	}
}
