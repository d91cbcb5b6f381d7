package openai

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Wires: the two OpenAI APIs a Provider speaks.
const (
	WireChat      = "chat"      // POST /chat/completions: OpenAI and every compatible server
	WireResponses = "responses" // POST /responses: OpenAI's API for its reasoning models
)

// responsesByDefault reports models that get the Responses wire on
// api.openai.com when none is chosen: OpenAI's reasoning models, whose
// reasoning the Chat Completions API cannot carry from one request to the
// next (a tool loop would make them think everything again).
func responsesByDefault(model string) bool {
	m := strings.ToLower(model)
	for _, p := range []string{"gpt-5", "o1", "o3", "o4", "codex"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// notReasoning reports OpenAI models known not to reason: they refuse a
// request that includes reasoning.encrypted_content. Any other model is
// asked for its reasoning items.
func notReasoning(model string) bool {
	m := strings.ToLower(model)
	return strings.HasPrefix(m, "gpt-4") || strings.HasPrefix(m, "gpt-3") || strings.HasPrefix(m, "chatgpt") || strings.Contains(m, "-chat")
}

// useResponses says which wire model's requests go on.
func (p *Provider) useResponses(model string) bool {
	switch p.wire {
	case WireResponses:
		return true
	case WireChat:
		return false
	}
	return p.official && responsesByDefault(model)
}

// responsesParams translates a request, all but the history (see
// responsesBody). Nothing is stored on OpenAI's side (store false): the
// whole history goes with every request, reasoning items included as the
// encrypted content the previous responses returned.
func (p *Provider) responsesParams(req llm.Request) responses.ResponseNewParams {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(req.Model),
		Store: sdk.Bool(false),
	}
	if req.System != "" {
		params.Instructions = sdk.String(req.System)
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = sdk.Int(int64(req.MaxTokens))
	}
	if !notReasoning(req.Model) {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		if req.ThinkingBudget > 0 {
			// Summaries are what a user can see of the reasoning; asked for
			// only when thinking was asked for (OpenAI may require a verified
			// organization for them).
			params.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
		}
	}
	if p.official && len(req.Messages) > 0 {
		params.PromptCacheKey = sdk.String(cacheKey(req))
	}
	for _, t := range req.Tools {
		// strict defaults to true on this API, which would refuse any
		// schema with optional properties.
		ft := responses.FunctionToolParam{Name: t.Name, Parameters: schema(t.InputSchema), Strict: sdk.Bool(false)}
		if t.Description != "" {
			ft.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: &ft})
	}
	return params
}

// cacheKey routes the requests of one conversation to the same prompt cache
// (prompt_cache_key): a conversation is known by its system prompt and its
// first message, which every step repeats; sub-agents and compacted
// histories get keys of their own, as their prefixes differ anyway.
func cacheKey(req llm.Request) string {
	h := sha256.New()
	h.Write([]byte(req.Model))
	h.Write([]byte{0})
	h.Write([]byte(req.System))
	h.Write([]byte{0})
	h.Write([]byte(req.Messages[0].Text))
	return "synapse-" + hex.EncodeToString(h.Sum(nil)[:16])
}

// Input items as sent. The SDK's item params are not used here because its
// reasoning item requires an id, and with store false an item id refers to
// nothing: items go without ids, as the stateless API takes them.
type messageItem struct {
	Type    string `json:"type"` // message
	Role    string `json:"role"`
	Content any    `json:"content"` // string or []contentPart
}

