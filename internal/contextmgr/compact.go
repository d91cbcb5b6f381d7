package contextmgr

import (
	"errors"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// SummaryPrefix starts the user message that holds a compaction's summary.
const SummaryPrefix = "[Summary of the earlier conversation, written when it was compacted to fit the context window. " +
	"The messages after this one are verbatim.]\n\n"

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
// summariser: the gist of a result is at its start and end.
const maxResultChars = 3000

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

// SummaryRequest is the one model request that summarises older (the part
// of the history that goes), steered by the user's instructions (may be
// empty). The transcript is bounded to fit budget tokens, newest kept.
func SummaryRequest(model string, older []llm.Message, instructions string, budget int) llm.Request {
	var b strings.Builder
	b.WriteString("Summarise this conversation between a user and a coding agent (tool results may be shortened):\n\n")
	t := transcript(older, budget*charsPerToken)
	b.WriteString(t)
	if s := strings.TrimSpace(instructions); s != "" {
		b.WriteString("\n\nThe user's instructions for this summary: ")
		b.WriteString(s)
	}
	return llm.Request{
		Model:     model,
		System:    SummarySystem,
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: b.String()}},
		MaxTokens: 8192,
	}
}

// transcript renders messages as text, each tool result shortened, and
// keeps only the newest part when it exceeds maxChars.
func transcript(msgs []llm.Message, maxChars int) string {
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		var s strings.Builder
		switch m.Role {
		case llm.RoleUser:
			s.WriteString("USER: ")
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
			s.WriteString(shorten(m.Text, maxResultChars))
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

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := s[:n*2/3], s[len(s)-n/3:]
	return head + "\n…(" + strconv.Itoa(len(s)-len(head)-len(tail)) + " characters left out)…\n" + tail
}

// ErrEmptySummary is a summary request that returned no text.
var ErrEmptySummary = errors.New("the model returned an empty summary")

// Compacted is the history after a compaction: the summary as the first
// (user) message, then the kept messages unchanged.
func Compacted(summary string, kept []llm.Message) ([]llm.Message, error) {
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return nil, ErrEmptySummary
	}
	out := make([]llm.Message, 0, 1+len(kept))
	out = append(out, llm.Message{Role: llm.RoleUser, Text: SummaryPrefix + summary})
	return append(out, kept...), nil
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
