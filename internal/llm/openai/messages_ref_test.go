package openai

import (
	sdk "github.com/openai/openai-go/v3"

	"github.com/synapse-agent/synapse/internal/llm"
)

// messages is the whole-history translation the cached encoder must agree
// with (cache_test.go compares the two); production builds the body from
// per-message encodings instead.
//
// It translates the history: one role "tool" message per result, in
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
	for _, m := range in {
		if m.Role != llm.RoleTool && len(pending) > 0 {
			out = append(out, sdk.UserMessage(pending))
			pending = nil
		}
		msg, parts := message(m, images)
		if msg != nil {
			out = append(out, *msg)
		}
		pending = append(pending, parts...)
	}
	if len(pending) > 0 {
		out = append(out, sdk.UserMessage(pending))
	}
	return out
}