type contentPart struct {
	Type     string `json:"type"` // input_text, input_image
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type reasoningItem struct {
	Type             string        `json:"type"` // reasoning
	Summary          []summaryPart `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
}

type summaryPart struct {
	Type string `json:"type"` // summary_text
	Text string `json:"text"`
}

type functionCallItem struct {
	Type      string `json:"type"` // function_call
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionOutputItem struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output any    `json:"output"` // string or []contentPart
}

// inputItems translates one history message into the items sent for it,
// encoded and joined with commas ("" when none).
func inputItems(m llm.Message, images bool) ([]byte, error) {
	var items []any
	switch m.Role {
	case llm.RoleUser:
		var content any = m.Text
		if images && len(m.Images) > 0 {
			content = append([]contentPart{{Type: "input_text", Text: m.Text}}, imageInputs(m.Images)...)
		}
		items = append(items, messageItem{Type: "message", Role: "user", Content: content})
	case llm.RoleTool:
		var output any = m.Text
		if images && len(m.Images) > 0 {
			output = append([]contentPart{{Type: "input_text", Text: m.Text}}, imageInputs(m.Images)...)
		}
		items = append(items, functionOutputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: output})
	case llm.RoleAssistant:
		if m.Text == "" && len(m.ToolCalls) == 0 {
			// Nothing to send, and a reasoning item alone is refused:
			// it must be followed by the item it led to.
			return nil, nil
		}
		for _, th := range m.Thinking {
			if th.Encrypted == "" {
				continue // another provider's thinking, or a summary without its reasoning: not for this API
			}
			summary := []summaryPart{}
			if th.Text != "" {
				summary = append(summary, summaryPart{Type: "summary_text", Text: th.Text})
			}
			items = append(items, reasoningItem{Type: "reasoning", Summary: summary, EncryptedContent: th.Encrypted})
		}
		if m.Text != "" {
			items = append(items, messageItem{Type: "message", Role: "assistant", Content: m.Text})
		}
		for _, c := range m.ToolCalls {
			args := string(c.Input)
			if args == "" {
				args = "{}"
			}
			items = append(items, functionCallItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args})
		}
	}
	var buf bytes.Buffer
	for i, it := range items {
		b, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func imageInputs(imgs []llm.Image) []contentPart {
	parts := make([]contentPart, 0, len(imgs))
	for _, img := range imgs {
		parts = append(parts, contentPart{Type: "input_image", ImageURL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)})
	}
	return parts
}

// responsesBody is the JSON request body: params with the history as input
// items, each message's encoding reused from p.items while it is unchanged
// (llm.EncodeCache). "stream" comes first, as in body.
func (p *Provider) responsesBody(params responses.ResponseNewParams, msgs []llm.Message) ([]byte, error) {
	head, err := paramsHead(params)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString(`{"stream":true,"input":[`)
	encode := func(m llm.Message) ([]byte, error) { return inputItems(m, p.images) }
	err = p.items.Do(msgs, encode, func(conv [][]byte) error {
		size := len(head)
		for _, e := range conv {
			size += len(e) + 1
		}
		buf.Grow(size)
		n := 0
		for _, e := range conv {
			if len(e) == 0 {
				continue
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			buf.Write(e)
			n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	buf.WriteByte(']')
	if len(head) > 2 {
		buf.WriteByte(',')
	}
	buf.Write(head[1:])
	return buf.Bytes(), nil
}

func (p *Provider) streamResponses(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	params := p.responsesParams(req)
	body, err := p.responsesBody(params, req.Messages)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name, Err: err,
			Message: "cannot encode the request: " + err.Error()}
	}
	maxTokens := int64(req.MaxTokens)
	return p.retry.DoNotify(ctx, onEvent, func() (llm.Response, bool, *llm.AttemptError) {
		return p.onceResponses(ctx, body, maxTokens, onEvent)
	})
}

func (p *Provider) onceResponses(ctx context.Context, body []byte, maxTokens int64, onEvent func(llm.Event)) (llm.Response, bool, *llm.AttemptError) {
	stream := p.resp.NewStreaming(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", body))
	defer stream.Close()
	a := respAssembler{onEvent: onEvent, maxTokens: maxTokens}
	for stream.Next() {
		if f := a.add(stream.Current()); f != nil {
			le, retry := p.streamFailure(f)
			return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
		}
	}
	if err := stream.Err(); err != nil {
		le, retry := p.classify(err)
		if le.Kind == llm.ErrStatus && le.StatusCode == 404 {
			le.Hint += "; a server without the Responses API needs SYNAPSE_OPENAI_WIRE=chat"
		}
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
	}
	resp, err := a.finish(p.baseURL)
	if err != nil {
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: err, Retry: err.Kind == llm.ErrConnection}
	}
	return resp, a.emitted, nil
}

// failure is an error event in a stream (event error, or response.failed).
type failure struct{ code, message string }

func (p *Provider) streamFailure(f *failure) (*llm.Error, bool) {
	typ := f.code
	if f.code == "context_length_exceeded" || strings.HasPrefix(f.code, "invalid") {
		typ = "invalid_request_error" // the request itself, not the server
	}
	return p.fromStatus(0, typ, f.code, f.message, nil, nil)
}
