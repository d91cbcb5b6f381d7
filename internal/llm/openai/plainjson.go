package openai

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/synapse-agent/synapse/internal/llm"
)

// streamFromCompletion turns a whole chat.completion body into the stream of
// one chunk (each message becomes its choice's delta, tool calls get their
// index) and [DONE], for servers that answer a streaming request that way.
func streamFromCompletion(body []byte) ([]byte, error) {
	var c struct {
		ID      string          `json:"id"`
		Created int64           `json:"created"`
		Model   string          `json:"model"`
		Usage   json.RawMessage `json:"usage"`
		Choices []struct {
			Index        int64                      `json:"index"`
			Message      map[string]json.RawMessage `json:"message"`
			FinishReason json.RawMessage            `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	if len(c.Choices) == 0 {
		return nil, errors.New("not a chat completion: no choices")
	}
	var choices []any
	for _, ch := range c.Choices {
		delta := map[string]any{}
		for k, v := range ch.Message {
			if k != "tool_calls" {
				delta[k] = v
			}
		}
		if raw, ok := ch.Message["tool_calls"]; ok {
			var calls []map[string]any
			if err := json.Unmarshal(raw, &calls); err != nil {
				return nil, err
			}
			for i, tc := range calls {
				tc["index"] = i
			}
			delta["tool_calls"] = calls
		}
		finish := ch.FinishReason
		if len(finish) == 0 {
			finish = json.RawMessage("null")
		}
		choices = append(choices, map[string]any{"index": ch.Index, "delta": delta, "finish_reason": finish})
	}
	chunk := map[string]any{"id": c.ID, "object": "chat.completion.chunk", "created": c.Created, "model": c.Model, "choices": choices}
	if len(c.Usage) > 0 && string(c.Usage) != "null" {
		chunk["usage"] = c.Usage
	}
	data, err := json.Marshal(chunk)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	llm.SSEEvent(&buf, "", data)
	llm.SSEEvent(&buf, "", []byte("[DONE]"))
	return buf.Bytes(), nil
}
