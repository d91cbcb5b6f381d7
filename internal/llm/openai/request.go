package openai

import (
	"encoding/base64"
	"encoding/json"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/synapse-agent/synapse/internal/llm"
)

func (p *Provider) params(req llm.Request) sdk.ChatCompletionNewParams {
	params := sdk.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model),
		Messages:      messages(req.System, req.Messages, p.images),
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

// messages translates the history: one role "tool" message per result, in
// order after the assistant message that made the calls. Thinking is not sent
// back (compatible servers reject or ignore it). Tool messages carry text
// only, so with images on, the images of a turn's results follow its tool
// messages as one user message of image_url parts (data URLs).
func messages(system string, in []llm.Message, images bool) []sdk.ChatCompletionMessageParamUnion {
	var out []sdk.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, sdk.SystemMessage(system))
	}
	var pending []sdk.ChatCompletionContentPartUnionParam
	flush := func() {
		if len(pending) > 0 {
			out = append(out, sdk.UserMessage(pending))
			pending = nil
		}
	}
	for _, m := range in {
		if m.Role != llm.RoleTool {
			flush()
		}
		switch m.Role {
		case llm.RoleUser:
			out = append(out, sdk.UserMessage(m.Text))
		case llm.RoleTool:
			out = append(out, sdk.ToolMessage(m.Text, m.ToolCallID))
			if images && len(m.Images) > 0 {
				pending = append(pending, sdk.TextContentPart("Images returned by tool call "+m.ToolCallID+":"))
				for _, img := range m.Images {
					pending = append(pending, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
						URL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}))
				}
			}
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
				continue // an empty assistant message is refused by most servers
			}
			out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	flush()
	return out
}
