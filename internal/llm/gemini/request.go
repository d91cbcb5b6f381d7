package gemini

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

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

// newRequest is the body of a generateContent request. Thinking summaries
// are asked for only with a thinking budget, as on the other providers; the
// output limit is the model's own unless the request sets one (Gemini
// counts thinking against it, so a low default would cut answers).
func newRequest(req llm.Request) (*generateRequest, error) {
	contents, err := toContents(req.Messages)
	if err != nil {
		return nil, err
	}
	out := &generateRequest{Contents: contents}
	if req.System != "" {
		out.SystemInstruction = &content{Role: roleUser, Parts: []part{{Text: req.System}}}
	}
	var gc generationConfig
	if req.MaxTokens > 0 {
		gc.MaxOutputTokens = min(req.MaxTokens, 1<<30)
	}
	if req.ThinkingBudget > 0 {
		gc.ThinkingConfig = &thinkingConfig{IncludeThoughts: true, ThinkingBudget: min(req.ThinkingBudget, 1<<30)}
	}
	if gc != (generationConfig{}) {
		out.GenerationConfig = &gc
	}
	if len(req.Tools) > 0 {
		var decls []functionDeclaration
		for _, t := range req.Tools {
			decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: t.InputSchema})
		}
		out.Tools = []tool{{FunctionDeclarations: decls}}
	}
	return out, nil
}

// The roles of contents.
const (
	roleUser  = "user"
	roleModel = "model"
)

// toContents maps the history to Gemini contents: assistant messages are
// "model" contents (text, then one functionCall part per call, each with
// the thought signature it came with); each run of tool messages is one
// "user" content of functionResponse parts, in the calls' order, named
// after their calls (the API pairs them by name and position, and by id
// when the model gave one). Thinking text is not sent back: Gemini keeps
// its reasoning in the signatures.
func toContents(msgs []llm.Message) ([]content, error) {
	names := map[string]string{} // call id → function name
	var out []content
	results := -1 // index in out of the open run of tool results
	for i, m := range msgs {
		if m.Role != llm.RoleTool {
			results = -1
		}
		switch m.Role {
		case llm.RoleUser:
			c := content{Role: roleUser}
			if m.Text != "" || len(m.Images) == 0 {
				c.Parts = append(c.Parts, part{Text: m.Text})
			}
			for _, img := range m.Images {
				c.Parts = append(c.Parts, part{InlineData: &blob{MIMEType: img.MediaType, Data: img.Data}})
			}
			out = append(out, c)
		case llm.RoleAssistant:
			c := content{Role: roleModel}
			if m.Text != "" {
				c.Parts = append(c.Parts, part{Text: m.Text})
			}
			signed := false
			for _, tc := range m.ToolCalls {
				signed = signed || tc.Signature != ""
			}
			for k, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				fc := &functionCall{Name: tc.Name}
				if tc.InvalidInput == "" && len(tc.Input) > 0 {
					args, err := objectArgs(tc.Input)
					if err != nil {
						return nil, fmt.Errorf("message %d: tool call %s: %w", i, tc.ID, err)
					}
					fc.Args = args
				}
				if !strings.HasPrefix(tc.ID, noIDPrefix) {
					fc.ID = tc.ID
				}
				p := part{FunctionCall: fc}
				switch {
				case tc.Signature != "":
					sig, err := base64.StdEncoding.DecodeString(tc.Signature)
					if err != nil {
						return nil, fmt.Errorf("message %d: tool call %s: thought signature is not base64: %w", i, tc.ID, err)
					}
					p.ThoughtSignature = sig
				case !signed && k == 0:
					p.ThoughtSignature = skipSignature()
				}
				c.Parts = append(c.Parts, p)
			}
			if len(c.Parts) == 0 {
				continue // an empty answer: the API refuses a content without parts
			}
			out = append(out, c)
		case llm.RoleTool:
			if results < 0 {
				out = append(out, content{Role: roleUser})
				results = len(out) - 1
			}
			fr := &functionResponse{Name: cmp.Or(names[m.ToolCallID], "unknown"), Response: map[string]any{"output": m.Text}}
			if m.IsError {
				fr.Response = map[string]any{"error": m.Text}
			}
			if !strings.HasPrefix(m.ToolCallID, noIDPrefix) {
				fr.ID = m.ToolCallID
			}
			out[results].Parts = append(out[results].Parts, part{FunctionResponse: fr})
		default:
			return nil, fmt.Errorf("message %d has role %q", i, m.Role)
		}
	}
	return out, nil
}

// objectArgs checks that a call's arguments are a JSON object (the API
// takes nothing else) and returns them compacted; an empty object is sent
// as none.
func objectArgs(in json.RawMessage) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(in, &fields); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	if len(fields) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, in); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	return buf.Bytes(), nil
}
