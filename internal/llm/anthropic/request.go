package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// The request body is encoded here with plain structs and sent through the
// SDK with option.WithRequestBody: the SDK's reflective param encoder costs
// about six times more, which matters because the whole history is re-sent
// on every step (BenchmarkStreamHistory). The SDK still does transport, auth,
// headers, SSE decoding and error parsing.

// wireRequest is the request without its messages, which body appends
// (encoded per message, from the cache where possible). Stream comes first:
// the SDK sets "stream" again with sjson, which scans the body up to the key.
type wireRequest struct {
	Stream    bool          `json:"stream"`
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []wireBlock   `json:"system,omitempty"`
	Tools     []wireTool    `json:"tools,omitempty"`
	Thinking  *wireThinking `json:"thinking,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// imageSource is an image block's inline data.
type imageSource struct {
	Type      string `json:"type"` // "base64"
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // encoding/json writes []byte as base64
}

type wireMessage struct {
	Role    string      `json:"role"`
	Content []wireBlock `json:"content"`
}

// wireBlock is any content block; the type decides which fields are sent.
type wireBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Source       *imageSource    `json:"source,omitempty"`
	Content      []wireBlock     `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

func textBlock(s string) wireBlock { return wireBlock{Type: "text", Text: &s} }

// params translates a provider-neutral request to the wire request, all
// but the history (see body).
func (p *Provider) params(req llm.Request) wireRequest {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = llm.MaxOutputTokens(req.Model)
	}
	w := wireRequest{
		Model:     p.model(req.Model),
		MaxTokens: maxTokens,
		Stream:    true,
	}
	if req.ThinkingBudget > 0 {
		if adaptiveThinking(req.Model) {
			w.Thinking = &wireThinking{Type: "adaptive"}
		} else {
			w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: req.ThinkingBudget}
			// The budget counts against max_tokens and must stay below it.
			if req.ThinkingBudget >= w.MaxTokens {
				w.MaxTokens = req.ThinkingBudget + maxTokens
			}
		}
	}
	if req.System != "" {
		w.System = []wireBlock{textBlock(req.System)}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t.InputSchema)})
	}
	if !p.noCache {
		addCacheBreakpoints(&w)
	}
	return w
}

// adaptiveThinking reports models that want thinking.type=adaptive instead
// of a fixed budget.
func adaptiveThinking(model string) bool {
	model = llm.ClaudeName(model)
	return strings.HasPrefix(model, "claude-opus-4-6") || strings.HasPrefix(model, "claude-mythos")
}

// addCacheBreakpoints marks the end of the stable prefix for prompt caching:
// the tools (the last tool covers all of them), the system prompt, and (in
// markLastMessage) the last message, so that each turn reads the previous
// turn's prefix from cache. Anthropic allows four breakpoints; this uses at
// most three.
func addCacheBreakpoints(w *wireRequest) {
	if n := len(w.Tools); n > 0 {
		w.Tools[n-1].CacheControl = ephemeral
	}
	if n := len(w.System); n > 0 {
		w.System[n-1].CacheControl = ephemeral
	}
}

// markLastMessage puts the last breakpoint on the last block of m that can
// carry one.
func markLastMessage(m *wireMessage) {
	for i := len(m.Content) - 1; i >= 0; i-- {
		switch m.Content[i].Type {
		case "text", "tool_result", "tool_use":
			m.Content[i].CacheControl = ephemeral
			return
		}
		// thinking blocks cannot carry cache_control
	}
}

// inputSchema returns a JSON Schema object for a tool; a missing or invalid
// one becomes an empty object schema rather than a refused request.
func inputSchema(raw json.RawMessage) json.RawMessage {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
		b, err := json.Marshal(m)
		if err == nil {
			return b
		}
	}
	return raw
}

// messages translates the history. Tool results become tool_result blocks of
// a user message; consecutive user-side content (several results, then maybe
// a reminder text) is folded into one user message, as the API expects
// strictly alternating roles with all results of a turn together.
func messages(in []llm.Message) []wireMessage {
	out := make([]wireMessage, 0, len(in))
	for _, m := range in {
		role, blocks := wireBlocks(m)
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	return out
}

// wireBlocks is one history message's content blocks and the wire role
// they go under; none when the message sends nothing.
func wireBlocks(m llm.Message) (string, []wireBlock) {
	switch m.Role {
	case llm.RoleUser:
		// The prompt's pictures come first, then its text (which names them).
		var blocks []wireBlock
		for _, img := range m.Images {
			blocks = append(blocks, imageBlock(img))
		}
		if m.Text != "" { // the API refuses empty text blocks
			blocks = append(blocks, textBlock(m.Text))
		}
		return "user", blocks
	case llm.RoleTool:
		tr := wireBlock{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
		if m.Text != "" {
			tr.Content = []wireBlock{textBlock(m.Text)}
		}
		for _, img := range m.Images {
			tr.Content = append(tr.Content, imageBlock(img))
		}
		return "user", []wireBlock{tr}
	case llm.RoleAssistant:
		var blocks []wireBlock
		for _, th := range m.Thinking {
			switch {
			case th.Redacted != "":
				blocks = append(blocks, wireBlock{Type: "redacted_thinking", Data: th.Redacted})
			case th.Signature != "":
				text := th.Text
				blocks = append(blocks, wireBlock{Type: "thinking", Thinking: &text, Signature: th.Signature})
			}
			// A thinking block without a signature (from another provider) cannot be verified: drop it.
		}
		if m.Text != "" {
			blocks = append(blocks, textBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			input := c.Input
			if len(input) == 0 || !json.Valid(input) {
				input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, wireBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
		}
		return "assistant", blocks
	}
	return "", nil
}

func imageBlock(img llm.Image) wireBlock {
	return wireBlock{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MediaType, Data: img.Data}}
}
