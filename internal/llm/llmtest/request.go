package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Wire formats the server speaks.
const (
	FormatAnthropic = "anthropic"
	FormatOpenAI    = "openai"
	// FormatResponses is the OpenAI Responses API (POST /v1/responses).
	FormatResponses = "responses"
	// FormatBedrock is Claude on Amazon Bedrock (POST /model/{id}/invoke-with-response-stream).
	FormatBedrock = "bedrock"
	// FormatVertex is Claude on Google Vertex AI (POST …/publishers/anthropic/models/{id}:streamRawPredict).
	FormatVertex = "vertex"
)

// Request is one received request, decoded into a format-neutral shape.
type Request struct {
	Index     int    // 0-based order of arrival
	Format    string // FormatAnthropic, FormatOpenAI, FormatResponses, FormatGemini, FormatBedrock or FormatVertex
	Model     string // for Gemini, Bedrock and Vertex, the model id of the path
	Path      string // the URL path
	System    string
	Messages  []Message
	Tools     []Tool
	Stream    bool
	MaxTokens int
	Header    http.Header
	Raw       []byte // the request body as received
	// DecodeError says why the body could not be decoded (the fields above
	// Header are then partial).
	DecodeError string
}

// Message is one message of a received request. Anthropic tool results arrive
// in user messages; OpenAI ones as role "tool" messages (one result each).
type Message struct {
	Role        string
	Text        string   // text blocks joined with "\n"
	Texts       []string // the text blocks (parts) one by one, as sent
	Thinking    []Thinking
	ToolCalls   []ReceivedCall
	ToolResults []ToolResult
	Images      []Image // image blocks or parts of a user message
}

// Image is an image block or part the client sent.
type Image struct {
	MediaType string
	Data      []byte
}

// Thinking is a thinking block (Anthropic) or a reasoning item (Responses:
// Text is its summary) sent back by the client.
type Thinking struct {
	Text      string
	Signature string
	Redacted  string
	Encrypted string // a reasoning item's encrypted_content
}

// ReceivedCall is a tool call in an assistant message sent back by the client.
type ReceivedCall struct {
	ID    string
	Name  string
	Input json.RawMessage
	// Signature is the thoughtSignature sent with a Gemini functionCall part.
	Signature string
}

// ToolResult is a tool result sent by the client.
type ToolResult struct {
	ToolCallID string
	Content    string
	IsError    bool
	Images     []Image // image blocks inside the result (Anthropic)
}

// Tool is an offered tool.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// FirstUserText is the text of the first user message ("" when none).
func (r *Request) FirstUserText() string {
	for _, m := range r.Messages {
		if m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// LastUserText is the text of the last user message that has text.
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if m := r.Messages[i]; m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// ToolResults lists every tool result in the conversation, in order.
func (r *Request) ToolResults() []ToolResult {
	var out []ToolResult
	for _, m := range r.Messages {
		out = append(out, m.ToolResults...)
	}
	return out
}

// LastToolResults are the results sent after the last assistant message.
func (r *Request) LastToolResults() []ToolResult {
	var out []ToolResult
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role == "assistant" {
			break
		}
		out = append(append([]ToolResult(nil), m.ToolResults...), out...)
	}
	return out
}

// ToolResult returns the result for a call id.
func (r *Request) ToolResult(id string) (ToolResult, bool) {
	for _, tr := range r.ToolResults() {
		if tr.ToolCallID == id {
			return tr, true
		}
	}
	return ToolResult{}, false
}

// Turns counts the assistant messages in the conversation so far.
func (r *Request) Turns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// ToolNames lists the offered tools' names.
func (r *Request) ToolNames() []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// textOf decodes a content that is either a string or an array of blocks
// with "text" fields.
func textOf(raw json.RawMessage) string { return strings.Join(textsOf(raw), "\n") }

// textsOf is textOf's blocks one by one.
func textsOf(raw json.RawMessage) []string {
	switch firstByte(raw) {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return []string{s}
	case '[':
	default:
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" || b.Type == "" {
			parts = append(parts, b.Text)
		}
	}
	return parts
}

