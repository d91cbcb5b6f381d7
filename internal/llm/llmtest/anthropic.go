package llmtest

import (
	"context"
	"encoding/json"
	"net/http"
)

// obj is a JSON object under construction; encoding/json sorts its keys, which
// keeps the bytes on the wire deterministic.
type obj = map[string]any

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values built in this package are marshalled; they always encode.
		return []byte(`{"llmtest_error":"cannot marshal"}`)
	}
	return b
}

func writeError(w http.ResponseWriter, format string, status int, e APIError, retryAfter, retryAfterMs string) {
	if format == FormatGemini {
		writeGeminiError(w, status, e, retryAfter)
		return
	}
	if e.Type == "" {
		e.Type = errorTypeFor(status)
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	if retryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", retryAfterMs)
	}
	var body any
	if format == FormatBedrock || format == FormatVertex {
		body = cloudErrorBody(w, format, status, e)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch {
	case body != nil:
	case format == FormatAnthropic:
		body = obj{"type": "error", "error": obj{"type": e.Type, "message": e.Message}}
	default:
		var code any
		if e.Code != "" {
			code = e.Code
		}
		body = obj{"error": obj{"type": e.Type, "message": e.Message, "param": nil, "code": code}}
	}
	_, _ = w.Write(mustJSON(body))
}

func (rp reply) anthropicUsage(final bool) obj {
	u := obj{
		"input_tokens":                rp.usage.InputTokens,
		"cache_read_input_tokens":     rp.usage.CacheReadTokens,
		"cache_creation_input_tokens": rp.usage.CacheCreationTokens,
		"output_tokens":               rp.usage.OutputTokens,
	}
	if !final {
		u["output_tokens"] = 1 // message_start carries a placeholder; message_delta the real count
	}
	return u
}

// anthropicInput is the tool input as a JSON value for non-streaming replies;
// invalid JSON (a RawInput test) is sent as a string so the body stays valid.
func anthropicInput(in string) any {
	if json.Valid([]byte(in)) {
		return json.RawMessage(in)
	}
	return in
}

func writeAnthropic(ctx context.Context, w http.ResponseWriter, req *Request, t Turn, rp reply) {
	if !req.Stream {
		var content []any
		if t.Thinking != "" {
			content = append(content, obj{"type": "thinking", "thinking": t.Thinking, "signature": rp.signature})
		}
		if t.RedactedThinking != "" {
			content = append(content, obj{"type": "redacted_thinking", "data": t.RedactedThinking})
		}
		if t.Text != "" {
			content = append(content, obj{"type": "text", "text": t.Text})
		}
		for _, c := range rp.calls {
			content = append(content, obj{"type": "tool_use", "id": c.id, "name": c.name, "input": anthropicInput(c.input)})
		}
		if content == nil {
			content = []any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(obj{
			"id": rp.id, "type": "message", "role": "assistant", "model": rp.model,
			"content": content, "stop_reason": rp.stop, "stop_sequence": nil,
			"usage": rp.anthropicUsage(true),
		}))
		return
	}

	e := newEventStream(ctx, w, t, req.Format)
	send := func(event string, data obj) bool {
		data["type"] = event
		return e.send(event, mustJSON(data))
	}
	if !send("message_start", obj{"message": obj{
		"id": rp.id, "type": "message", "role": "assistant", "model": rp.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": rp.anthropicUsage(false),
	}}) {
		return
	}
	if !send("ping", obj{}) {
		return
	}
	if t.StreamError != nil {
		se := *t.StreamError
		if se.Type == "" {
			se.Type = "overloaded_error"
		}
		if se.Message == "" {
			se.Message = "Overloaded"
		}
		if e.bedrock {
			// Bedrock reports it as an event-stream exception, not an event of the model's.
			if _, err := w.Write(bedrockException(bedrockStreamException(se.Type), se.Message)); err == nil {
				_ = e.rc.Flush()
			}
			return
		}
		send("error", obj{"error": obj{"type": se.Type, "message": se.Message}})
		return
	}
	index := 0
	block := func(start obj, deltaType, field string, pieces []string, extra ...obj) bool {
		if !send("content_block_start", obj{"index": index, "content_block": start}) {
			return false
		}
		for _, p := range pieces {
			if !send("content_block_delta", obj{"index": index, "delta": obj{"type": deltaType, field: p}}) {
				return false
			}
		}
		for _, x := range extra {
			if !send("content_block_delta", obj{"index": index, "delta": x}) {
				return false
			}
		}
		if !send("content_block_stop", obj{"index": index}) {
			return false
		}
		index++
		return true
	}
	if t.Thinking != "" {
		if !block(obj{"type": "thinking", "thinking": "", "signature": ""}, "thinking_delta", "thinking",
			fragments(t.Thinking, rp.fragment), obj{"type": "signature_delta", "signature": rp.signature}) {
			return
		}
	}
	if t.RedactedThinking != "" {
		if !block(obj{"type": "redacted_thinking", "data": t.RedactedThinking}, "", "", nil) {
			return
		}
	}
	if t.Text != "" {
		if !block(obj{"type": "text", "text": ""}, "text_delta", "text", fragments(t.Text, rp.fragment)) {
			return
		}
	}
	for _, c := range rp.calls {
		if !block(obj{"type": "tool_use", "id": c.id, "name": c.name, "input": obj{}}, "input_json_delta", "partial_json", fragments(c.input, rp.fragment)) {
			return
		}
	}
	if !send("message_delta", obj{
		"delta": obj{"stop_reason": rp.stop, "stop_sequence": nil},
		"usage": rp.anthropicUsage(true),
	}) {
		return
	}
	send("message_stop", obj{})
}
