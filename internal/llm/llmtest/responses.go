package llmtest

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The OpenAI Responses API (POST /v1/responses). A streamed reply is the
// documented event sequence, each as an `event: <type>` line and a `data:`
// line whose JSON repeats the type and carries a sequence_number:
// response.created, response.in_progress, then per output item
// response.output_item.added, its deltas (reasoning_summary_text,
// output_text, function_call_arguments) with their .done events, and
// response.output_item.done; finally response.completed (or
// response.incomplete when the output limit stopped it) with the usage.
// There is no [DONE] line.

func decodeResponses(body []byte) (Request, error) {
	var in struct {
		Model           string          `json:"model"`
		Stream          bool            `json:"stream"`
		Instructions    string          `json:"instructions"`
		MaxOutputTokens int             `json:"max_output_tokens"`
		Input           json.RawMessage `json:"input"`
		Tools           []struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	r := Request{Format: FormatResponses, Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxOutputTokens}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.Parameters})
	}
	var system []string
	if in.Instructions != "" {
		system = append(system, in.Instructions)
	}
	if firstByte(in.Input) == '"' {
		var s string
		_ = json.Unmarshal(in.Input, &s)
		r.Messages = append(r.Messages, Message{Role: "user", Text: s, Texts: []string{s}})
		r.System = strings.Join(system, "\n")
		return r, nil
	}
	var items []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Output    json.RawMessage `json:"output"`
		Summary   []struct {
			Text string `json:"text"`
		} `json:"summary"`
		EncryptedContent string `json:"encrypted_content"`
	}
	if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return Request{}, fmt.Errorf("input is neither a string nor items: %w", err)
		}
	}
	// Reasoning, assistant messages and function calls that follow one
	// another are one assistant turn.
	assistant := func() *Message {
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" {
			return &r.Messages[n-1]
		}
		r.Messages = append(r.Messages, Message{Role: "assistant"})
		return &r.Messages[len(r.Messages)-1]
	}
	for i, it := range items {
		switch {
		case it.Type == "reasoning":
			var texts []string
			for _, s := range it.Summary {
				texts = append(texts, s.Text)
			}
			m := assistant()
			m.Thinking = append(m.Thinking, Thinking{Text: strings.Join(texts, "\n"), Encrypted: it.EncryptedContent})
		case it.Type == "function_call":
			m := assistant()
			m.ToolCalls = append(m.ToolCalls, ReceivedCall{ID: it.CallID, Name: it.Name, Input: json.RawMessage(it.Arguments)})
		case it.Type == "function_call_output":
			texts, imgs, err := responsesContent(it.Output)
			if err != nil {
				return Request{}, fmt.Errorf("input[%d]: %w", i, err)
			}
			r.Messages = append(r.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ToolCallID: it.CallID, Content: strings.Join(texts, "\n"), Images: imgs}}})
		case it.Type == "message" || it.Type == "":
			texts, imgs, err := responsesContent(it.Content)
			if err != nil {
				return Request{}, fmt.Errorf("input[%d]: %w", i, err)
			}
			switch it.Role {
			case "system", "developer":
				system = append(system, texts...)
			case "assistant":
				m := assistant()
				m.Texts = append(m.Texts, texts...)
				m.Text = strings.Join(m.Texts, "\n")
			default:
				r.Messages = append(r.Messages, Message{Role: it.Role, Text: strings.Join(texts, "\n"), Texts: texts, Images: imgs})
			}
		default:
			return Request{}, fmt.Errorf("input[%d] has type %q, which llmtest does not know", i, it.Type)
		}
	}
	r.System = strings.Join(system, "\n")
	return r, nil
}

