package session

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
)

// A replaced tool result is one line appended to the file, applied on
// reading only to the message it names; a history that is not the file's
// is refused, writing nothing.
func TestReplaceAppendsAndApplies(t *testing.T) {
	call := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}}
	}
	result := func(id, text string) llm.Message { return llm.Message{Role: llm.RoleTool, ToolCallID: id, Text: text} }
	msgs := []llm.Message{user("go"), call("c1"), result("c1", "first output"), call("c2"), result("c2", "second output")}

	tests := []struct {
		name    string
		n       int
		rs      []Replaced
		wantErr error
		want    []string // the texts of messages 2 and 4 when read back
	}{
		{"applied", 5, []Replaced{{Index: 2, ToolCallID: "c1", Text: "pointer 1"}}, nil, []string{"pointer 1", "second output"}},
		{"two in one line each", 5, []Replaced{{Index: 2, ToolCallID: "c1", Text: "p1"}, {Index: 4, ToolCallID: "c2", Text: "p2"}}, nil, []string{"p1", "p2"}},
		{"other call id ignored", 5, []Replaced{{Index: 4, ToolCallID: "c1", Text: "wrong"}}, nil, []string{"first output", "second output"}},
		{"not a tool result ignored", 5, []Replaced{{Index: 1, ToolCallID: "", Text: "wrong"}}, nil, []string{"first output", "second output"}},
		{"past the end ignored", 5, []Replaced{{Index: 9, ToolCallID: "c1", Text: "wrong"}}, nil, []string{"first output", "second output"}},
		{"out of step", 4, []Replaced{{Index: 2, ToolCallID: "c1", Text: "wrong"}}, ErrOutOfStep, []string{"first output", "second output"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, w := newStore(t)
			ss := s.Create("/w")
			if err := ss.Append(msgs...); err != nil {
				t.Fatal(err)
			}
			path := s.HistoryFile(ss.ID())
			before, _ := os.ReadFile(path)
			if err := ss.Replace(tt.n, tt.rs); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Replace: %v, want %v", err, tt.wantErr)
			}
			// Later messages still append after the replaced lines.
			if err := ss.Append(assistant("done")); err != nil {
				t.Fatal(err)
			}
			if err := ss.Close(); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(after), string(before)) {
				t.Fatal("the history file was rewritten, not appended to")
			}
			lines := strings.Count(string(after), "\n") - strings.Count(string(before), "\n")
			if wantLines := 1 + map[bool]int{true: 0, false: len(tt.rs)}[tt.wantErr != nil]; lines != wantLines {
				t.Errorf("%d lines appended, want %d", lines, wantLines)
			}
			_, got, err := s.Open(ss.ID())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 6 || got[2].Text != tt.want[0] || got[4].Text != tt.want[1] || got[5].Text != "done" {
				t.Errorf("read back %d messages: %q, %q, %q", len(got), got[2].Text, got[4].Text, got[len(got)-1].Text)
			}
			if len(w.all()) != 0 {
				t.Errorf("warnings: %v", w.all())
			}
		})
	}
}

// A run whose session was closed mid-turn offloads a result: no line is
// written and the session stays free for the next opener.
func TestReplaceAfterCloseWritesNothing(t *testing.T) {
	s, _ := newStore(t)
	ss := s.Create("/w")
	msgs := []llm.Message{user("go"), {Role: llm.RoleTool, ToolCallID: "c1", Text: "output"}}
	if err := ss.Append(msgs...); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ss.Replace(len(msgs), []Replaced{{Index: 1, ToolCallID: "c1", Text: "pointer"}}); err != nil {
		t.Fatal(err)
	}
	other, _, err := s.Open(ss.ID())
	if err != nil {
		t.Fatalf("the session is not free after a replacement past Close: %v", err)
	}
	defer other.Close()
	if tr, _ := s.Transcript(ss.ID()); len(tr) != 2 || tr[1].Message == nil || tr[1].Message.Text != "output" {
		t.Errorf("transcript %+v, want the whole output", tr)
	}
}
