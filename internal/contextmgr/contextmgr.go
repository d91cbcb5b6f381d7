// Package contextmgr keeps a conversation inside the model's context window:
// it estimates the history's size (cached per message, so a step costs the
// same however long the history is), offloads large tool results of the
// older history to files and replaces them with a one-line pointer, and
// builds and applies a compaction (the older history replaced by a
// structured summary, the recent messages kept verbatim, tool call/result
// pairs intact). It makes no model request itself: the agent does, with the
// request built here.
package contextmgr

import (
	"fmt"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Settings are the thresholds, in tokens, of one conversation.
type Settings struct {
	Window    int // the model's context window
	OffloadAt int // offload large older tool results past this estimate
	CompactAt int // summarise the older history past this estimate
	// Limit is the largest request sent: the rest of the window is the
	// reply's, and the margin for the estimate being off.
	Limit int
	// MinSaving: an automatic compaction that would save fewer tokens than
	// this (with the longest summary allowed) is not done: it would
	// paraphrase the conversation for nothing.
	MinSaving int
	// KeepRecent is how many of the newest messages offload and compaction
	// never touch (the current step and a few before it stay whole).
	KeepRecent int
	// OffloadMinChars: tool results shorter than this stay in the history.
	OffloadMinChars int
	// CooldownSteps is the number of model requests after a compaction
	// before an automatic one may run again.
	CooldownSteps int
}

// Defaults for a window: offload at 60% of it, compact at 80%, never send
// more than 90% (the rest for the reply and for the estimate being off by a
// few percent), and compact only to save at least 10% of it.
const (
	DefaultOffloadPercent   = 60
	DefaultCompactPercent   = 80
	DefaultLimitPercent     = 90
	DefaultMinSavingPercent = 10
	DefaultKeepRecent       = 8
	DefaultOffloadMinChars  = 2000
	DefaultCooldownSteps    = 3
)

// Defaults returns the settings for a window of the given size.
func Defaults(window int) Settings {
	return Settings{
		Window:          window,
		OffloadAt:       window * DefaultOffloadPercent / 100,
		CompactAt:       window * DefaultCompactPercent / 100,
		Limit:           window * DefaultLimitPercent / 100,
		MinSaving:       window * DefaultMinSavingPercent / 100,
		KeepRecent:      DefaultKeepRecent,
		OffloadMinChars: DefaultOffloadMinChars,
		CooldownSteps:   DefaultCooldownSteps,
	}
}

// Resolve fills the zero fields of s from Defaults(window) and corrects
// thresholds that cannot work (above the window, or offload above compact),
// returning a warning that says what was changed.
func (s Settings) Resolve(window int) (Settings, string) {
	d := Defaults(window)
	if s.Window > 0 {
		d = Defaults(s.Window)
	}
	out := d
	if s.OffloadAt > 0 {
		out.OffloadAt = s.OffloadAt
	}
	if s.CompactAt > 0 {
		out.CompactAt = s.CompactAt
	}
	if s.Limit > 0 {
		out.Limit = min(s.Limit, out.Window)
	}
	if s.MinSaving > 0 {
		out.MinSaving = s.MinSaving
	}
	if s.KeepRecent > 0 {
		out.KeepRecent = s.KeepRecent
	}
	if s.OffloadMinChars > 0 {
		out.OffloadMinChars = s.OffloadMinChars
	}
	if s.CooldownSteps > 0 {
		out.CooldownSteps = s.CooldownSteps
	}
	var warn []string
	if out.CompactAt > out.Window {
		warn = append(warn, fmt.Sprintf("the compaction threshold %d is above the context window %d: using %d", out.CompactAt, out.Window, d.CompactAt))
		out.CompactAt = d.CompactAt
	}
	if out.CompactAt > out.Limit {
		// A threshold the user set between the limit and the window: the
		// request must still fit, so the limit follows it.
		out.Limit = out.CompactAt
	}
	if out.OffloadAt > out.CompactAt {
		warn = append(warn, fmt.Sprintf("the offload threshold %d is above the compaction threshold %d: using %d", out.OffloadAt, out.CompactAt, out.CompactAt*DefaultOffloadPercent/DefaultCompactPercent))
		out.OffloadAt = out.CompactAt * DefaultOffloadPercent / DefaultCompactPercent
	}
	return out, strings.Join(warn, "; ")
}

// charsPerToken is the estimate's ratio: about four characters a token for
// English and code, which errs on the large side for most text.
const charsPerToken = 4

// messageOverhead is the wire format's per-message and per-call cost.
const messageOverhead = 8

// Estimate is the approximate token count of one message.
func Estimate(m llm.Message) int {
	n := len(m.Text)
	for _, th := range m.Thinking {
		n += len(th.Text) + len(th.Signature) + len(th.Redacted) + len(th.Encrypted)
	}
	for _, c := range m.ToolCalls {
		n += len(c.Input) + len(c.InvalidInput) + len(c.Name) + len(c.ID) + messageOverhead*charsPerToken
	}
	// Images are priced by size on the provider's side; a flat figure of
	// about a mid-sized screenshot keeps the estimate honest.
	n += len(m.Images) * 1600 * charsPerToken
	return n/charsPerToken + messageOverhead
}

// EstimateText is the approximate token count of a text (a system prompt).
func EstimateText(s string) int { return len(s) / charsPerToken }

// Tracker keeps the size estimate of a history, one entry per message, so
// that adding a step costs only the step's own messages.
type Tracker struct {
	sizes []int
	total int
}

// Reset recomputes the estimate for a whole history (after a resume, an
// offload or a compaction).
func (t *Tracker) Reset(h []llm.Message) {
	t.sizes = t.sizes[:0]
	t.total = 0
	t.Add(h...)
}

// Add accounts for messages appended to the history.
func (t *Tracker) Add(msgs ...llm.Message) {
	for _, m := range msgs {
		n := Estimate(m)
		t.sizes = append(t.sizes, n)
		t.total += n
	}
}

// Set updates the estimate of message i after it changed in place.
func (t *Tracker) Set(i int, m llm.Message) {
	if i < 0 || i >= len(t.sizes) {
		return
	}
	n := Estimate(m)
	t.total += n - t.sizes[i]
	t.sizes[i] = n
}

// Total is the history's estimated size in tokens.
func (t *Tracker) Total() int { return t.total }

// Len is the number of messages accounted for.
func (t *Tracker) Len() int { return len(t.sizes) }

// Size is the estimate of message i (0 when there is none).
func (t *Tracker) Size(i int) int {
	if i < 0 || i >= len(t.sizes) {
		return 0
	}
	return t.sizes[i]
}

// Since is the estimate of the messages from index i on.
func (t *Tracker) Since(i int) int {
	n := 0
	for _, s := range t.sizes[min(max(i, 0), len(t.sizes)):] {
		n += s
	}
	return n
}
