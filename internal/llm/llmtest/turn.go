package llmtest

import (
	"encoding/json"
	"time"
)

// Stop reasons a Turn may set. They are the Anthropic names; the OpenAI wire
// format maps them (tool_use → tool_calls, max_tokens → length, end_turn → stop).
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// ToolCall is one tool call the fake model makes.
type ToolCall struct {
	ID   string
	Name string
	// Input is marshalled to JSON (a json.RawMessage or []byte is sent as is).
	Input any
	// RawInput, when set, is sent verbatim instead of Input: it may be invalid
	// or truncated JSON, to test how a client copes.
	RawInput string
}

// Usage is what the fake server reports for a turn. Zero fields are filled
// with plausible counts derived from the request and reply sizes, so that
// usage totals are never all zero unless a test asks for it with Exact.
type Usage struct {
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
	// Exact reports the numbers above as they are, zeros included.
	Exact bool
}

// APIError is an error body, sent either as the HTTP response (Turn.Status)
// or as an in-stream error event (Turn.StreamError).
type APIError struct {
	Type    string // e.g. "overloaded_error"; derived from the status when empty
	Message string
	Code    string // the OpenAI wires' error code (e.g. "context_length_exceeded"); none when empty
}

// Turn is one scripted model reply.
type Turn struct {
	Text     string
	Thinking string
	// Signature of the thinking block (default "sig-" + a counter when
	// Thinking is set); on the Responses wire, the reasoning item's
	// encrypted_content, sent when the request includes it.
	Signature string
	// RedactedThinking adds a redacted_thinking block (Anthropic only).
	RedactedThinking string
	ToolCalls        []ToolCall
	// StopReason defaults to tool_use when there are tool calls, else end_turn.
	StopReason string
	Usage      Usage

	// Delay waits before answering (the wait ends early if the client goes away).
	Delay time.Duration
	// EventDelay waits between streamed events.
	EventDelay time.Duration
	// Fragment is the size in bytes of text and JSON fragments in a stream
	// (default 7: arguments always arrive in many pieces). UTF-8 is never split.
	Fragment int

	// Status, when ≥ 400, answers with that HTTP status and an error body.
	Status int
	// RetryAfter is sent as the retry-after header (seconds or an HTTP date);
	// RetryAfterMs as retry-after-ms.
	RetryAfter   string
	RetryAfterMs string
	// Error customises the error body of Status (type and message).
	Error APIError
	// StreamError, when set, sends an error event after the stream's first
	// events (Anthropic and Responses `event: error`, OpenAI `data: {"error":…}`).
	StreamError *APIError

	// CutAfter > 0 aborts the connection after that many streamed events
	// (a half-closed stream: no terminating chunk, the client sees an unexpected EOF).
	CutAfter int
	// PlainJSON answers even a streaming request with the whole
	// non-streaming JSON body (Content-Type application/json), as some
	// gateways and proxies do.
	PlainJSON bool
	// StallAfter > 0 stops sending after that many streamed events and
	// keeps the connection open, silent, until the client goes away (a
	// stalled provider). A long Delay is a server that never sends headers.
	StallAfter int
	// Raw, when set, is written verbatim as a text/event-stream body (or as a
	// JSON body for non-streaming requests), for malformed-input tests.
	Raw string

	// Reply, when set, decides the turn from the received request; the
	// returned turn is used instead (its own Reply is ignored).
	Reply func(req *Request) Turn
}

// TextTurn is a plain text answer.
func TextTurn(text string) Turn { return Turn{Text: text} }

// ToolTurn is a turn that makes the given tool calls.
func ToolTurn(calls ...ToolCall) Turn { return Turn{ToolCalls: calls} }

// BashCall is a call of the one Bash tool with a command.
func BashCall(id, command string) ToolCall {
	return ToolCall{ID: id, Name: "Bash", Input: map[string]any{"command": command}}
}

// BashTurn is a turn that runs the given commands, one Bash call each, with ids
// "<prefix>-1", "<prefix>-2", …
func BashTurn(prefix string, commands ...string) Turn {
	t := Turn{}
	for i, c := range commands {
		t.ToolCalls = append(t.ToolCalls, BashCall(prefix+"-"+itoa(i+1), c))
	}
	return t
}

// ErrorTurn answers with an HTTP error status.
func ErrorTurn(status int, message string) Turn {
	return Turn{Status: status, Error: APIError{Message: message}}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func (t Turn) stopReason() string {
	if t.StopReason != "" {
		return t.StopReason
	}
	if len(t.ToolCalls) > 0 {
		return StopToolUse
	}
	return StopEndTurn
}

func (t Turn) fragment() int {
	if t.Fragment > 0 {
		return t.Fragment
	}
	return 7
}

// input returns the JSON text of a call's arguments.
func (c ToolCall) input() string {
	if c.RawInput != "" {
		return c.RawInput
	}
	switch v := c.Input.(type) {
	case nil:
		return "{}"
	case json.RawMessage:
		return string(v)
	case []byte:
		return string(v)
	}
	b, err := json.Marshal(c.Input)
	if err != nil {
		return `{"llmtest_error":"cannot marshal input"}`
	}
	return string(b)
}

// fragments splits s into pieces of about n bytes without splitting a UTF-8 sequence.
func fragments(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	for len(s) > 0 {
		end := n
		if end >= len(s) {
			out = append(out, s)
			break
		}
		for end < len(s) && (s[end]&0xC0) == 0x80 { // continuation byte
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

func errorTypeFor(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529, 503:
		return "overloaded_error"
	}
	return "api_error"
}
