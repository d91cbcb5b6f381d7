package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"

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
	return llm.TransportError(Name, err, llm.TransportMessages{
		Endpoint: p.baseURL, URLVar: "ANTHROPIC_BASE_URL",
		Undecodable: "the server sent a stream event that is not valid JSON (" + err.Error() + "); check that ANTHROPIC_BASE_URL (" + p.baseURL + ") is an Anthropic Messages API endpoint",
		Closed:      "the connection closed before the response was complete; check the network or ANTHROPIC_BASE_URL and try again",
		Unreachable: "cannot reach " + p.baseURL + " (" + err.Error() + "); check the network and ANTHROPIC_BASE_URL",
	})
}

// fromAPI classifies an HTTP error response or an error event inside a stream.
func fromAPI(e *sdk.Error, err error) (*llm.Error, bool) {
	var header http.Header
	if e.Response != nil {
		header = e.Response.Header
	}
	f := llm.NewAPIFailure(Name, e.StatusCode, apiMessage(e.RawJSON()), header, err)
	kind, status := string(e.Type()), f.Status
	switch {
	case kind == "authentication_error" || status == http.StatusUnauthorized:
		return f.Typed(llm.ErrAuth, "the API key was refused", keyHint), false
	case kind == "permission_error" || status == http.StatusForbidden:
		return f.Typed(llm.ErrAuth, "the API key may not use this model or feature", keyHint+" and the key's permissions"), false
	case kind == "rate_limit_error" || status == http.StatusTooManyRequests:
		return f.Typed(llm.ErrRateLimit, "rate limited", "wait a minute and retry, or run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS)"), true
	case kind == "overloaded_error" || status == 529 || status == http.StatusServiceUnavailable:
		return f.Typed(llm.ErrOverloaded, "the API is overloaded", "try again in a little while"), true
	case kind == "not_found_error" || status == http.StatusNotFound:
		return f.Typed(llm.ErrStatus, "not found", `check the model name (--model, SYNAPSE_MODEL or "model" in settings.json) and ANTHROPIC_BASE_URL`), false
	case kind == "invalid_request_error" || kind == "request_too_large" || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return f.Typed(llm.ErrBadRequest, "the request was refused", llm.BadRequestHint(f.Detail, "")), false
	case kind == "api_error" || status >= 500:
		return f.Typed(llm.ErrStatus, "the API had an internal error", "try again"), true
	}
	return f.Typed(llm.ErrStatus, "the server reported an error", ""), status == http.StatusRequestTimeout || status == http.StatusConflict
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
	return llm.Excerpt(raw)
}
