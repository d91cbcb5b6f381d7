package contextmgr

import (
	"errors"
	"github.com/synapse-agent/synapse/internal/textutil"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// SummaryPrefix starts the user message that holds a compaction's summary.
// It stands before the kept messages, or right after the user's current
// request when the work on that request is what was summarised: that
// request is never summarised, it stays verbatim where the model reads it.
const SummaryPrefix = "[Summary of the conversation up to here, written when it was compacted to fit the context window. " +
	"It replaces the earlier messages except the user's current request, which is kept verbatim. The messages after this one are verbatim.]\n\n"

// SummarySystem is the summariser's system prompt (a test tells a summary
// request from the agent's own by it).
const SummarySystem = `You summarise a coding agent's conversation so that the agent can continue the work from the summary alone: the earlier messages will be removed and replaced by what you write.

Write plain text with exactly these sections, each a heading line followed by short bullet points (write "none" when a section has nothing):

## Technical context
(project, languages, tools, commands that work, environment facts)
## Changes made
(every file created, edited or deleted, with where and what changed)
## Errors and fixes
(errors met and how each was fixed, or that it is still open)
## Current state
(what works now, what was being done at the end)
## Pending tasks
(what the user asked for that is not done yet, in order)
## User preferences
(what the user said they want or do not want, in their words where short)
## Key decisions
(choices made and why)

Be specific: keep file paths, function names, commands, error messages and numbers exactly. Do not invent anything. Do not address the user. Output only the summary.`

// maxResultChars bounds each tool result in the transcript sent to the
// summariser: the gist of a result is at its start and end. With many
// results each gets less, down to minResultChars.
const (
	maxResultChars = 3000
	minResultChars = 300
)

// Cut returns where the kept part of h starts when the newest keep messages
// stay verbatim: never at a tool result, so every tool call and its result
// stay on the same side. 0 means there is nothing older to summarise.
func Cut(h []llm.Message, keep int) int {
	cut := max(0, len(h)-keep)
	for cut < len(h) && h[cut].Role == llm.RoleTool {
		cut++
	}
	if cut >= len(h) {
		// The newest step alone is larger than keep: keep it whole.
		cut = len(h) - 1
		for cut > 0 && h[cut].Role == llm.RoleTool {
			cut--
		}
	}
	return max(cut, 0)
}

// Summarised is what a compaction at cut summarises: h[:cut] without the
// user's current request (index prompt; -1 when no turn is running).
func Summarised(h []llm.Message, cut, prompt int) []llm.Message {
	cut = min(cut, len(h))
	if prompt < 0 || prompt >= cut {
		return h[:cut:cut]
	}
	out := make([]llm.Message, 0, cut-1)
	out = append(out, h[:prompt]...)
	return append(out, h[prompt+1:cut]...)
}

// SummaryMaxTokens is the longest summary asked for with a window: a
// sixteenth of it, between 1024 and 8192 tokens, so that a small window
// keeps most of its room for the work.
func SummaryMaxTokens(window int) int { return min(max(window/16, 1024), 8192) }

// Summary is what the summariser is given.
type Summary struct {
	Model string
	// Older is the part of the history that goes: h[:cut].
	Older []llm.Message
	// Prompt is the index in Older of the user's current request (-1:
	// none); it is shown to the summariser, marked as kept verbatim.
	Prompt       int
	Instructions string // the user's steering (may be empty)
	Budget       int    // tokens for the transcript; the newest part is kept
	MaxTokens    int    // the summary's length
	// Expand gives an offloaded result's text back (nil: the pointers only),
	// so the summary can say what the results were, not only where.
	Expand func(llm.Message) llm.Message
}

// Request is the one model request that writes the summary.
func (s Summary) Request() llm.Request {
	var b strings.Builder
	b.WriteString("Summarise this conversation between a user and a coding agent (tool results may be shortened):\n\n")
	msgs := s.Older
	if s.Expand != nil {
		msgs = make([]llm.Message, len(s.Older))
		for i, m := range s.Older {
			if m.Role == llm.RoleTool {
				if x := s.Expand(m); x.Text != m.Text {
					x.Text = "(offloaded to " + PointerFile(m.Text) + ") " + x.Text
					m = x
				}
			}
			msgs[i] = m
		}
	}
	b.WriteString(transcript(msgs, s.Prompt, s.Budget*charsPerToken))
	if in := strings.TrimSpace(s.Instructions); in != "" {
		b.WriteString("\n\nThe user's instructions for this summary: ")
		b.WriteString(in)
	}
	return llm.Request{
		Model:     s.Model,
		System:    SummarySystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: b.String()}},
		MaxTokens: s.MaxTokens,
	}
}

