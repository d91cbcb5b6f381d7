package llmtest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// The Gemini API (generativelanguage.googleapis.com), as Google's SDKs
// and internal/llm/gemini call it: POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse with the key in
// x-goog-api-key. The model is named by the path, not the body. A streamed
// reply is a series of `data: {GenerateContentResponse}` events (no event
// names, no terminator; Google separates them with CRLF CRLF), each with
// candidates[0].content.parts (text deltas; thought parts with "thought":
// true; whole functionCall parts, the first of a step carrying a
// thoughtSignature), the usageMetadata so far, modelVersion and responseId;
// the last one has the finishReason (STOP, also after function calls, or
// MAX_TOKENS). Errors are {"error": {"code", "message", "status",
// "details"}}, a 429's details with a google.rpc.RetryInfo retryDelay; in a
// stream, the same object as a data event. :generateContent answers the
// whole response as one JSON object.
//
// Like Gemini 3, the server refuses (400 INVALID_ARGUMENT) a history whose
// model turn has function calls but no thoughtSignature on the first one.

// FormatGemini is the Gemini API's streamGenerateContent.
const FormatGemini = "gemini"

// GeminiEnv returns environment entries pointing a Gemini client here.
func (s *Server) GeminiEnv() []string {
	return []string{"GOOGLE_GEMINI_BASE_URL=" + s.URL(), "GEMINI_API_KEY=llmtest-key"}
}

// geminiTarget reads the model and method of a Gemini API path
// (/v1beta/models/{model}:{method}); ok is false for any other path.
func geminiTarget(path string) (model string, stream, ok bool) {
	i := strings.Index(path, "/models/")
	if i < 0 {
		return "", false, false
	}
	model, method, found := strings.Cut(path[i+len("/models/"):], ":")
	if !found || model == "" {
		return "", false, false
	}
	switch method {
	case "streamGenerateContent":
		return model, true, true
	case "generateContent":
		return model, false, true
	}
	return "", false, false
}

