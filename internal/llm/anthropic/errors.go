package anthropic

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/synapse-agent/synapse/internal/llm"
)

const keyHint = `check ANTHROPIC_API_KEY (environment, or "env" in settings.json)`

// classify turns an SDK or transport error into a typed *llm.Error and says
// whether the attempt may be retried.
func (p *Provider) classify(err error) (*llm.Error, bool) {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return fromAPI(apiErr, err)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Kind: llm.ErrProtocol, Provider: Name, Err: err,
			Message: "the server sent a stream event that is not valid JSON (" + err.Error() + "); check that ANTHROPIC_BASE_URL (" + p.baseURL + ") is an Anthropic Messages API endpoint"}, false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &llm.Error{Kind: llm.ErrConnection, Provider: Name, Err: err,
			Message: "the connection closed before the response was complete; check the network or ANTHROPIC_BASE_URL and try again"}, true
	}
	return &llm.Error{Kind: llm.ErrConnection, Provider: Name, Err: err,
		Message: "cannot reach " + p.baseURL + " (" + err.Error() + "); check the network and ANTHROPIC_BASE_URL"}, true
}

// fromAPI classifies an HTTP error response or an error event inside a stream.
func fromAPI(e *sdk.Error, err error) (*llm.Error, bool) {
	status := e.StatusCode
	if status < 400 {
		status = 0 // an error event inside a 200 stream: no HTTP status to report
	}
	kind := string(e.Type())
	detail := apiMessage(e.RawJSON())
	if detail == "" && status != 0 {
		detail = http.StatusText(status)
	}
	out := &llm.Error{Provider: Name, StatusCode: status, Err: err}
	if e.Response != nil {
		if d, ok := llm.ParseRetryAfter(e.Response.Header.Get("Retry-After-Ms"), e.Response.Header.Get("Retry-After"), time.Now()); ok {
			out.RetryAfter = d
		}
	}
	with := func(s string) string {
		if detail == "" {
			return s
		}
		return s + ": " + detail
	}
	retry := false
	switch {
	case kind == "authentication_error" || status == http.StatusUnauthorized:
		out.Kind, out.Message = llm.ErrAuth, with("the API key was refused")+"; "+keyHint
	case kind == "permission_error" || status == http.StatusForbidden:
		out.Kind, out.Message = llm.ErrAuth, with("the API key may not use this model or feature")+"; "+keyHint+" and the key's permissions"
	case kind == "rate_limit_error" || status == http.StatusTooManyRequests:
		out.Kind, out.Message = llm.ErrRateLimit, with("rate limited")+"; wait a minute and retry, or run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS)"
		retry = true
	case kind == "overloaded_error" || status == 529 || status == http.StatusServiceUnavailable:
		out.Kind, out.Message = llm.ErrOverloaded, with("the API is overloaded")+"; try again in a little while"
		retry = true
	case kind == "not_found_error" || status == http.StatusNotFound:
		out.Kind, out.Message = llm.ErrStatus, with("not found")+`; check the model name (--model, SYNAPSE_MODEL or "model" in settings.json) and ANTHROPIC_BASE_URL`
	case kind == "invalid_request_error" || kind == "request_too_large" || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		out.Kind, out.Message = llm.ErrBadRequest, with("the request was refused")
	case kind == "api_error" || status >= 500:
		out.Kind, out.Message = llm.ErrStatus, with("the API had an internal error")+"; try again"
		retry = true
	default:
		out.Kind, out.Message = llm.ErrStatus, with("the server reported an error")
		retry = status == http.StatusRequestTimeout || status == http.StatusConflict
	}
	return out, retry
}

// apiMessage extracts error.message from an error body.
func apiMessage(raw string) string {
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &env) == nil && env.Error.Message != "" {
		return env.Error.Message
	}
	raw = strings.TrimSpace(raw)
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return raw
}
