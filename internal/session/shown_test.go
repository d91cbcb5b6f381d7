package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
)

// What was shown besides the conversation (file changes, a dropped step)
// is kept in the history file in its place: the conversation read back
// skips it without a warning, the transcript has it where it happened.
func TestShownKeptOutOfTheConversation(t *testing.T) {
	s, w := newStore(t)
	ss := s.Create("/w")
	call := llm.ToolCall{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"edit a.txt x y"}`)}
	mustAppend := func(msgs ...llm.Message) {
		t.Helper()
		if err := ss.Append(msgs...); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(user("fix it"), llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Text: "edited"})
	if err := ss.AppendShown(Shown{Changes: []FileChange{{CallID: "c1", Path: "/w/a.txt", Old: "x\n", New: "y\n"},
		{CallID: "c9", Path: "/w/big", New: strings.Repeat("z", MaxShownChange+1)}}}); err != nil {
		t.Fatal(err)
	}
	mustAppend(assistant("done"), user("now wait"))
	dropped := llm.Message{Role: llm.RoleAssistant, Text: "waiting", ToolCalls: []llm.ToolCall{{ID: "c2", Name: "Bash", Input: json.RawMessage(`{"command":"sleep 30"}`)}}}
	if err := ss.AppendShown(Shown{Dropped: &DroppedStep{Message: dropped, Calls: []DroppedCall{{ID: "c2", State: CallCancelled, Output: "started"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := ss.AppendShown(Shown{}); err != nil { // nothing to keep: no line
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}

	_, msgs, err := s.Open(ss.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 {
		t.Fatalf("the conversation has %d messages, want the 5 appended: %+v", len(msgs), msgs)
	}
	if e, _ := s.resolve(ss.ID()); e.MessageCount != 5 {
		t.Errorf("message count %d, want 5", e.MessageCount)
	}
	if ws := w.all(); len(ws) > 0 {
		t.Errorf("warnings: %v", ws)
	}

	tr, err := s.Transcript(ss.ID())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tr {
		switch {
		case e.Message != nil:
			got = append(got, string(e.Message.Role))
		case e.Shown.Dropped != nil:
			got = append(got, "dropped:"+e.Shown.Dropped.Calls[0].State+":"+e.Shown.Dropped.Message.ToolCalls[0].ID)
		default:
			var ids []string
			for _, c := range e.Shown.Changes {
				ids = append(ids, c.CallID+"="+c.Old+"->"+c.New)
			}
			got = append(got, "changes:"+strings.Join(ids, ","))
		}
	}
	want := "user assistant tool changes:c1=x\n->y\n assistant user dropped:cancelled:c2"
	if strings.Join(got, " ") != want {
		t.Errorf("transcript %q, want %q (a change over MaxShownChange left out)", strings.Join(got, " "), want)
	}
}

// A run that ends after its session was closed (a client loaded the
// session again mid-turn) writes no record: the session stays free for
// the next opener.
func TestShownAfterCloseWritesNothing(t *testing.T) {
	s, _ := newStore(t)
	ss := s.Create("/w")
	if err := ss.Append(user("hi")); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ss.AppendShown(Shown{Dropped: &DroppedStep{Message: assistant("x")}}); err != nil {
		t.Fatal(err)
	}
	other, _, err := s.Open(ss.ID())
	if err != nil {
		t.Fatalf("the session is not free after a record appended past Close: %v", err)
	}
	defer other.Close()
	if tr, _ := s.Transcript(ss.ID()); len(tr) != 1 {
		t.Errorf("transcript %+v, want the one message", tr)
	}
}