// transcript renders messages as text, each tool result shortened (more
// when there are many, so that all of them fit), and keeps only the newest
// part when it exceeds maxChars. The message at prompt is marked as the
// request that is kept verbatim.
func transcript(msgs []llm.Message, prompt, maxChars int) string {
	other, results := 0, 0
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			results++
		} else {
			other += len(m.Text) + 16
			for _, c := range m.ToolCalls {
				other += len(c.Input) + 16
			}
		}
	}
	perResult := maxResultChars
	if results > 0 {
		// 200: a result's label, offload path and cut marker.
		perResult = min(max((maxChars-other)/results-200, minResultChars), maxResultChars)
	}
	parts := make([]string, 0, len(msgs))
	for i, m := range msgs {
		var s strings.Builder
		switch m.Role {
		case llm.RoleUser:
			if i == prompt {
				s.WriteString("USER (the current request; it is kept verbatim after your summary, so do not restate it, but say how far the work on it got): ")
			} else {
				s.WriteString("USER: ")
			}
			s.WriteString(m.Text)
		case llm.RoleAssistant:
			s.WriteString("AGENT: ")
			s.WriteString(m.Text)
			for _, c := range m.ToolCalls {
				s.WriteString("\nAGENT RAN: ")
				s.Write(c.Input)
			}
		case llm.RoleTool:
			s.WriteString("RESULT")
			if m.IsError {
				s.WriteString(" (error)")
			}
			s.WriteString(": ")
			s.WriteString(textutil.KeepEnds(m.Text, perResult))
		}
		parts = append(parts, s.String())
	}
	total := 0
	start := len(parts)
	for start > 0 && total+len(parts[start-1]) <= maxChars {
		start--
		total += len(parts[start]) + 2
	}
	out := strings.Join(parts[start:], "\n\n")
	if start > 0 {
		out = "(the oldest part of the conversation is left out: it did not fit)\n\n" + out
	}
	return out
}

// ErrEmptySummary is a summary request that returned no text.
var ErrEmptySummary = errors.New("the model returned an empty summary")

// Compacted is the history after a compaction at cut: the summary as a
// user message, then h[cut:] unchanged. When the user's current request
// (index prompt) is before cut, it goes first, verbatim, and the summary
// (which covers the work done on it) right after it. It returns the
// request's new index (-1 when prompt is -1).
func Compacted(summary string, h []llm.Message, cut, prompt int) ([]llm.Message, int, error) {
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return nil, -1, ErrEmptySummary
	}
	cut = min(cut, len(h))
	sum := llm.Message{Role: llm.RoleUser, Text: SummaryPrefix + summary}
	out := make([]llm.Message, 0, 2+len(h)-cut)
	newPrompt := -1
	switch {
	case prompt >= cut:
		newPrompt = prompt - cut + 1
	case prompt >= 0:
		out = append(out, h[prompt])
		newPrompt = 0
	}
	out = append(out, sum)
	return append(out, h[cut:]...), newPrompt, nil
}

// ValidPairs reports whether every tool call in h has exactly one result
// right after its message and every result belongs to such a call.
func ValidPairs(h []llm.Message) bool {
	pending := map[string]bool{}
	for _, m := range h {
		switch m.Role {
		case llm.RoleAssistant:
			if len(pending) > 0 {
				return false
			}
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
		case llm.RoleTool:
			if !pending[m.ToolCallID] {
				return false
			}
			delete(pending, m.ToolCallID)
		default:
			if len(pending) > 0 {
				return false
			}
		}
	}
	return len(pending) == 0
}
