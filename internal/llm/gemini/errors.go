package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

const keyHint = `check GEMINI_API_KEY or GOOGLE_API_KEY (environment, or "env" in settings.json)`

// apiError is Google's error object ({"error": {…}}), from an error
// response or inside a 200 stream, with the HTTP status and headers it came
// with (retry-after lives there).
type apiError struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Status  string           `json:"status"`
	Details []map[string]any `json:"details"`

	httpStatus int // 0 inside a stream
	header     http.Header
}

func (e *apiError) Error() string {
	return fmt.Sprintf("Gemini API error %d %s: %s", e.Code, e.Status, e.Message)
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// readAPIError reads an error response: Google's error object, or any
// other body (a proxy's page) as the message.
func readAPIError(resp *http.Response) *apiError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &apiError{httpStatus: resp.StatusCode, header: resp.Header}
	var wrapped struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Error != nil {
		wrapped.Error.httpStatus, wrapped.Error.header = e.httpStatus, e.header
		return wrapped.Error
	}
	e.Code, e.Message = resp.StatusCode, llm.Excerpt(string(body))
	return e
}

// errBadChunk marks a stream line that is neither an event nor an error.
var errBadChunk = errors.New("invalid stream chunk")

// classify turns an attempt's error into a typed one and says whether
// another attempt may succeed.
func (p *Provider) classify(err error) (*llm.Error, bool) {
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		return fromAPIError(apiErr, err)
	}
	m := llm.TransportMessages{
		Endpoint: p.baseURL, URLVar: "GOOGLE_GEMINI_BASE_URL",
		Undecodable: "the server sent a stream event that is not valid JSON (" + err.Error() + "); check that GOOGLE_GEMINI_BASE_URL (" + p.baseURL + ") serves the Gemini API",
		Closed:      "the connection closed before the response was complete; check the network or GOOGLE_GEMINI_BASE_URL and try again",
		Unreachable: "cannot reach " + p.baseURL + " (" + err.Error() + "); check the network and GOOGLE_GEMINI_BASE_URL",
	}
	if errors.Is(err, errBadChunk) {
		return &llm.Error{Kind: llm.ErrProtocol, Provider: Name, Err: err, Message: m.Undecodable}, false
	}
	return llm.TransportError(Name, err, m)
}

// fromAPIError classifies Google's error object, from an error response or
// inside a 200 stream (the HTTP status is then not shown).
func fromAPIError(e *apiError, err error) (*llm.Error, bool) {
	status := 0
	if e.httpStatus >= 400 {
		status = e.httpStatus
	}
	f := llm.NewAPIFailure(Name, status, e.Message, e.header, err)
	if f.RetryAfter == 0 {
		f.RetryAfter = retryDelay(e.Details)
	}
	code := e.Code
	if code == 0 {
		code = status
	}
	switch {
	case code == http.StatusUnauthorized || e.Status == "UNAUTHENTICATED" || hasReason(e.Details, "API_KEY_INVALID") ||
		strings.Contains(e.Message, "API key not valid"):
		return f.Typed(llm.ErrAuth, "the API key was refused", keyHint), false
	case code == http.StatusForbidden || e.Status == "PERMISSION_DENIED":
		return f.Typed(llm.ErrAuth, "the API key may not use this model", keyHint+" and the key's project"), false
	case code == http.StatusTooManyRequests || e.Status == "RESOURCE_EXHAUSTED":
		return f.Typed(llm.ErrRateLimit, "rate limited or out of quota", "wait a minute and retry, run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS), or check the key's quota"), true
	case code == http.StatusServiceUnavailable || code == 529 || e.Status == "UNAVAILABLE":
		return f.Typed(llm.ErrOverloaded, "the model is overloaded", "try again in a little while"), true
	case code == http.StatusNotFound || e.Status == "NOT_FOUND":
		return f.Typed(llm.ErrStatus, "not found", `check the model name (--model, SYNAPSE_MODEL or "model" in settings.json) and GOOGLE_GEMINI_BASE_URL`), false
	case code == http.StatusBadRequest || e.Status == "INVALID_ARGUMENT" || e.Status == "FAILED_PRECONDITION":
		return f.Typed(llm.ErrBadRequest, "the request was refused", llm.BadRequestHint(f.Detail, "")), false
	case code >= 500 || code == 0:
		return f.Typed(llm.ErrStatus, "the server had an internal error", "try again"), true
	}
	return f.Typed(llm.ErrStatus, "the server reported an error", ""), code == http.StatusRequestTimeout || code == http.StatusConflict
}

// retryDelay reads a google.rpc.RetryInfo detail ("retryDelay": "30s").
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, _ := d["retryDelay"].(string); s != "" {
			if v, err := time.ParseDuration(s); err == nil && v > 0 {
				return v
			}
		}
	}
	return 0
}

// hasReason reports whether a google.rpc.ErrorInfo detail has reason.
func hasReason(details []map[string]any, reason string) bool {
	for _, d := range details {
		if r, _ := d["reason"].(string); r == reason {
			return true
		}
	}
	return false
}
