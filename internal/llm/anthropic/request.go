package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/synapse-agent/synapse/internal/llm"
)

// params translates a provider-neutral request to the SDK's parameters.
func (p *Provider) params(req llm.Request) sdk.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = llm.MaxOutputTokens(req.Model)
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(maxTokens),
		Messages:  messages(req.Messages),
	}
	if req.ThinkingBudget > 0 {
		if adaptiveThinking(req.Model) {
			params.Thinking = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{}}
		} else {
			params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(req.ThinkingBudget))
			// The budget counts against max_tokens and must stay below it.
			if int64(req.ThinkingBudget) >= params.MaxTokens {
				params.MaxTokens = int64(req.ThinkingBudget) + int64(maxTokens)
			}
		}
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.InputSchema)}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ToolUnionParam{OfTool: tp})
	}
	if !p.noCache {
		addCacheBreakpoints(&params)
	}
	return params
}

// adaptiveThinking reports models that want thinking.type=adaptive instead
// of a fixed budget (the SDK warns on stderr otherwise).
func adaptiveThinking(model string) bool {
	return strings.HasPrefix(model, "claude-opus-4-6") || strings.HasPrefix(model, "claude-mythos")
}

// addCacheBreakpoints marks the end of the stable prefix for prompt caching:
// the tools (the last tool covers all of them), the system prompt, and the
// last message, so that each turn reads the previous turn's prefix from cache.
// Anthropic allows four breakpoints; this uses at most three.
func addCacheBreakpoints(params *sdk.MessageNewParams) {
	cc := sdk.NewCacheControlEphemeralParam()
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	}
	if n := len(params.Messages); n > 0 {
		blocks := params.Messages[n-1].Content
		for i := len(blocks) - 1; i >= 0; i-- {
			b := &blocks[i]
			switch {
			case b.OfText != nil:
				b.OfText.CacheControl = cc
			case b.OfToolResult != nil:
				b.OfToolResult.CacheControl = cc
			case b.OfToolUse != nil:
				b.OfToolUse.CacheControl = cc
			default:
				continue // thinking blocks cannot carry cache_control
			}
			return
		}
	}
}

// inputSchema splits a JSON Schema object into the SDK's typed fields.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	}
	s := sdk.ToolInputSchemaParam{Properties: m["properties"]}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		if k == "type" || k == "properties" || k == "required" {
			continue
		}
		if s.ExtraFields == nil {
			s.ExtraFields = map[string]any{}
		}
		s.ExtraFields[k] = v
	}
	return s
}

// messages translates the history. Tool results become tool_result blocks of
// a user message; consecutive user-side content (several results, then maybe
// a reminder text) is folded into one user message, as the API expects
// strictly alternating roles with all results of a turn together.
func messages(in []llm.Message) []sdk.MessageParam {
	var out []sdk.MessageParam
	appendBlocks := func(role sdk.MessageParamRole, blocks ...sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range in {
		switch m.Role {
		case llm.RoleUser:
			if m.Text != "" { // the API refuses empty text blocks
				appendBlocks(sdk.MessageParamRoleUser, sdk.NewTextBlock(m.Text))
			}
		case llm.RoleTool:
			tr := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Text != "" {
				tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Text}}}
			}
			if m.IsError {
				tr.IsError = sdk.Bool(true)
			}
			appendBlocks(sdk.MessageParamRoleUser, sdk.ContentBlockParamUnion{OfToolResult: &tr})
		case llm.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			for _, th := range m.Thinking {
				switch {
				case th.Redacted != "":
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(th.Redacted))
				case th.Signature != "":
					blocks = append(blocks, sdk.NewThinkingBlock(th.Signature, th.Text))
				}
				// A thinking block without a signature (from another provider) cannot be verified: drop it.
			}
			if m.Text != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				input := c.Input
				if len(input) == 0 || !json.Valid(input) {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, input, c.Name))
			}
			appendBlocks(sdk.MessageParamRoleAssistant, blocks...)
		}
	}
	return out
}
