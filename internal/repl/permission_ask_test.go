package repl

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// askRequest is what the tool hands the gate for cmd run in /work, with
// the real classifier and /tmp as the scratch list.
func askRequest(cmd string) tool.RunRequest {
	chk := writecheck.Checker{Scratch: []string{"/tmp"}}
	return tool.RunRequest{Route: router.Classify(cmd), Command: cmd,
		Asks: func() []writecheck.Reason { return chk.Check(cmd, "/work") }}
}

// TestPTYAskModeRemembersTheAskingWord: "always" on `cd x && rm y`
// remembers rm (the part that asked), not cd; a later rm runs without a
// question, a command with another asking word is asked again, and one
// mixing an allowed word with a new one asks and names both.
func TestPTYAskModeRemembersTheAskingWord(t *testing.T) {
	type outcome struct {
		ok   bool
		note string
	}
	results := make(chan outcome, 8)
	fa := &fakeAgent{}
	p := startPTY(t, fa, func(o *Options) { o.Mode = tool.ModeAsk })
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		ok, note := p.repl.perm.BeforeRun(ctx, askRequest(input))
		results <- outcome{ok, note}
		return agent.Result{}, nil
	}

	p.send("cd x && rm y\r")
	p.waitFor("[2] always for `rm` this session")
	if out := p.out.String(); !strings.Contains(out, "why: `rm` writes y") || strings.Contains(out, "always for `cd`") {
		t.Fatalf("the question does not say why or offers cd:\n%s", out)
	}
	p.send("2")
	if r := <-results; !r.ok {
		t.Fatalf("always was answered, yet refused: %q", r.note)
	}
	p.waitFor("→ always for `rm`")
	p.waitFor("› ", 2)

	p.send("rm -rf build\r")
	if r := <-results; !r.ok {
		t.Fatalf("rm after always for rm: refused %q", r.note)
	}
	p.waitFor("› ", 3)
	if n := strings.Count(p.out.String(), "Run this command?"); n != 1 {
		t.Fatalf("rm was asked again (%d questions)", n)
	}

	p.send("cd x && touch y\r")
	p.waitFor("always for `touch` this session")
	p.send("3")
	if r := <-results; r.ok || !strings.Contains(r.note, "declined") {
		t.Fatalf("deny: %+v", r)
	}
	p.waitFor("› ", 4)

	p.send("rm a && touch b\r")
	p.waitFor("always for `rm`, `touch` this session")
	p.send("1")
	if r := <-results; !r.ok {
		t.Fatalf("once: refused %q", r.note)
	}
	p.waitFor("› ", 5)

	p.send("echo done > /tmp/log\r") // scratch: no question
	if r := <-results; !r.ok {
		t.Fatalf("a scratch write was refused: %q", r.note)
	}
	p.waitFor("› ", 6)
	if n := strings.Count(p.out.String(), "Run this command?"); n != 3 {
		t.Fatalf("%d questions, want 3", n)
	}
	p.send("/sandbox\r")
	p.waitFor("command rm (always this session)")
}

// TestPTYTypingOnDoesNotAnswer: text typed on while a question is open
// (the user has not looked up) answers nothing — not the ask mode's
// "always" by an a, not the sandbox's "permanently" by a p — and stays
// type-ahead, sent as the next prompt; only a digit (or Esc) answers.
func TestPTYTypingOnDoesNotAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, typed, question, answer, said string
		ask                                 func(p *ptyREPL, ctx context.Context) string
	}{
		{"ask mode", "please also add a test", "[2] always for `rm` this session", "1", "→ once",
			func(p *ptyREPL, ctx context.Context) string {
				ok, _ := p.repl.perm.BeforeRun(ctx, askRequest("rm -r dd1"))
				return fmt.Sprint(ok)
			}},
		{"sandbox grant", "please", "[3] permanently (sandbox.json)", "4", "→ deny",
			func(p *ptyREPL, ctx context.Context) string {
				d := p.repl.perm.Approve(ctx, tool.ApprovalRequest{Command: "touch /opt/x", Resource: "/opt/x", Reason: "write outside the workspace"})
				return d.String()
			}},
		{"clone", "yes sure", "[2] no  (Esc)", "2", "→ no",
			func(p *ptyREPL, ctx context.Context) string {
				return fmt.Sprint(p.repl.perm.Confirm(ctx, tool.Question{Kind: tool.AskClone, URL: "x"}))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decided := make(chan string, 1)
			fa := &fakeAgent{}
			p := startPTY(t, fa, func(o *Options) { o.Mode = tool.ModeAsk })
			fa.run = func(ctx context.Context, input string) (agent.Result, error) {
				if input == "go" {
					decided <- tc.ask(p, ctx)
				}
				return agent.Result{}, nil
			}
			p.send("go\r")
			p.waitFor(tc.question)
			p.send(tc.typed)
			p.waitScreen("the typed text queued; Esc is the question's", func(s *screen) bool {
				return strings.Contains(strings.Join(s.lines(), "\n"), "queued › "+tc.typed+"▏  (Enter queues it; Esc clears)")
			})
			select {
			case d := <-decided:
				t.Fatalf("typing on answered the question: %s", d)
			default:
			}
			p.send("\r" + tc.answer)
			d := <-decided
			p.waitFor(tc.said)
			if got := fa.waitInputs(t, 2); len(got) != 2 || got[1] != tc.typed {
				t.Fatalf("turns %q (decision %s), want the typed text sent next", got, d)
			}
		})
	}
}

// TestPTYDigitBeforeQuestionThenEsc: a digit typed just before a question
// opens is type-ahead (it answers nothing it was not typed at), and the Esc
// that clears it must not deny the question; Esc on nothing queued denies,
// Enter on nothing typed takes the marked default.
func TestPTYDigitBeforeQuestionThenEsc(t *testing.T) {
	for _, tc := range []struct {
		name, keys, want string
	}{
		{"Esc clears, then a digit answers", "\x1b" + "3", "permanent"},
		{"Esc clears, a second Esc denies", "\x1b" + "\x1b", "deny"},
		{"Esc clears, Enter takes the default", "\x1b" + "\r", "once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready := make(chan struct{})
			decided := make(chan string, 1)
			fa := &fakeAgent{}
			p := startPTY(t, fa, nil)
			fa.run = func(ctx context.Context, input string) (agent.Result, error) {
				if input == "go" {
					<-ready
					d := p.repl.perm.Approve(ctx, tool.ApprovalRequest{Command: "touch /opt/x", Resource: "/opt/x", Reason: "write outside the workspace"})
					decided <- d.String()
				}
				return agent.Result{}, nil
			}
			p.send("go\r")
			p.waitFor("Working…")
			p.send("1")
			p.waitScreen("the digit queued", func(s *screen) bool {
				return strings.Contains(strings.Join(s.lines(), "\n"), "queued › 1▏")
			})
			close(ready)
			p.waitFor("[4] deny")
			p.send(tc.keys[:1])
			p.waitScreen("the queue cleared, the question still open", func(s *screen) bool {
				all := strings.Join(s.lines(), "\n")
				return !strings.Contains(all, "queued ›") && strings.Contains(all, "Waiting for your answer")
			})
			select {
			case d := <-decided:
				t.Fatalf("the Esc that cleared the queued digit answered the question: %s", d)
			default:
			}
			p.send(tc.keys[1:])
			if d := <-decided; d != tc.want {
				t.Fatalf("decision %s, want %s", d, tc.want)
			}
		})
	}
}
