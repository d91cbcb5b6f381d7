package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3/responses"

	"github.com/synapse-agent/synapse/internal/llm"
)

// respItem is one output item of a Responses stream as it arrives.
type respItem struct {
	typ       string // message, reasoning, function_call, or one we do not use
	text      strings.Builder
	summary   strings.Builder
	parts     int64 // summary parts seen, to separate them
	encrypted string
	call      call
}

// respAssembler builds a response from Responses stream events. Deltas are
// shown as they come; each item's output_item.done is the authority on its
// content (and the only source for a server that sends no deltas).
type respAssembler struct {
	onEvent   func(llm.Event)
	maxTokens int64
	emitted   bool
	events    int

	model    string
	items    []*respItem
	byIndex  map[int64]*respItem
	finished bool   // response.completed or response.incomplete arrived
	reason   string // incomplete_details.reason
	usage    *llm.Usage
}

func (a *respAssembler) emit(e llm.Event) {
	a.emitted = true
	a.onEvent(e)
}

func (a *respAssembler) item(index int64) *respItem {
	if a.byIndex == nil {
		a.byIndex = map[int64]*respItem{}
	}
	it, ok := a.byIndex[index]
	if !ok {
		it = &respItem{}
		a.byIndex[index] = it
		a.items = append(a.items, it)
	}
	return it
}

// add takes one event; an error event comes back as a failure.
func (a *respAssembler) add(ev responses.ResponseStreamEventUnion) *failure {
	a.events++
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response.Model != "" {
			a.model = ev.Response.Model
		}
	case "response.output_item.added":
		it := a.item(ev.OutputIndex)
		it.typ = ev.Item.Type
		if it.typ == "function_call" {
			it.call.id, it.call.name = ev.Item.CallID, ev.Item.Name
			a.onEvent(llm.Event{Type: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: ev.Item.CallID, Name: ev.Item.Name}})
		}
	case "response.output_text.delta", "response.refusal.delta":
		it := a.item(ev.OutputIndex)
		it.text.WriteString(ev.Delta)
		if ev.Delta != "" {
			a.emit(llm.Event{Type: llm.EventTextDelta, Text: ev.Delta})
		}
	case "response.reasoning_summary_part.added":
		it := a.item(ev.OutputIndex)
		if it.parts++; it.parts > 1 && it.summary.Len() > 0 {
			it.summary.WriteString("\n\n")
			a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: "\n\n"})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		it := a.item(ev.OutputIndex)
		it.summary.WriteString(ev.Delta)
		if ev.Delta != "" {
			a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: ev.Delta})
		}
	case "response.function_call_arguments.delta":
		a.item(ev.OutputIndex).call.args.WriteString(ev.Delta)
	case "response.output_item.done":
		a.itemDone(a.item(ev.OutputIndex), ev.Item)
	case "response.completed", "response.incomplete":
		r := ev.Response
		if r.Model != "" {
			a.model = r.Model
		}
		if len(a.items) == 0 {
			// A whole response without item events (a gateway's plain JSON).
			for i, out := range r.Output {
				a.itemDone(a.item(int64(i)), out)
			}
		}
		a.finished, a.reason = true, r.IncompleteDetails.Reason
		if r.JSON.Usage.Valid() {
			u := r.Usage
			cached := u.InputTokensDetails.CachedTokens
			// input_tokens counts the cached ones; llm.Usage keeps them apart.
			a.usage = &llm.Usage{InputTokens: max(0, u.InputTokens-cached), OutputTokens: u.OutputTokens, CacheReadTokens: cached}
		}
	case "response.failed":
		e := ev.Response.Error
		return &failure{code: string(e.Code), message: e.Message}
	case "error":
		return &failure{code: ev.Code, message: ev.Message}
	}
	return nil
}

// itemDone completes an item from its final form, showing what no delta showed.
func (a *respAssembler) itemDone(it *respItem, out responses.ResponseOutputItemUnion) {
	it.typ = out.Type
	switch out.Type {
	case "message":
		var full strings.Builder
		for _, c := range out.Content {
			switch c.Type {
			case "output_text":
				full.WriteString(c.Text)
			case "refusal":
				full.WriteString(c.Refusal)
			}
		}
		if rest, ok := strings.CutPrefix(full.String(), it.text.String()); ok && rest != "" {
			it.text.WriteString(rest)
			a.emit(llm.Event{Type: llm.EventTextDelta, Text: rest})
		}
	case "reasoning":
		var texts []string
		for _, s := range out.Summary {
			texts = append(texts, s.Text)
		}
		if full := strings.Join(texts, "\n\n"); it.summary.Len() == 0 && full != "" {
			it.summary.WriteString(full)
			a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: full})
		}
		it.encrypted = out.EncryptedContent
	case "function_call":
		if out.CallID != "" {
			it.call.id = out.CallID
		}
		if out.Name != "" {
			it.call.name = out.Name
		}
		if args := out.Arguments.OfString; args != "" {
			it.call.args.Reset()
			it.call.args.WriteString(args)
		}
	}
}

func (a *respAssembler) finish(baseURL string) (llm.Response, *llm.Error) {
	if a.events == 0 {
		return llm.Response{}, &llm.Error{Kind: llm.ErrProtocol, Provider: Name,
			Message: "the server answered with no stream events: check that OPENAI_BASE_URL (" + baseURL + ") serves the Responses API (/responses), or set SYNAPSE_OPENAI_WIRE=chat"}
	}
	if !a.finished {
		return llm.Response{}, &llm.Error{Kind: llm.ErrConnection, Provider: Name,
			Message: "the stream ended before the response was complete (no response.completed); check the network or OPENAI_BASE_URL and try again"}
	}
	msg := llm.Message{Role: llm.RoleAssistant}
	var text strings.Builder
	var calls []*call
	for _, it := range a.items {
		switch it.typ {
		case "message":
			text.WriteString(it.text.String())
		case "reasoning":
			if it.summary.Len() > 0 || it.encrypted != "" {
				msg.Thinking = append(msg.Thinking, llm.Thinking{Text: it.summary.String(), Encrypted: it.encrypted})
			}
		case "function_call":
			calls = append(calls, &it.call)
		}
	}
	msg.Text = text.String()
	stop := llm.StopEndTurn
	switch {
	case a.reason == "max_output_tokens":
		stop = llm.StopMaxTokens
	case a.reason != "":
		stop = llm.StopOther
	case len(calls) > 0:
		stop = llm.StopToolUse
	}
	return finishResponse(a.emit, msg, calls, stop, a.model, a.maxTokens, a.usage, baseURL)
}

// streamFromResponse turns a whole response body (a gateway that ignored
// "stream": true) into its final event, which carries every output item.
func streamFromResponse(body []byte) ([]byte, error) {
	var r struct {
		Object string `json:"object"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	if r.Object != "response" {
		return nil, errors.New("not a response object")
	}
	event := "response.completed"
	switch r.Status {
	case "incomplete":
		event = "response.incomplete"
	case "failed":
		event = "response.failed"
	}
	data, err := json.Marshal(map[string]any{"type": event, "sequence_number": 0, "response": json.RawMessage(body)})
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	llm.SSEEvent(&buf, event, data)
	return buf.Bytes(), nil
}
