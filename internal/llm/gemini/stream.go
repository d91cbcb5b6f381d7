package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// assembler builds a response from streamed GenerateContentResponse chunks:
// text and thought parts are shown as they come; function calls arrive
// whole, are kept with their thought signatures, and are emitted once the
// stream is complete, then the usage.
type assembler struct {
	onEvent func(llm.Event)
	emitted bool
	chunks  int

	model         string
	text          strings.Builder
	thinking      strings.Builder
	calls         []llm.ToolCall
	finish        string
	finishMessage string
	blocked       string // promptFeedback.blockReason
	usage         *usageMetadata
	malformedCall bool
}

func (a *assembler) emit(e llm.Event) {
	a.emitted = true
	a.onEvent(e)
}

func (a *assembler) add(ch *generateResponse) {
	a.chunks++
	if ch.ModelVersion != "" {
		a.model = ch.ModelVersion
	}
	if ch.UsageMetadata != nil {
		a.usage = ch.UsageMetadata // each chunk carries the counts so far
	}
	if pf := ch.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.blocked = string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			a.blocked += ": " + pf.BlockReasonMessage
		}
	}
	if len(ch.Candidates) == 0 {
		return
	}
	c := ch.Candidates[0] // candidateCount is never set above 1
	if c.Content != nil {
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				a.call(p)
			case p.Thought:
				if p.Text != "" {
					a.thinking.WriteString(p.Text)
					a.emit(llm.Event{Type: llm.EventThinkingDelta, Text: p.Text})
				}
			case p.Text != "":
				a.text.WriteString(p.Text)
				a.emit(llm.Event{Type: llm.EventTextDelta, Text: p.Text})
			}
		}
	}
	if c.FinishReason != "" && c.FinishReason != finishUnspecified {
		a.finish, a.finishMessage = c.FinishReason, c.FinishMessage
	}
}

// call keeps one whole function call with its thought signature.
func (a *assembler) call(p part) {
	fc := p.FunctionCall
	tc := llm.ToolCall{ID: fc.ID, Name: fc.Name, Input: json.RawMessage("{}")}
	if in, err := objectArgs(fc.Args); err == nil && in != nil {
		tc.Input = in
	}
	if tc.ID == "" {
		tc.ID = newCallID()
	}
	if len(p.ThoughtSignature) > 0 {
		tc.Signature = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	a.calls = append(a.calls, tc)
}

// newCallID names a call the model gave no id: unique within a session.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return noIDPrefix + hex.EncodeToString(b[:])
}

func (a *assembler) finishResponse(baseURL string) (llm.Response, *llm.Error) {
	switch {
	case a.chunks == 0:
		return llm.Response{}, &llm.Error{Kind: llm.ErrProtocol, Provider: Name,
			Message: "the server answered with no stream events: check that GOOGLE_GEMINI_BASE_URL (" + baseURL + ") serves the Gemini API"}
	case a.blocked != "":
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name,
			Message: "the prompt was blocked (" + a.blocked + ")",
			Hint:    "rephrase the request, or start a new conversation (/clear in the REPL) in case the history is the cause"}
	case a.finish == "":
		return llm.Response{}, &llm.Error{Kind: llm.ErrConnection, Provider: Name,
			Message: "the stream ended before the response was complete (no finishReason); check the network or GOOGLE_GEMINI_BASE_URL and try again"}
	case a.finish == finishMalformed:
		a.malformedCall = true
		msg := "the model produced a malformed function call"
		if a.finishMessage != "" {
			msg += " (" + a.finishMessage + ")"
		}
		return llm.Response{}, &llm.Error{Kind: llm.ErrProtocol, Provider: Name, Message: msg,
			Hint: "send the request again; if it keeps happening, ask for smaller steps"}
	}
	stop := llm.StopOther
	switch a.finish {
	case finishStop:
		stop = llm.StopEndTurn
		if len(a.calls) > 0 {
			stop = llm.StopToolUse
		}
	case finishMaxTokens:
		stop = llm.StopMaxTokens
	}
	msg := llm.Message{Role: llm.RoleAssistant, Text: a.text.String(), ToolCalls: a.calls}
	if a.thinking.Len() > 0 {
		msg.Thinking = []llm.Thinking{{Text: a.thinking.String()}}
	}
	for i := range msg.ToolCalls {
		tc := msg.ToolCalls[i]
		a.emit(llm.Event{Type: llm.EventToolCall, ToolCall: &tc})
	}
	resp := llm.Response{Message: msg, StopReason: stop, Model: a.model}
	if u := a.usage; u != nil {
		cached := u.CachedContentTokenCount
		// promptTokenCount counts the cached tokens; llm.Usage keeps them
		// apart. Thoughts are billed as output.
		resp.Usage = llm.Usage{
			InputTokens:     max(0, u.PromptTokenCount-cached),
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: cached,
		}
		us := resp.Usage
		a.emit(llm.Event{Type: llm.EventUsage, Usage: &us})
	}
	return resp, nil
}