// responsesContent decodes a message's content or a function call's output:
// a string, or parts (input_text, output_text, input_image with a data URL).
func responsesContent(raw json.RawMessage) ([]string, []Image, error) {
	switch firstByte(raw) {
	case 0:
		return nil, nil, nil
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return []string{s}, nil, err
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL string `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, nil, fmt.Errorf("content is neither a string nor parts: %w", err)
	}
	var texts []string
	var imgs []Image
	for _, p := range parts {
		switch p.Type {
		case "input_text", "output_text":
			texts = append(texts, p.Text)
		case "input_image":
			img, err := dataURLImage(p.ImageURL)
			if err != nil {
				return nil, nil, err
			}
			imgs = append(imgs, img)
		default:
			return nil, nil, fmt.Errorf("content part of type %q, which llmtest does not know", p.Type)
		}
	}
	return texts, imgs, nil
}

func dataURLImage(u string) (Image, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	mt, enc, _ := strings.Cut(meta, ";")
	if !ok || enc != "base64" {
		return Image{}, fmt.Errorf("image_url is not a base64 data URL: %.40q", u)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, fmt.Errorf("image_url data is not base64: %w", err)
	}
	return Image{MediaType: mt, Data: b}, nil
}

// responsesUsage follows OpenAI: input_tokens includes the cached tokens,
// output_tokens the reasoning tokens.
func (rp reply) responsesUsage(reasoning int64) obj {
	in := rp.usage.InputTokens + rp.usage.CacheReadTokens
	return obj{
		"input_tokens":          in,
		"input_tokens_details":  obj{"cached_tokens": rp.usage.CacheReadTokens},
		"output_tokens":         rp.usage.OutputTokens,
		"output_tokens_details": obj{"reasoning_tokens": min(reasoning, rp.usage.OutputTokens)},
		"total_tokens":          in + rp.usage.OutputTokens,
	}
}

func writeResponses(ctx context.Context, w http.ResponseWriter, req *Request, t Turn, rp reply) {
	var opts struct {
		Include []string `json:"include"`
	}
	_ = json.Unmarshal(req.Raw, &opts)
	encrypted := slices.Contains(opts.Include, "reasoning.encrypted_content")

	created := time.Now().Unix()
	id := fmt.Sprintf("resp_llmtest_%d", req.Index)
	response := func(status string, output []any, usage any) obj {
		r := obj{
			"id": id, "object": "response", "created_at": created, "status": status, "model": rp.model,
			"output": output, "usage": usage, "error": nil, "incomplete_details": nil,
			"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
		}
		if status == "incomplete" {
			r["incomplete_details"] = obj{"reason": "max_output_tokens"}
		}
		return r
	}

	// The finished output items, in order.
	var items []obj
	reasoningID := fmt.Sprintf("rs_llmtest_%d", req.Index)
	if t.Thinking != "" {
		it := obj{"id": reasoningID, "type": "reasoning", "summary": []any{obj{"type": "summary_text", "text": t.Thinking}}}
		if encrypted {
			it["encrypted_content"] = rp.signature
		}
		items = append(items, it)
	}
	msgID := fmt.Sprintf("msg_llmtest_%d", req.Index)
	textPart := func(text string) obj {
		return obj{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
	}
	if t.Text != "" {
		items = append(items, obj{"id": msgID, "type": "message", "status": "completed", "role": "assistant",
			"content": []any{textPart(t.Text)}})
	}
	for i, c := range rp.calls {
		items = append(items, obj{"id": fmt.Sprintf("fc_llmtest_%d_%d", req.Index, i), "type": "function_call", "status": "completed",
			"call_id": c.id, "name": c.name, "arguments": c.input})
	}
	status := "completed"
	if rp.stop == StopMaxTokens {
		status = "incomplete"
	}
	output := make([]any, len(items))
	for i, it := range items {
		output[i] = it
	}
	usage := rp.responsesUsage(int64(len(t.Thinking)/4 + 1))

	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(mustJSON(response(status, output, usage)))
		return
	}

	e := newSSE(ctx, w, t)
	seq := 0
	send := func(typ string, data obj) bool {
		data["type"] = typ
		data["sequence_number"] = seq
		seq++
		return e.send(typ, mustJSON(data))
	}
	if !send("response.created", obj{"response": response("in_progress", []any{}, nil)}) {
		return
	}
	if !send("response.in_progress", obj{"response": response("in_progress", []any{}, nil)}) {
		return
	}
	if t.StreamError != nil {
		se := *t.StreamError
		if se.Code == "" {
			se.Code = cmp.Or(se.Type, "server_error")
		}
		if se.Message == "" {
			se.Message = "The server had an error while processing your request. Sorry about that!"
		}
		send("error", obj{"code": se.Code, "message": se.Message, "param": nil})
		return
	}
	for index, it := range items {
		itemID := it["id"]
		added := obj{}
		for k, v := range it {
			added[k] = v
		}
		switch it["type"] {
		case "reasoning":
			added["summary"] = []any{}
			delete(added, "encrypted_content")
		case "message":
			added["status"], added["content"] = "in_progress", []any{}
		case "function_call":
			added["status"], added["arguments"] = "in_progress", ""
		}
		if !send("response.output_item.added", obj{"output_index": index, "item": added}) {
			return
		}
		at := obj{"item_id": itemID, "output_index": index}
		with := func(kv obj) obj {
			out := obj{}
			for k, v := range at {
				out[k] = v
			}
			for k, v := range kv {
				out[k] = v
			}
			return out
		}
		switch it["type"] {
		case "reasoning":
			part := obj{"type": "summary_text", "text": ""}
			if !send("response.reasoning_summary_part.added", with(obj{"summary_index": 0, "part": part})) {
				return
			}
			for _, p := range fragments(t.Thinking, rp.fragment) {
				if !send("response.reasoning_summary_text.delta", with(obj{"summary_index": 0, "delta": p})) {
					return
				}
			}
			if !send("response.reasoning_summary_text.done", with(obj{"summary_index": 0, "text": t.Thinking})) {
				return
			}
			if !send("response.reasoning_summary_part.done", with(obj{"summary_index": 0, "part": obj{"type": "summary_text", "text": t.Thinking}})) {
				return
			}
		case "message":
			if !send("response.content_part.added", with(obj{"content_index": 0, "part": textPart("")})) {
				return
			}
			for _, p := range fragments(t.Text, rp.fragment) {
				if !send("response.output_text.delta", with(obj{"content_index": 0, "delta": p, "logprobs": []any{}})) {
					return
				}
			}
			if !send("response.output_text.done", with(obj{"content_index": 0, "text": t.Text, "logprobs": []any{}})) {
				return
			}
			if !send("response.content_part.done", with(obj{"content_index": 0, "part": textPart(t.Text)})) {
				return
			}
		case "function_call":
			args, _ := it["arguments"].(string)
			for _, p := range fragments(args, rp.fragment) {
				if !send("response.function_call_arguments.delta", with(obj{"delta": p})) {
					return
				}
			}
			if !send("response.function_call_arguments.done", with(obj{"arguments": args})) {
				return
			}
		}
		if !send("response.output_item.done", obj{"output_index": index, "item": it}) {
			return
		}
	}
	final := "response.completed"
	if status == "incomplete" {
		final = "response.incomplete"
	}
	send(final, obj{"response": response(status, output, usage)})
}
