package repl

import (
	"fmt"
	"testing"
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
		{"Esc on an empty queue cancels", []string{"\x1b"}, Queue{}, 1},
		{"Esc clears a queue without cancelling", []string{"abc", "\x1b"}, Queue{}, 0},
		{"Esc twice: clears, then cancels", []string{"abc", "\x1b", "\x1b"}, Queue{}, 1},
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
