package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/synapse-agent/synapse/internal/llm"
)

// streamFromMessage turns a whole Messages API message body into the events
// a stream of it would have had (tool inputs as one input_json_delta each),
// for gateways that answer a streaming request that way.
func streamFromMessage(body []byte) ([]byte, error) {
	var m struct {
		ID           string                       `json:"id"`
		Type         string                       `json:"type"`
		Role         string                       `json:"role"`
		Model        string                       `json:"model"`
		Content      []map[string]json.RawMessage `json:"content"`
		StopReason   json.RawMessage              `json:"stop_reason"`
		StopSequence json.RawMessage              `json:"stop_sequence"`
		Usage        json.RawMessage              `json:"usage"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	if m.Type != "message" {
		return nil, errors.New("not a message")
	}
	orNull := func(r json.RawMessage) json.RawMessage {
		if len(r) == 0 {
			return json.RawMessage("null")
		}
		return r
	}
	var buf bytes.Buffer
	var err error
	send := func(event string, v map[string]any) {
		if err != nil {
			return
		}
		v["type"] = event
		var data []byte
		data, err = json.Marshal(v)
		llm.SSEEvent(&buf, event, data)
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": m.ID, "type": "message", "role": m.Role, "model": m.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": orNull(m.Usage),
	}})
	for i, b := range m.Content {
		var kind string
		_ = json.Unmarshal(b["type"], &kind)
		start := map[string]any{}
		for k, v := range b {
			start[k] = v
		}
		if kind == "tool_use" {
			start["input"] = map[string]any{}
		}
		send("content_block_start", map[string]any{"index": i, "content_block": start})
		if in, ok := b["input"]; ok && kind == "tool_use" {
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": orNull(m.StopReason), "stop_sequence": orNull(m.StopSequence)},
		"usage": orNull(m.Usage),
	})
	send("message_stop", map[string]any{})
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
