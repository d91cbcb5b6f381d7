package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/synapse-agent/synapse/internal/llm"
)

// noIDPrefix starts the ids this adapter gives function calls that came
// without one (Gemini 2.5 sends none); such ids are never sent back.
const noIDPrefix = "gemini_call_"

// skipSignature is the thought signature Google documents for function
// calls the model did not make itself (a history from another provider,
// after /model): it tells the API to skip the signature check instead of
// refusing the request. The documents write it as the JSON string itself,
// which the API reads as (URL-safe) base64; these are its bytes.
func skipSignature() []byte {
	b, _ := base64.URLEncoding.DecodeString("skip_thought_signature_validator")
	return b
}

// config is the request's generation settings. Thinking summaries are
// asked for only with a thinking budget, as on the other providers; the
// output limit is the model's own unless the request sets one (Gemini
// counts thinking against it, so a low default would cut answers).
func config(req llm.Request) *genai.GenerateContentConfig {
	off := false
	cfg := &genai.GenerateContentConfig{AutomaticContinuation: &off}
	if req.System != "" {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxTokens, 1<<30))
	}
	if req.ThinkingBudget > 0 {
		b := int32(min(req.ThinkingBudget, 1<<30))
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: &b}
	}
	if len(req.Tools) > 0 {
		var decls []*genai.FunctionDeclaration
		for _, t := range req.Tools {
			decls = append(decls, &genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: t.InputSchema})
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	return cfg
}

// toContents maps the history to Gemini contents: assistant messages are
// "model" contents (text, then one functionCall part per call, each with
// the thought signature it came with); each run of tool messages is one
// "user" content of functionResponse parts, in the calls' order, named
// after their calls (the API pairs them by name and position, and by id
// when the model gave one). Thinking text is not sent back: Gemini keeps
// its reasoning in the signatures.
func toContents(msgs []llm.Message) ([]*genai.Content, error) {
	names := map[string]string{} // call id → function name
	var out []*genai.Content
	var results *genai.Content // the open run of tool results
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			results = nil
		}
		switch m.Role {
		case llm.RoleUser:
			c := &genai.Content{Role: genai.RoleUser}
			if m.Text != "" || len(m.Images) == 0 {
				c.Parts = append(c.Parts, &genai.Part{Text: m.Text})
			}
			for _, img := range m.Images {
				c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: img.MediaType, Data: img.Data}})
			}
			out = append(out, c)
		case llm.RoleAssistant:
			c := &genai.Content{Role: genai.RoleModel}
			if m.Text != "" {
				c.Parts = append(c.Parts, &genai.Part{Text: m.Text})
			}
			signed := false
			for _, tc := range m.ToolCalls {
				signed = signed || tc.Signature != ""
			}
			for k, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				var args map[string]any
				if tc.InvalidInput == "" && len(tc.Input) > 0 {
					if err := json.Unmarshal(tc.Input, &args); err != nil {
						return nil, fmt.Errorf("message %d: tool call %s: arguments are not a JSON object: %w", i, tc.ID, err)
					}
				}
				fc := &genai.FunctionCall{Name: tc.Name, Args: args}
				if !strings.HasPrefix(tc.ID, noIDPrefix) {
					fc.ID = tc.ID
				}
				part := &genai.Part{FunctionCall: fc}
				switch {
				case tc.Signature != "":
					sig, err := base64.StdEncoding.DecodeString(tc.Signature)
					if err != nil {
						return nil, fmt.Errorf("message %d: tool call %s: thought signature is not base64: %w", i, tc.ID, err)
					}
					part.ThoughtSignature = sig
				case !signed && k == 0:
					part.ThoughtSignature = skipSignature()
				}
				c.Parts = append(c.Parts, part)
			}
			if len(c.Parts) == 0 {
				continue // an empty answer: the API refuses a content without parts
			}
			out = append(out, c)
		case llm.RoleTool:
			if results == nil {
				results = &genai.Content{Role: genai.RoleUser}
				out = append(out, results)
			}
			fr := &genai.FunctionResponse{Name: names[m.ToolCallID], Response: map[string]any{"output": m.Text}}
			if fr.Name == "" {
				fr.Name = "unknown"
			}
			if m.IsError {
				fr.Response = map[string]any{"error": m.Text}
			}
			if !strings.HasPrefix(m.ToolCallID, noIDPrefix) {
				fr.ID = m.ToolCallID
			}
			results.Parts = append(results.Parts, &genai.Part{FunctionResponse: fr})
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	return out, nil
}
