package session

import (
	"github.com/synapse-agent/synapse/internal/llm"
)

// Shown is what the person was shown of tool calls that the conversation
// (what the model reads back) does not keep: the file changes of write and
// edit calls, and the steps an interrupt dropped. It is kept in the history
// file as lines of their own, in order, so that a front end replaying a
// session (ACP's session/load) shows the calls as they happened; reading
// the conversation skips them. A rewrite (compaction) drops them with the
// messages they were about (the archive keeps neither).
type Shown struct {
	// Changes are files the calls of the step before changed, by call id.
	Changes []FileChange `json:"changes,omitempty"`
	// Dropped is a step the run's interrupt dropped from the conversation.
	Dropped *DroppedStep `json:"dropped,omitempty"`
}

// FileChange is a file a call wrote or edited, before and after. Old is ""
// when Created.
type FileChange struct {
	CallID  string `json:"call_id"`
	Path    string `json:"path"`
	Old     string `json:"old,omitempty"`
	New     string `json:"new"`
	Created bool   `json:"created,omitempty"`
}

// MaxShownChange bounds the text of a change kept for replay (old and new
// together): a larger change is shown live but replays without its diff.
const MaxShownChange = 256 << 10

// DroppedStep is an assistant message whose tool calls did not all finish
// before an interrupt, with what became of each call.
type DroppedStep struct {
	Message llm.Message   `json:"message"`
	Calls   []DroppedCall `json:"calls"`
}

// States of a dropped step's calls.
const (
	CallFinished   = "finished"
	CallCancelled  = "cancelled"
	CallNotStarted = "not_started"
)

// DroppedCall is one call of a dropped step: its state and, when it has
// one, its output (a cancelled call's is what it printed before the cancel).
type DroppedCall struct {
	ID      string      `json:"id"`
	State   string      `json:"state"`
	Output  string      `json:"output,omitempty"`
	IsError bool        `json:"is_error,omitempty"`
	Change  *FileChange `json:"change,omitempty"`
}

// TranscriptEntry is one line of a session as it happened: a message of
// the conversation or what was shown besides (exactly one is set).
type TranscriptEntry struct {
	Message *llm.Message
	Shown   *Shown
}

// AppendShown writes sh to the history file as a line of its own. Changes
// over MaxShownChange are left out. After Close it writes nothing: the
// session may be open elsewhere by then.
func (ss *Session) AppendShown(sh Shown) error {
	kept := sh.Changes[:0:0]
	for _, c := range sh.Changes {
		if len(c.Old)+len(c.New) <= MaxShownChange {
			kept = append(kept, c)
		}
	}
	sh.Changes = kept
	if d := sh.Dropped; d != nil {
		calls := make([]DroppedCall, len(d.Calls))
		copy(calls, d.Calls)
		for i, c := range calls {
			if c.Change != nil && len(c.Change.Old)+len(c.Change.New) > MaxShownChange {
				calls[i].Change = nil
			}
		}
		sh.Dropped = &DroppedStep{Message: d.Message, Calls: calls}
	}
	if len(sh.Changes) == 0 && sh.Dropped == nil {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil
	}
	if err := ss.openLocked(); err != nil {
		return err
	}
	return ss.writeLocked([]record{{Time: ss.store.clock(), Shown: &sh}})
}

// Transcript reads a session's history file as it happened: its messages
// (not sanitised: a step cut by a crash shows as far as it got) and, in
// their places, what was shown besides them.
func (s *Store) Transcript(id string) ([]TranscriptEntry, error) {
	h, err := s.readHistory(id)
	if err != nil {
		return nil, err
	}
	out := make([]TranscriptEntry, 0, len(h.msgs)+len(h.shown))
	next := 0
	for i := range h.msgs {
		for next < len(h.shown) && h.shown[next].at <= i {
			out = append(out, TranscriptEntry{Shown: h.shown[next].shown})
			next++
		}
		out = append(out, TranscriptEntry{Message: &h.msgs[i]})
	}
	for ; next < len(h.shown); next++ {
		out = append(out, TranscriptEntry{Shown: h.shown[next].shown})
	}
	return out, nil
}

// shownAt is a Shown line of a history file and the number of messages
// before it.
type shownAt struct {
	at    int
	shown *Shown
}
