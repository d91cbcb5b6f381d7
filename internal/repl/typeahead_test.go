package repl

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
)

// Keys typed during a turn: lines queue, Esc clears a queue or (empty)
// cancels, /exit cancels and asks to leave, arrow keys and pastes are
// handled as keys, not text.
func TestTurnWatchFeed(t *testing.T) {
	tests := []struct {
		name    string
		reads   []string
		want    Queue
		cancels int
	}{
		{"a line queues", []string{"next one\r"}, Queue{Prompts: []string{"next one"}}, 0},
		{"two lines queue in order", []string{"a\rb\r"}, Queue{Prompts: []string{"a", "b"}}, 0},
		{"an unfinished line is partial", []string{"half"}, Queue{Partial: "half"}, 0},
		{"backspace edits", []string{"abx\x7fc"}, Queue{Partial: "abc"}, 0},
		{"Esc on an empty queue cancels", []string{"\x1b", flushed}, Queue{}, 1},
		{"Esc clears a queue without cancelling", []string{"abc", "\x1b", flushed}, Queue{}, 0},
		{"Esc twice: clears, then cancels", []string{"abc", "\x1b", flushed, "\x1b", flushed}, Queue{}, 1},
		{"arrow keys are not text nor Esc", []string{"a\x1b[Ab\x1bOB"}, Queue{Partial: "ab"}, 0},
		{"Ctrl+C cancels and keeps the queue", []string{"keep\r\x03"}, Queue{Prompts: []string{"keep"}}, 1},
		{"/exit cancels and exits", []string{"/EXIT\r"}, Queue{Exit: true}, 1},
		{"/q too", []string{"/q\r"}, Queue{Exit: true}, 1},
		{"a paste keeps its newlines", []string{"\x1b[200~one\rtwo\x1b[201~\r"}, Queue{Prompts: []string{"one\ntwo"}}, 0},
		{"Alt+Enter is a newline", []string{"one\x1b\rtwo"}, Queue{Partial: "one\ntwo"}, 0},
		{"blank lines are dropped", []string{"  \r"}, Queue{}, 0},
		{"Shift+Enter (CSI u) is a newline", []string{"one\x1b[13;2utwo"}, Queue{Partial: "one\ntwo"}, 0},
		{"Esc in the kitty protocol cancels", []string{"\x1b[27u"}, Queue{}, 1},
		{"Ctrl+C in the kitty protocol cancels", []string{"x\x1b[99;5u"}, Queue{Partial: "x"}, 1},
		{"a sequence cut between reads", []string{"a\x1b[13;", "2ub"}, Queue{Partial: "a\nb"}, 0},
		{"a paste cut between reads", []string{"\x1b[200~one\r", "two\x1b[20", "1~\r"}, Queue{Prompts: []string{"one\ntwo"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cancels := 0
			w := &turnWatch{cancel: func() { cancels++ }}
			var d decoder
			for _, r := range tt.reads {
				if r == flushed { // the pump's delay after a lone Esc passed
					w.feed(d.flush())
					continue
				}
				w.feed(d.decode([]byte(r)))
			}
			if got := w.Queue(); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
				t.Errorf("queue %#v, want %#v", got, tt.want)
			}
			if cancels != tt.cancels {
				t.Errorf("%d cancels, want %d", cancels, tt.cancels)
			}
		})
	}
}

// An unfinished line typed behind queued prompts waits with them: the next
// turn's footer shows it (and Esc could clear it) instead of it going to
// the editor under a running turn; it reaches the editor when the queue is
// done. A queued prompt is echoed sanitized.
func TestPTYPartialWaitsBehindQueuedPrompts(t *testing.T) {
	gate := make(chan struct{})
	fa := &fakeAgent{}
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
		return agent.Result{}, nil
	}
	p := startPTY(t, fa, nil)
	p.send("slow one\r")
	fa.waitInputs(t, 1)
	p.send("\x1b[200~slow \x1b]2;PWNED\x07two\x1b[201~\rpartial")
	p.waitScreen("both queued", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "queued › slow two ⏎ partial▏")
	})
	gate <- struct{}{}
	if got := fa.waitInputs(t, 2); len(got) != 2 || got[1] != "slow \x1b]2;PWNED\x07two" {
		t.Fatalf("turns %q", got)
	}
	p.waitScreen("the second turn, the unfinished line still queued", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return strings.Contains(text, "› slow two\n") && strings.Contains(text, "queued › partial▏")
	})
	p.send(" more")
	p.waitScreen("typing goes on where it was", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "queued › partial more▏")
	})
	gate <- struct{}{}
	p.waitScreen("the line in the editor", func(s *screen) bool { return s.cursorLine() == "› partial more" })
	if strings.Contains(p.out.String(), "PWNED\x07") {
		t.Errorf("the queued prompt's escape sequence reached the terminal")
	}
}
