package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/synapse-agent/synapse/internal/llm"
)

// block is one content block being assembled from stream events.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, or other
	text      strings.Builder
	signature string
	data      string
	id, name  string
	stopped   bool
	badInput  bool // tool_use whose assembled arguments are not valid JSON
}

// assembler turns stream events into llm events and a final response.
type assembler struct {
	site      site
	onEvent   func(llm.Event)
	maxTokens int64
	emitted   bool
	events    int

	model     string
	blocks    []*block // by index
	usage     llm.Usage
	stop      string
	delta     bool // message_delta seen
	completed bool // message_stop seen
}

func (a *assembler) emit(e llm.Event) {
	a.emitted = true
	a.onEvent(e)
}

func (a *assembler) block(i int64) (*block, *llm.Error) {
	if i < 0 || int(i) >= len(a.blocks) || a.blocks[i] == nil {
		return nil, a.site.protocolError(fmt.Sprintf("the stream referred to content block %d before starting it", i))
	}
	return a.blocks[i], nil
}

func (a *assembler) add(ev sdk.MessageStreamEventUnion) *llm.Error {
	a.events++
	switch ev.Type {
	case "message_start":
		a.model = ev.Message.Model
		u := ev.Message.Usage
		a.usage = llm.Usage{
			InputTokens:         u.InputTokens,
			OutputTokens:        u.OutputTokens,
			CacheReadTokens:     u.CacheReadInputTokens,
			CacheCreationTokens: u.CacheCreationInputTokens,
		}
	case "content_block_start":
		i := ev.Index
		if i < 0 || i > 1<<16 {
			return a.site.protocolError(fmt.Sprintf("content block index %d is out of range", i))
		}
		for int(i) >= len(a.blocks) {
			a.blocks = append(a.blocks, nil)
		}
		cb := ev.ContentBlock
		b := &block{kind: cb.Type}
		switch cb.Type {
		case "text":
			b.text.WriteString(cb.Text)
			if cb.Text != "" {
				a.emit(llm.Event{Type: llm.EventTextDelta, Text: cb.Text})
			}
		case "thinking":
			b.text.WriteString(cb.Thinking)
			b.signature = cb.Signature
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.id, b.name = cb.ID, cb.Name
			a.onEvent(llm.Event{Type: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: cb.ID, Name: cb.Name}})
		}
		a.blocks[i] = b
	case "content_block_delta":
		b, err := a.block(ev.Index)
		if err != nil {
			return err
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
			if d.Text != "" {
				a.emit(llm.Event{Type: llm.EventTextDelta, Text: d.Text})
			}
		case "thinking_delta":
			b.text.WriteString(d.Thinking)
			if d.Thinking != "" {
				a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: d.Thinking})
			}
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			b.text.WriteString(d.PartialJSON)
		}
	case "content_block_stop":
		b, err := a.block(ev.Index)
		if err != nil {
			return err
		}
		b.stopped = true
		if b.kind == "tool_use" {
			in := b.input()
			if !json.Valid(in) {
				// Reported at the end, once the stop reason tells truncation from garbage.
				b.badInput = true
				break
			}
			a.emit(llm.Event{Type: llm.EventToolCall, ToolCall: &llm.ToolCall{ID: b.id, Name: b.name, Input: in}})
		}
	case "message_delta":
		a.delta = true
		a.stop = string(ev.Delta.StopReason)
		u := ev.Usage
		// message_delta carries cumulative counts; fields it leaves at zero keep message_start's values.
		if u.OutputTokens > 0 {
			a.usage.OutputTokens = u.OutputTokens
		}
		if u.InputTokens > 0 {
			a.usage.InputTokens = u.InputTokens
		}
		if u.CacheReadInputTokens > 0 {
			a.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.CacheCreationInputTokens > 0 {
			a.usage.CacheCreationTokens = u.CacheCreationInputTokens
		}
		usage := a.usage
		a.emit(llm.Event{Type: llm.EventUsage, Usage: &usage})
	case "message_stop":
		a.completed = true
	}
	return nil
}

// input is the assembled tool input; no argument deltas means no arguments.
func (b *block) input() json.RawMessage {
	s := strings.TrimSpace(b.text.String())
	if s == "" {
		s = "{}"
	}
	return json.RawMessage(s)
}

func normalStop(s string) string {
	switch s {
	case "end_turn", "stop_sequence":
		return llm.StopEndTurn
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	}
	return llm.StopOther
}

// finish checks the stream was complete and builds the response.
func (a *assembler) finish() (llm.Response, *llm.Error) {
	if a.events == 0 {
		return llm.Response{}, a.site.protocolError("the server answered with no stream events: check that " + a.site.urlVar + " (" + a.site.endpoint + ") points at " + a.site.api)
	}
	stop := normalStop(a.stop)
	var truncated []string
	for _, b := range a.blocks {
		if b != nil && b.kind == "tool_use" && (b.badInput || !b.stopped) {
			truncated = append(truncated, b.name)
		}
	}
	if len(truncated) > 0 && stop == llm.StopMaxTokens {
		return llm.Response{}, &llm.Error{
			Kind:     llm.ErrTruncated,
			Provider: a.site.provider,
			Message: fmt.Sprintf("the model reached the output limit (max_tokens %d) in the middle of a %s tool call, so the call was not run; "+
				"raise the limit or ask for smaller steps (for example, write a large file in several parts)", a.maxTokens, truncated[len(truncated)-1]),
		}
	}
	if !a.completed {
		return llm.Response{}, &llm.Error{
			Kind:     llm.ErrConnection,
			Provider: a.site.provider,
			Message:  a.site.closed(),
		}
	}
	for _, b := range a.blocks {
		if b != nil && b.kind == "tool_use" && !b.stopped {
			return llm.Response{}, a.site.protocolError(fmt.Sprintf("the stream never finished the %s tool call it started", b.name))
		}
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	for _, b := range a.blocks {
		if b == nil {
			continue
		}
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
		case "thinking":
			msg.Thinking = append(msg.Thinking, llm.Thinking{Text: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			msg.Thinking = append(msg.Thinking, llm.Thinking{Redacted: b.data})
		case "tool_use":
			c := llm.ToolCall{ID: b.id, Name: b.name, Input: b.input()}
			if b.badInput {
				// Not valid JSON: the caller tells the model (llm.ToolCall).
				c.Input, c.InvalidInput = json.RawMessage("{}"), b.text.String()
				a.emit(llm.Event{Type: llm.EventToolCall, ToolCall: &c})
			}
			msg.ToolCalls = append(msg.ToolCalls, c)
		}
	}
	msg.Text = text.String()
	return llm.Response{Message: msg, Usage: a.usage, StopReason: stop, Model: a.model}, nil
}

func (s site) protocolError(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrProtocol, Provider: s.provider, Message: msg}
}
