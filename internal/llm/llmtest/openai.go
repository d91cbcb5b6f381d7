package llmtest

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

func openAIFinish(stop string) string {
	switch stop {
	case StopToolUse:
		return "tool_calls"
	case StopMaxTokens:
		return "length"
	case StopEndTurn, "stop_sequence":
		return "stop"
	}
	return stop
}

// openAIUsage follows OpenAI: prompt_tokens includes the cached tokens.
func (rp reply) openAIUsage() obj {
	prompt := rp.usage.InputTokens + rp.usage.CacheReadTokens
	return obj{
		"prompt_tokens":         prompt,
		"completion_tokens":     rp.usage.OutputTokens,
		"total_tokens":          prompt + rp.usage.OutputTokens,
		"prompt_tokens_details": obj{"cached_tokens": rp.usage.CacheReadTokens},
	}
}

func writeOpenAI(ctx context.Context, w http.ResponseWriter, req *Request, t Turn, rp reply) {
	created := time.Now().Unix()
	id := "chatcmpl-" + rp.id
	if !req.Stream {
		msg := obj{"role": "assistant", "content": nil}
		if t.Text != "" {
			msg["content"] = t.Text
		}
		if t.Thinking != "" {
			msg["reasoning_content"] = t.Thinking
		}
		if len(rp.calls) > 0 {
			var calls []any
			for _, c := range rp.calls {
				calls = append(calls, obj{"id": c.id, "type": "function", "function": obj{"name": c.name, "arguments": c.input}})
			}
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(obj{
			"id": id, "object": "chat.completion", "created": created, "model": rp.model,
			"choices": []any{obj{"index": 0, "message": msg, "finish_reason": openAIFinish(rp.stop), "logprobs": nil}},
			"usage":   rp.openAIUsage(),
		}))
		return
	}

	var opts struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(req.Raw, &opts)

	e := newSSE(ctx, w, t)
	chunk := func(delta obj, finish any) bool {
		return e.send("", mustJSON(obj{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rp.model,
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		}))
	}
	if !chunk(obj{"role": "assistant", "content": ""}, nil) {
		return
	}
	if t.StreamError != nil {
		se := *t.StreamError
		if se.Type == "" {
			se.Type = "server_error"
		}
		if se.Message == "" {
			se.Message = "The server had an error while processing your request."
		}
		e.send("", mustJSON(obj{"error": obj{"type": se.Type, "message": se.Message, "code": nil, "param": nil}}))
		return
	}
	for _, p := range fragments(t.Thinking, rp.fragment) {
		if !chunk(obj{"reasoning_content": p}, nil) {
			return
		}
	}
	for _, p := range fragments(t.Text, rp.fragment) {
		if !chunk(obj{"content": p}, nil) {
			return
		}
	}
	for i, c := range rp.calls {
		head := obj{"index": i, "id": c.id, "type": "function", "function": obj{"name": c.name, "arguments": ""}}
		if !chunk(obj{"tool_calls": []any{head}}, nil) {
			return
		}
		for _, p := range fragments(c.input, rp.fragment) {
			if !chunk(obj{"tool_calls": []any{obj{"index": i, "function": obj{"arguments": p}}}}, nil) {
				return
			}
		}
	}
	if !chunk(obj{}, openAIFinish(rp.stop)) {
		return
	}
	if opts.StreamOptions.IncludeUsage {
		if !e.send("", mustJSON(obj{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": rp.model,
			"choices": []any{}, "usage": rp.openAIUsage(),
		})) {
			return
		}
	}
	e.send("", []byte("[DONE]"))
}
