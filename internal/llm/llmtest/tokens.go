package llmtest

import (
	"fmt"
	"net/http"
)

// Token counting for LimitTokens. It is the agent's own estimate
// (internal/contextmgr: four bytes a token, a flat overhead per message and
// per tool call, a mid-sized screenshot per image), rounded up and charged
// for every block rather than every wire message, so it never counts less
// than the agent does: an agent that keeps its estimate under the limit is
// never refused, one that does not is.
const (
	bytesPerToken  = 4
	blockOverhead  = 8
	imageTokens    = 1600
	toolSpecTokens = 8
)

func tokensOf(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// EstimateTokens is the size in tokens LimitTokens holds a request to.
func EstimateTokens(r *Request) int {
	n := tokensOf(len(r.System))
	for _, t := range r.Tools {
		n += tokensOf(len(t.Name)) + tokensOf(len(t.Description)) + tokensOf(len(t.Schema)) + toolSpecTokens
	}
	for _, m := range r.Messages {
		n += blockOverhead
		for _, s := range m.Texts {
			n += tokensOf(len(s)) + blockOverhead
		}
		for _, th := range m.Thinking {
			n += tokensOf(len(th.Text)+len(th.Signature)+len(th.Redacted)) + blockOverhead
		}
		for _, c := range m.ToolCalls {
			n += tokensOf(len(c.Input)+len(c.Name)+len(c.ID)) + blockOverhead
		}
		for _, tr := range m.ToolResults {
			n += tokensOf(len(tr.Content)) + blockOverhead + len(tr.Images)*imageTokens
		}
		n += len(m.Images) * imageTokens
	}
	return n
}

// LimitTokens makes the server refuse, as a real one does, every request
// whose EstimateTokens exceeds limit: HTTP 400 with the provider's "prompt
// is too long" error, without using a scripted turn. 0 lifts the limit.
func (s *Server) LimitTokens(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenLimit = limit
}

// Refused lists the indexes of the requests refused by LimitTokens.
func (s *Server) Refused() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.refused...)
}

// tooLong is the refusal of a request of n tokens over limit, worded as
// each API words it (the client recognises both).
func tooLong(format string, n, limit int) Turn {
	if format == FormatBedrock {
		return Turn{Status: http.StatusBadRequest, Error: APIError{Message: "Input is too long for requested model."}}
	}
	if format == FormatAnthropic || format == FormatVertex {
		return Turn{Status: http.StatusBadRequest, Error: APIError{Type: "invalid_request_error",
			Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", n, limit)}}
	}
	if format == FormatGemini {
		return Turn{Status: http.StatusBadRequest, Error: APIError{
			Message: fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", n, limit)}}
	}
	if format == FormatResponses {
		return Turn{Status: http.StatusBadRequest, Error: APIError{Type: "invalid_request_error", Code: "context_length_exceeded",
			Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}}
	}
	return Turn{Status: http.StatusBadRequest, Error: APIError{Type: "invalid_request_error",
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens.", limit, n)}}
}
