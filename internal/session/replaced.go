package session

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Replaced says that the tool result at Index of the history (counting the
// file's messages from its first line) now has Text: a result offloaded to
// a file, or cut, whose pointer replaces it. Appending this instead of
// rewriting the file keeps a step's cost independent of the history's
// length. The call id guards against a file whose messages are not the
// history the index was taken from (a lost append): a line that does not
// match is ignored, which keeps the whole text rather than the wrong one.
type Replaced struct {
	Index      int    `json:"index"`
	ToolCallID string `json:"toolCallId"`
	Text       string `json:"text"`
}

// replace applies r to the messages read so far.
func (h *history) replace(r *Replaced) {
	if r.Index < 0 || r.Index >= len(h.msgs) {
		return
	}
	m := &h.msgs[r.Index]
	if m.Role == llm.RoleTool && m.ToolCallID == r.ToolCallID {
		m.Text = r.Text
	}
}

// ErrOutOfStep: the caller's history is not the file's messages (a resume
// that repaired an unfinished step, an append lost to a full disk), so an
// index of one is not an index of the other. Rewrite the file instead.
var ErrOutOfStep = errors.New("the session file does not hold the history as the caller has it")

// Replace records that tool results of a history of n messages changed
// text, in one append; reading the file applies them. It returns
// ErrOutOfStep, writing nothing, when the file does not hold n messages.
// After Close it writes nothing, as AppendShown: a run that ends after its
// session was closed must not take the session's lock again, and the file
// keeps the whole text.
func (ss *Session) Replace(n int, rs []Replaced) error {
	if len(rs) == 0 {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return nil
	}
	if n != ss.entry.MessageCount {
		return ErrOutOfStep
	}
	if err := ss.openLocked(); err != nil {
		return err
	}
	recs := make([]record, len(rs))
	now := ss.store.clock()
	for i := range rs {
		recs[i] = record{Time: now, Replaced: &rs[i]}
	}
	return ss.writeLocked(recs)
}

// writeLocked writes recs to the history file in one write of whole lines,
// the first carrying the session's origin when the file is new. A write
// cut short (a full disk) leaves a torn line: the next one starts a line of
// its own so that it is not lost with it, and carries the origin again (the
// torn line is skipped on reading).
func (ss *Session) writeLocked(recs []record) error {
	ss.buf.Reset()
	if ss.needNewline {
		ss.buf.WriteByte('\n')
	}
	enc := json.NewEncoder(&ss.buf)
	enc.SetEscapeHTML(false)
	for i, rec := range recs {
		if i == 0 && ss.needOrigin {
			rec.Origin = ss.originLocked()
		}
		if err := enc.Encode(rec); err != nil {
			return fmt.Errorf("encode session record: %w", err)
		}
	}
	if n, err := ss.file.Write(ss.buf.Bytes()); err != nil {
		if n > 0 {
			ss.needNewline = true
		}
		return fmt.Errorf("append to session history %s: %w", ss.file.Name(), err)
	}
	ss.needNewline, ss.needOrigin = false, false
	return nil
}
