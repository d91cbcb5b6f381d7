package session

import (
	"bytes"
	"encoding/json"

	"github.com/synapse-agent/synapse/internal/llm"
)

// LostStartText is the user message Sanitize puts first when a history
// no longer starts with one (its first lines were lost).
const LostStartText = "[The beginning of this conversation could not be restored from the session file.]"

// Sanitize returns msgs without dangling tool calls: an assistant message
// whose tool calls do not all have a result right after it loses its calls
// (its text is kept when it has any) and those partial results are dropped;
// tool results that answer no preceding call are dropped too. A history that
// then starts with the assistant gets LostStartText as its first message.
// Tool inputs that are not JSON objects are normalised (ObjectInput).
// Providers refuse a history that breaks these rules.
func Sanitize(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(msgs)+1)
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if len(m.ToolCalls) > 0 {
			calls := make([]llm.ToolCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				c.Input = ObjectInput(c.Input)
				calls[k] = c
			}
			m.ToolCalls = calls
		}
		switch {
		case m.Role == llm.RoleTool:
			i++ // orphan result
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			j := i + 1
			for j < len(msgs) && msgs[j].Role == llm.RoleTool {
				j++
			}
			results := map[string]llm.Message{}
			for _, r := range msgs[i+1 : j] {
				if _, dup := results[r.ToolCallID]; !dup {
					results[r.ToolCallID] = r
				}
			}
			complete := true
			for _, c := range m.ToolCalls {
				if _, ok := results[c.ID]; !ok {
					complete = false
					break
				}
			}
			if complete {
				out = append(out, m)
				for _, c := range m.ToolCalls {
					out = append(out, results[c.ID])
				}
			} else if m.Text != "" {
				out = append(out, llm.Message{Role: llm.RoleAssistant, Text: m.Text})
			}
			i = j
		default:
			out = append(out, m)
			i++
		}
	}
	if len(out) > 0 && out[0].Role != llm.RoleUser {
		out = append([]llm.Message{{Role: llm.RoleUser, Text: LostStartText}}, out...)
	}
	return out
}

// ObjectInput returns a tool call's input as a JSON object, which is what
// providers accept. Some writers stored it as a JSON string holding the
// object ("{\"command\":\"ls\"}"): that object is returned. Anything else
// that is not an object (null, a number, a string without an object) becomes {}.
func ObjectInput(raw json.RawMessage) json.RawMessage {
	for range 3 { // a string may hold a string that holds the object
		t := bytes.TrimSpace(raw)
		switch {
		case len(t) > 0 && t[0] == '{' && json.Valid(t):
			return json.RawMessage(t)
		case len(t) > 0 && t[0] == '"':
			var s string
			if json.Unmarshal(t, &s) != nil {
				return json.RawMessage("{}")
			}
			raw = json.RawMessage(s)
			continue
		}
		break
	}
	return json.RawMessage("{}")
}
