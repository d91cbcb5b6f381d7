package openai

import (
	"encoding/base64"
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/synapse-agent/synapse/internal/llm"
)

// params translates a provider-neutral request, all but the messages (see
// body).
func (p *Provider) params(req llm.Request) sdk.ChatCompletionNewParams {
	params := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.MaxTokens > 0 {
		// api.openai.com wants max_completion_tokens (reasoning models refuse
		// max_tokens); compatible servers widely know only max_tokens.
		if p.official {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema(t.InputSchema)}
		if t.Description != "" {
			fd.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(fd))
	}
	return params
}

func schema(raw json.RawMessage) shared.FunctionParameters {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// message translates one history message: the message sent for it (nil when
// none), and for a tool result with images on, the parts that go in the user
// message after the run of tool messages.
func message(m llm.Message, images bool) (*sdk.ChatCompletionMessageParamUnion, []sdk.ChatCompletionContentPartUnionParam) {
	switch m.Role {
	case llm.RoleUser:
		if images && len(m.Images) > 0 {
			// The prompt's pictures go in the message itself, after its text.
			u := sdk.UserMessage(append([]sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(m.Text)}, imageParts(m.Images)...))
			return &u, nil
		}
		u := sdk.UserMessage(m.Text)
		return &u, nil
	case llm.RoleTool:
		t := sdk.ToolMessage(m.Text, m.ToolCallID)
		var parts []sdk.ChatCompletionContentPartUnionParam
		if images && len(m.Images) > 0 {
			parts = append(parts, sdk.TextContentPart("Images returned by tool call "+m.ToolCallID+":"))
			parts = append(parts, imageParts(m.Images)...)
		}
		return &t, parts
	case llm.RoleAssistant:
		a := sdk.ChatCompletionAssistantMessageParam{}
		if m.Text != "" {
			a.Content.OfString = sdk.String(m.Text)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Input)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
		if m.Text == "" && len(a.ToolCalls) == 0 {
			return nil, nil // an empty assistant message is refused by most servers
		}
		return &sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return nil, nil
}

// imageParts are images as image_url parts with data URLs.
func imageParts(imgs []llm.Image) []sdk.ChatCompletionContentPartUnionParam {
	parts := make([]sdk.ChatCompletionContentPartUnionParam, 0, len(imgs))
	for _, img := range imgs {
		parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
			URL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}))
	}
	return parts
}