func decodeAnthropic(body []byte) (Request, error) {
	var in struct {
		Model     string          `json:"model"`
		System    json.RawMessage `json:"system"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	r := Request{Format: FormatAnthropic, Model: in.Model, System: textOf(in.System), MaxTokens: in.MaxTokens, Stream: in.Stream}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	for _, m := range in.Messages {
		msg := Message{Role: m.Role}
		if firstByte(m.Content) != '[' {
			msg.Texts = textsOf(m.Content)
			msg.Text = textOf(m.Content)
			r.Messages = append(r.Messages, msg)
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Thinking  string          `json:"thinking"`
			Signature string          `json:"signature"`
			Data      string          `json:"data"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return Request{}, fmt.Errorf("message content is neither a string nor blocks: %w", err)
		}
		imgs, err := anthropicImages(m.Content)
		if err != nil {
			return Request{}, err
		}
		msg.Images = imgs
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "thinking":
				msg.Thinking = append(msg.Thinking, Thinking{Text: b.Thinking, Signature: b.Signature})
			case "redacted_thinking":
				msg.Thinking = append(msg.Thinking, Thinking{Redacted: b.Data})
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ReceivedCall{ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				imgs, err := anthropicImages(b.Content)
				if err != nil {
					return Request{}, err
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolCallID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError, Images: imgs})
			}
		}
		msg.Text, msg.Texts = strings.Join(texts, "\n"), texts
		r.Messages = append(r.Messages, msg)
	}
	return r, nil
}

func decodeOpenAI(body []byte) (Request, error) {
	var in struct {
		Model               string `json:"model"`
		Stream              bool   `json:"stream"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Role             string          `json:"role"`
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCallID       string          `json:"tool_call_id"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("request body is not valid JSON: %w", err)
	}
	r := Request{Format: FormatOpenAI, Model: in.Model, Stream: in.Stream, MaxTokens: in.MaxCompletionTokens}
	if r.MaxTokens == 0 {
		r.MaxTokens = in.MaxTokens
	}
	for _, t := range in.Tools {
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	var system []string
	for _, m := range in.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, textOf(m.Content))
			continue
		case "tool":
			r.Messages = append(r.Messages, Message{Role: "tool", ToolResults: []ToolResult{{ToolCallID: m.ToolCallID, Content: textOf(m.Content)}}})
			continue
		}
		msg := Message{Role: m.Role, Text: textOf(m.Content), Texts: textsOf(m.Content)}
		imgs, err := openAIImages(m.Content)
		if err != nil {
			return Request{}, err
		}
		msg.Images = imgs
		if m.ReasoningContent != "" {
			msg.Thinking = []Thinking{{Text: m.ReasoningContent}}
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ReceivedCall{ID: c.ID, Name: c.Function.Name, Input: json.RawMessage(c.Function.Arguments)})
		}
		r.Messages = append(r.Messages, msg)
	}
	r.System = strings.Join(system, "\n")
	return r, nil
}

// anthropicImages decodes the image blocks of a message's or a tool_result's content.
func anthropicImages(content json.RawMessage) ([]Image, error) {
	if firstByte(content) != '[' {
		return nil, nil
	}
	var blocks []struct {
		Type   string `json:"type"`
		Source *struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		} `json:"source"`
	}
	if err := json.Unmarshal(content, &blocks); err != nil {
		return nil, fmt.Errorf("content is not blocks: %w", err)
	}
	var out []Image
	for _, b := range blocks {
		if b.Type != "image" {
			continue
		}
		if b.Source == nil || b.Source.Type != "base64" {
			return nil, fmt.Errorf("image block without a base64 source")
		}
		data, err := base64.StdEncoding.DecodeString(b.Source.Data)
		if err != nil {
			return nil, fmt.Errorf("image block data is not base64: %w", err)
		}
		out = append(out, Image{MediaType: b.Source.MediaType, Data: data})
	}
	return out, nil
}

// openAIImages decodes the image_url parts (data URLs) of a message's content.
func openAIImages(content json.RawMessage) ([]Image, error) {
	if firstByte(content) != '[' {
		return nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return nil, fmt.Errorf("message content is not parts: %w", err)
	}
	var out []Image
	for _, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		if p.ImageURL == nil {
			return nil, fmt.Errorf("image_url part without a url")
		}
		img, err := dataURLImage(p.ImageURL.URL)
		if err != nil {
			return nil, err
		}
		out = append(out, img)
	}
	return out, nil
}

// firstByte is the first non-space byte of a JSON value (0 when empty), which
// tells a string from an array without decoding twice.
func firstByte(raw json.RawMessage) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
