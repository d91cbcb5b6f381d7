// Package llm is the provider-neutral model interface: messages, tool calls,
// streaming events and usage. Adapters (anthropic, openai) translate to and
// from the wire formats; nothing here knows about HTTP.
package llm

import (
	"context"
	"encoding/json"
)

// Role of a message in the history.
type Role string

// Roles. A tool message carries the result of exactly one tool call.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one complete tool call made by the model. Input is always
// valid JSON: arguments that are not (a model's malformed output) are kept
// in InvalidInput, with Input "{}", so the caller can tell the model instead
// of failing the turn. Signature is Gemini's thought signature of the
// call (base64), sent back unchanged and only to Gemini.
type ToolCall struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	InvalidInput string          `json:"invalid_input,omitempty"`
	Signature    string          `json:"signature,omitempty"`
}

// Thinking is a block of the model's reasoning. Its opaque parts must be sent
// back unchanged, and only to the provider that made them: Signature and
// Redacted are Anthropic's (a thinking block's signature, a
// redacted_thinking block's data), Encrypted is an OpenAI Responses
// reasoning item's encrypted_content. Text is what the user may see (the
// thinking, or the reasoning summary).
type Thinking struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
	Encrypted string `json:"encrypted,omitempty"`
}

// Message is one entry of the conversation history.
type Message struct {
	Role Role `json:"role"`
	// Text is the user's text, the assistant's text, or the tool result's output.
	Text      string     `json:"text,omitempty"`
	Thinking  []Thinking `json:"thinking,omitempty"`   // assistant only
	ToolCalls []ToolCall `json:"tool_calls,omitempty"` // assistant only
	// ToolCallID and IsError are set on tool messages.
	ToolCallID string `json:"tool_call_id,omitempty"`
	IsError    bool   `json:"is_error,omitempty"`
	// Images a tool returned (MCP image content) or the user attached to a
	// prompt (tool and user messages). Adapters send them as image blocks
	// where the provider takes images; Text already names each one, which
	// is what other providers see.
	Images []Image `json:"images,omitempty"`
}

// Image is one picture handed to the model.
type Image struct {
	MediaType string `json:"media_type"` // image/png, image/jpeg, image/gif, image/webp
	Data      []byte `json:"data"`
}

// Usage counts tokens of one request (or a sum of requests).
type Usage struct {
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheReadTokens     int64 `json:"cache_read_tokens"`
	CacheCreationTokens int64 `json:"cache_creation_tokens"`
}

// Add returns u + o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:         u.InputTokens + o.InputTokens,
		OutputTokens:        u.OutputTokens + o.OutputTokens,
		CacheReadTokens:     u.CacheReadTokens + o.CacheReadTokens,
		CacheCreationTokens: u.CacheCreationTokens + o.CacheCreationTokens,
	}
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// ThinkingBudget > 0 enables extended thinking with that many tokens
	// (providers without it ignore the field).
	ThinkingBudget int
}

// Stop reasons, normalised across providers.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopOther     = "other"
)

// EventType names a streaming event.
type EventType int

// Streaming events, delivered in order while the response arrives.
const (
	EventTextDelta     EventType = iota + 1 // Text holds the new text
	EventThinkingDelta                      // Text holds new thinking text
	EventToolCall                           // ToolCall holds one complete call
	EventUsage                              // Usage holds the usage so far
	// EventRetry: Retry says a failed attempt (nothing shown yet) will be
	// retried after a wait. It may come before any other event.
	EventRetry
	// EventToolCallStart: a tool call began; ToolCall holds its ID and
	// Name, its input is still to come. The caller can get ready for the
	// call while the model writes it (the Bash tool starts the sandbox's
	// shell). It shows nothing, so it does not stop a failed attempt from
	// being retried, and may come again in the retry. Providers that
	// receive calls whole (Gemini) send none.
	EventToolCallStart
)

// Event is one streaming event.
type Event struct {
	Type     EventType
	Text     string
	ToolCall *ToolCall
	Usage    *Usage
	Retry    *RetryNotice
}

// Response is the assembled result of a streamed request.
type Response struct {
	Message    Message // role assistant
	Usage      Usage
	StopReason string
	Model      string
}

// Provider streams one request. onEvent is called synchronously, in order,
// from the calling goroutine's point of view (never concurrently); it may be nil.
// A max_tokens stop in the middle of a tool call is returned as an *Error of
// kind ErrTruncated, never a silently dropped call.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request, onEvent func(Event)) (Response, error)
}