// geminiStatus is the canonical status Google names an HTTP status with.
func geminiStatus(code int) string {
	switch code {
	case 400:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "NOT_IMPLEMENTED"
	case 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	return "INTERNAL"
}

// geminiError is Google's error body. retryAfter (seconds) becomes a
// RetryInfo detail, which is how the Gemini API says when to come back.
func geminiError(code int, e APIError, retryAfter string) obj {
	status := e.Code
	if status == "" {
		status = geminiStatus(code)
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(code)
	}
	body := obj{"code": code, "message": msg, "status": status}
	if retryAfter != "" {
		body["details"] = []any{obj{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryAfter + "s"}}
	}
	return obj{"error": body}
}

func writeGeminiError(w http.ResponseWriter, status int, e APIError, retryAfter string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(mustJSON(geminiError(status, e, retryAfter)))
}

func decodeGemini(body []byte) (Request, error) {
	type part struct {
		Text         string `json:"text"`
		Thought      bool   `json:"thought"`
		Signature    string `json:"thoughtSignature"`
		FunctionCall *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			ID       string `json:"id"`
			Name     string `json:"name"`
			Response struct {
				Output json.RawMessage `json:"output"`
				Error  json.RawMessage `json:"error"`
			} `json:"response"`
		} `json:"functionResponse"`
		InlineData *struct {
			MIMEType string `json:"mimeType"`
			Data     string `json:"data"`
		} `json:"inlineData"`
	}
	type content struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	var in struct {
		Contents          []content `json:"contents"`
		SystemInstruction *content  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			MaxOutputTokens int `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	r := Request{Format: FormatGemini, MaxTokens: in.GenerationConfig.MaxOutputTokens}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			r.Tools = append(r.Tools, Tool{Name: f.Name, Description: f.Description, Schema: schema})
		}
	}
	if in.SystemInstruction != nil {
		var texts []string
		for _, p := range in.SystemInstruction.Parts {
			texts = append(texts, p.Text)
		}
		r.System = strings.Join(texts, "\n")
	}
	for i, c := range in.Contents {
		msg := Message{Role: c.Role}
		switch c.Role {
		case "model":
			msg.Role = "assistant"
		case "user", "":
			msg.Role = "user"
		default:
			return Request{}, fmt.Errorf("contents[%d] has role %q, which the Gemini API does not know", i, c.Role)
		}
		var calls []ReceivedCall // the previous model turn's, to pair results without ids
		if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" {
			calls = r.Messages[n-1].ToolCalls
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				args := p.FunctionCall.Args
				if len(args) == 0 {
					args = json.RawMessage("{}")
				}
				msg.ToolCalls = append(msg.ToolCalls, ReceivedCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Input: args, Signature: p.Signature})
			case p.FunctionResponse != nil:
				fr := p.FunctionResponse
				tr := ToolResult{ToolCallID: fr.ID}
				if k := len(msg.ToolResults); tr.ToolCallID == "" && k < len(calls) {
					tr.ToolCallID = calls[k].ID
				}
				out := fr.Response.Output
				if len(fr.Response.Error) > 0 {
					out, tr.IsError = fr.Response.Error, true
				}
				if firstByte(out) == '"' {
					_ = json.Unmarshal(out, &tr.Content)
				} else {
					tr.Content = string(out)
				}
				msg.ToolResults = append(msg.ToolResults, tr)
			case p.InlineData != nil:
				data, err := base64.StdEncoding.DecodeString(p.InlineData.Data)
				if err != nil {
					return Request{}, fmt.Errorf("contents[%d]: inlineData is not base64: %w", i, err)
				}
				msg.Images = append(msg.Images, Image{MediaType: p.InlineData.MIMEType, Data: data})
			case p.Thought:
				msg.Thinking = append(msg.Thinking, Thinking{Text: p.Text, Signature: p.Signature})
			default:
				msg.Texts = append(msg.Texts, p.Text)
			}
		}
		msg.Text = strings.Join(msg.Texts, "\n")
		r.Messages = append(r.Messages, msg)
	}
	return r, nil
}

// missingSignature names the first model turn whose first function call
// has no thoughtSignature, which the Gemini API refuses ("" when none).
func missingSignature(r *Request) string {
	for i, m := range r.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ToolCalls[0].Signature == "" {
			return fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
				m.ToolCalls[0].Name, i+1)
		}
	}
	return ""
}

func geminiFinish(stop string) string {
	switch stop {
	case StopMaxTokens:
		return "MAX_TOKENS"
	case StopEndTurn, StopToolUse, "":
		return "STOP"
	}
	return stop
}

// geminiUsage follows Google: promptTokenCount includes the cached tokens,
// and the thoughts are counted apart from the candidates.
func (rp reply) geminiUsage(thoughts int64, final bool) obj {
	prompt := rp.usage.InputTokens + rp.usage.CacheReadTokens
	u := obj{"promptTokenCount": prompt, "totalTokenCount": prompt,
		"promptTokensDetails": []any{obj{"modality": "TEXT", "tokenCount": prompt}}}
	if rp.usage.CacheReadTokens > 0 {
		u["cachedContentTokenCount"] = rp.usage.CacheReadTokens
		u["cacheTokensDetails"] = []any{obj{"modality": "TEXT", "tokenCount": rp.usage.CacheReadTokens}}
	}
	if final {
		thoughts = min(thoughts, rp.usage.OutputTokens)
		candidates := rp.usage.OutputTokens - thoughts
		u["candidatesTokenCount"] = candidates
		if thoughts > 0 {
			u["thoughtsTokenCount"] = thoughts
		}
		u["totalTokenCount"] = prompt + rp.usage.OutputTokens
	}
	return u
}

func writeGemini(ctx context.Context, w http.ResponseWriter, req *Request, t Turn, rp reply) {
	full := decodedGemini(req)
	if msg := missingSignature(&full); msg != "" {
		writeGeminiError(w, http.StatusBadRequest, APIError{Message: msg}, "")
		return
	}
	signature := base64.StdEncoding.EncodeToString([]byte(rp.signature))
	if rp.signature == "" {
		signature = base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "sig-%d", req.Index))
	}
	respID := fmt.Sprintf("llmtest-gemini-%d", req.Index)
	var thoughts int64
	if t.Thinking != "" {
		thoughts = int64(len(t.Thinking)/4 + 1)
	}
	chunk := func(parts []any, finish string, final bool) obj {
		cand := obj{"content": obj{"parts": parts, "role": "model"}, "index": 0}
		if finish != "" {
			cand["finishReason"] = finish
		}
		return obj{"candidates": []any{cand}, "usageMetadata": rp.geminiUsage(thoughts, final), "modelVersion": rp.model, "responseId": respID}
	}
	callParts := func() []any {
		var parts []any
		for i, c := range rp.calls {
			fc := obj{"name": c.name, "args": json.RawMessage(c.input)}
			if !strings.HasPrefix(c.id, "call_llmtest_") { // an id the script chose is sent, as Gemini 3 does
				fc["id"] = c.id
			}
			p := obj{"functionCall": fc}
			if i == 0 {
				p["thoughtSignature"] = signature
			}
			parts = append(parts, p)
		}
		return parts
	}
	if !req.Stream {
		var parts []any
		if t.Thinking != "" {
			parts = append(parts, obj{"text": t.Thinking, "thought": true})
		}
		if t.Text != "" {
			parts = append(parts, obj{"text": t.Text})
		}
		parts = append(parts, callParts()...)
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(mustJSON(chunk(parts, geminiFinish(rp.stop), true)))
		return
	}

	e := newSSE(ctx, w, t)
	e.crlf = true
	send := func(parts []any, finish string, final bool) bool {
		return e.send("", mustJSON(chunk(parts, finish, final)))
	}
	if t.StreamError != nil {
		se := *t.StreamError
		if se.Message == "" {
			se.Message = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
		}
		code := http.StatusInternalServerError
		if se.Type == "overloaded_error" {
			code = http.StatusServiceUnavailable
		}
		if !send([]any{obj{"text": ""}}, "", false) {
			return
		}
		e.send("", mustJSON(geminiError(code, se, "")))
		return
	}
	for _, p := range fragments(t.Thinking, rp.fragment) {
		if !send([]any{obj{"text": p, "thought": true}}, "", false) {
			return
		}
	}
	texts := fragments(t.Text, rp.fragment)
	calls := callParts()
	for i, p := range texts {
		if i == len(texts)-1 && len(calls) == 0 {
			break // the last text comes with the finish
		}
		if !send([]any{obj{"text": p}}, "", false) {
			return
		}
	}
	var last []any
	if len(calls) > 0 {
		last = calls // whole calls, in the last chunk
	} else if len(texts) > 0 {
		last = []any{obj{"text": texts[len(texts)-1]}}
	} else {
		last = []any{obj{"text": ""}}
	}
	send(last, geminiFinish(rp.stop), true)
}

// decodedGemini decodes req's body (the server decodes lazily elsewhere;
// the signature check needs the history now).
func decodedGemini(req *Request) Request {
	d, err := decodeGemini(req.Raw)
	if err != nil {
		return Request{}
	}
	return d
}
