package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"

	"github.com/synapse-agent/synapse/internal/llm"
)

type call struct {
	id, name string
	args     strings.Builder
}

type assembler struct {
	onEvent   func(llm.Event)
	maxTokens int64
	emitted   bool
	chunks    int

	model    string
	text     strings.Builder
	thinking strings.Builder
	calls    []*call
	byIndex  map[int64]int // fragment index → position in calls
	reason   string        // finish_reason
	usage    *llm.Usage
}

func (a *assembler) emit(e llm.Event) {
	a.emitted = true
	a.onEvent(e)
}

func (a *assembler) add(ch sdk.ChatCompletionChunk) {
	a.chunks++
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.JSON.Usage.Valid() {
		u := ch.Usage
		cached := u.PromptTokensDetails.CachedTokens
		// OpenAI counts cached tokens inside prompt_tokens; llm.Usage keeps them apart.
		a.usage = &llm.Usage{
			InputTokens:     max(0, u.PromptTokens-cached),
			OutputTokens:    u.CompletionTokens,
			CacheReadTokens: cached,
		}
	}
	for _, choice := range ch.Choices {
		if choice.Index != 0 {
			continue // n > 1 is never requested
		}
		d := choice.Delta
		if r := reasoning(d); r != "" {
			a.thinking.WriteString(r)
			a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: r})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			a.emit(llm.Event{Type: llm.EventTextDelta, Text: d.Content})
		}
		for _, tc := range d.ToolCalls {
			a.fragment(tc)
		}
		if choice.FinishReason != "" {
			a.reason = choice.FinishReason
		}
	}
}

// fragment adds one tool-call fragment. Fragments of a call share an index;
// a fragment with a new id at a used index starts another call (some
// compatible servers send every whole call with index 0).
func (a *assembler) fragment(tc sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]int{}
	}
	pos, ok := a.byIndex[tc.Index]
	if !ok || (tc.ID != "" && a.calls[pos].id != "" && a.calls[pos].id != tc.ID) {
		a.calls = append(a.calls, &call{})
		pos = len(a.calls) - 1
		a.byIndex[tc.Index] = pos
		a.onEvent(llm.Event{Type: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: tc.ID, Name: tc.Function.Name}})
	}
	c := a.calls[pos]
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name += tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
}

// reasoning reads the non-standard thinking deltas of vLLM/DeepSeek
// (reasoning_content) and Ollama (reasoning).
func reasoning(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

func (c *call) input() json.RawMessage {
	s := strings.TrimSpace(c.args.String())
	if s == "" {
		s = "{}"
	}
	return json.RawMessage(s)
}

func normalStop(finish string, hasCalls bool) string {
	switch finish {
	case "tool_calls", "function_call":
		return llm.StopToolUse
	case "length":
		return llm.StopMaxTokens
	case "stop", "eos", "":
		// Some compatible servers (older Ollama) say "stop" after tool calls.
		if hasCalls {
			return llm.StopToolUse
		}
		return llm.StopEndTurn
	}
	return llm.StopOther
}

// toolCalls checks the assembled calls: a call cut by the output limit is
// an ErrTruncated, a nameless one a protocol error, arguments that are not
// JSON an InvalidInput for the agent to report.
func toolCalls(calls []*call, stop string, maxTokens int64, baseURL string) ([]llm.ToolCall, *llm.Error) {
	var out []llm.ToolCall
	for i, c := range calls {
		in := c.input()
		valid := json.Valid(in)
		if !valid || c.name == "" {
			what := c.name
			if what == "" {
				what = "an unnamed"
			}
			if stop == llm.StopMaxTokens {
				return nil, &llm.Error{Kind: llm.ErrTruncated, Provider: Name,
					Message: fmt.Sprintf("the model reached the output limit (max_tokens %d) in the middle of a %s tool call, so the call was not run; "+
						"raise the limit or ask for smaller steps (for example, write a large file in several parts)", maxTokens, what)}
			}
			if c.name == "" {
				return nil, &llm.Error{Kind: llm.ErrProtocol, Provider: Name,
					Message: "the server sent a tool call without a function name; check that OPENAI_BASE_URL (" + baseURL + ") serves a model with tool calling"}
			}
		}
		if c.id == "" {
			c.id = fmt.Sprintf("call_%d", i) // some local servers omit ids
		}
		tc := llm.ToolCall{ID: c.id, Name: c.name, Input: in}
		if !valid {
			// Not valid JSON: the caller tells the model (llm.ToolCall).
			tc.Input, tc.InvalidInput = json.RawMessage("{}"), c.args.String()
		}
		out = append(out, tc)
	}
	return out, nil
}

func (a *assembler) finish(baseURL string) (llm.Response, *llm.Error) {
	if a.chunks == 0 {
		return llm.Response{}, &llm.Error{Kind: llm.ErrProtocol, Provider: Name,
			Message: "the server answered with no stream chunks: check that OPENAI_BASE_URL (" + baseURL + ") is an OpenAI-compatible endpoint (it usually ends in /v1)"}
	}
	if a.reason == "" {
		return llm.Response{}, &llm.Error{Kind: llm.ErrConnection, Provider: Name,
			Message: "the stream ended before the response was complete (no finish_reason); check the network or OPENAI_BASE_URL and try again"}
	}
	stop := normalStop(a.reason, len(a.calls) > 0)
	msg := llm.Message{Role: llm.RoleAssistant, Text: a.text.String()}
	if a.thinking.Len() > 0 {
		msg.Thinking = []llm.Thinking{{Text: a.thinking.String()}}
	}
	return finishResponse(a.emit, msg, a.calls, stop, a.model, a.maxTokens, a.usage, baseURL)
}

// finishResponse completes a streamed response of either wire: the tool calls are
// checked and emitted now, in order (they are whole only once the stream
// is), then the usage.
func finishResponse(emit func(llm.Event), msg llm.Message, calls []*call, stop, model string, maxTokens int64, usage *llm.Usage, baseURL string) (llm.Response, *llm.Error) {
	tcs, err := toolCalls(calls, stop, maxTokens, baseURL)
	if err != nil {
		return llm.Response{}, err
	}
	msg.ToolCalls = tcs
	for i := range msg.ToolCalls {
		tc := msg.ToolCalls[i]
		emit(llm.Event{Type: llm.EventToolCall, ToolCall: &tc})
	}
	resp := llm.Response{Message: msg, StopReason: stop, Model: model}
	if usage != nil {
		resp.Usage = *usage
		u := *usage
		emit(llm.Event{Type: llm.EventUsage, Usage: &u})
	}
	return resp, nil
}
