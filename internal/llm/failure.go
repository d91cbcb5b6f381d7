package llm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// APIFailure is what an adapter read from an error response, or from an
// error event inside a stream, in provider-neutral terms. Adapters decide the
// kind from their wire format; Typed builds the error with the common parts.
type APIFailure struct {
	Provider   string
	Status     int    // HTTP status; 0 for an error event inside a stream
	Detail     string // the server's message, or the status text
	RetryAfter time.Duration
	Err        error // the SDK's error, kept for errors.As
}

// NewAPIFailure reads a failure: a status below 400 (an error event in a 200
// stream) counts as none, an empty detail becomes the status text, and the
// retry-after headers (header may be nil) set RetryAfter.
func NewAPIFailure(provider string, status int, detail string, header http.Header, err error) APIFailure {
	if status < 400 {
		status = 0
	}
	if detail == "" && status != 0 {
		detail = http.StatusText(status)
	}
	f := APIFailure{Provider: provider, Status: status, Detail: detail, Err: err}
	if d, ok := ParseRetryAfter(header.Get("Retry-After-Ms"), header.Get("Retry-After"), time.Now()); ok {
		f.RetryAfter = d
	}
	return f
}

// Typed returns the failure as an *Error of kind whose message is what went
// wrong and the server's detail, and whose hint is what to do (may be empty).
func (f APIFailure) Typed(kind ErrorKind, what, hint string) *Error {
	msg := what
	if f.Detail != "" {
		msg += ": " + f.Detail
	}
	return &Error{Kind: kind, Provider: f.Provider, StatusCode: f.Status, RetryAfter: f.RetryAfter, Message: msg, Hint: hint, Err: f.Err}
}

// TransportMessages are an adapter's words for failures that came with no
// API response; they name its endpoint and the settings to check.
type TransportMessages struct {
	// Endpoint is the server's base URL and URLVar the setting that names
	// it, for the message of a stalled request.
	Endpoint, URLVar string
	Undecodable      string // the stream is not the wire format
	Closed           string // the connection ended before the response did
	Unreachable      string // any other failure to talk to the server
}

// TransportError classifies err, which came with no API response. A stream
// the client cannot decode is ErrProtocol and not worth retrying; a
// connection that closed early or never got through is ErrConnection and is.
func TransportError(provider string, err error, m TransportMessages) (*Error, bool) {
	var stall *StallError
	if errors.As(err, &stall) {
		return &Error{Kind: ErrStalled, Provider: provider, Err: err, Message: stalledMessage(stall, m)}, true
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, bufio.ErrTooLong) {
		return &Error{Kind: ErrProtocol, Provider: provider, Err: err, Message: m.Undecodable}, false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &Error{Kind: ErrConnection, Provider: provider, Err: err, Message: m.Closed}, true
	}
	return &Error{Kind: ErrConnection, Provider: provider, Err: err, Message: m.Unreachable}, true
}

// Excerpt trims a raw error body for a message: at most 200 bytes, marked
// with an ellipsis when cut.
func Excerpt(raw string) string {
	raw = strings.TrimSpace(raw)
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return raw
}

// BadRequestHint says what to do about a refused request (HTTP 400) given
// the server's detail and error code. The usual cause mid-conversation is a
// history that outgrew the model's context window; otherwise the history
// itself may be what the server refuses, and a new conversation avoids it.
func BadRequestHint(detail, code string) string {
	if promptTooLong(detail, code) {
		return "the conversation no longer fits the model's context window: /compact in the REPL summarises it, /clear starts a new one " +
			"(synapse run without --continue or --resume), or pick a model with a larger window (SYNAPSE_MAX_CONTEXT_WINDOW sets the size Synapse keeps to)"
	}
	return "if the request keeps being refused, start a new conversation (/clear in the REPL) in case the history is the cause, " +
		"and check the model and settings.json"
}

// stalledMessage names the silent endpoint and what to do about it.
func stalledMessage(s *StallError, m TransportMessages) string {
	secs := fmt.Sprintf("%gs", s.After.Seconds())
	what := "the stream from " + m.Endpoint + " stalled: no data for " + secs
	if s.Headers {
		what = m.Endpoint + " did not answer: no response within " + secs
	}
	return what + " (SYNAPSE_STREAM_IDLE_TIMEOUT); check that the server is up and reachable (" + m.URLVar +
		"), or raise SYNAPSE_STREAM_IDLE_TIMEOUT (seconds) for a slow local model"
}

// promptTooLong reports whether a refusal's detail or code says the request
// exceeded the model's context window.
func promptTooLong(detail, code string) bool {
	d := strings.ToLower(detail)
	for _, s := range []string{"prompt is too long", "input is too long", "context length", "context window", "context size", "too many tokens", "context_length_exceeded",
		"exceeds the maximum number of tokens", // Gemini's
	} {
		if strings.Contains(d, s) || strings.Contains(code, s) {
			return true
		}
	}
	return false
}

// IsPromptTooLong reports whether err is a provider's refusal of a request
// that did not fit the model's context window.
func IsPromptTooLong(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrBadRequest && promptTooLong(e.Message, "")
}
