package gemini

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/synapse-agent/synapse/internal/llm"
)

const keyHint = `check GEMINI_API_KEY or GOOGLE_API_KEY (environment, or "env" in settings.json)`

// classify turns an attempt's error into a typed one and says whether
// another attempt may succeed. tp holds what the transport saw.
func (p *Provider) classify(err error, tp *tap) (*llm.Error, bool) {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		return fromAPIError(apiErr, tp, err)
	}
	m := llm.TransportMessages{
		Endpoint: p.baseURL, URLVar: "GOOGLE_GEMINI_BASE_URL",
		Undecodable: "the server sent a stream event that is not valid JSON (" + err.Error() + "); check that GOOGLE_GEMINI_BASE_URL (" + p.baseURL + ") serves the Gemini API",
		Closed:      "the connection closed before the response was complete; check the network or GOOGLE_GEMINI_BASE_URL and try again",
		Unreachable: "cannot reach " + p.baseURL + " (" + err.Error() + "); check the network and GOOGLE_GEMINI_BASE_URL",
	}
	if strings.Contains(err.Error(), "iterateResponseStream: invalid stream chunk") {
		return &llm.Error{Kind: llm.ErrProtocol, Provider: Name, Err: err, Message: m.Undecodable}, false
	}
	return llm.TransportError(Name, err, m)
}

// fromAPIError classifies Google's error object, from an error response or
// inside a 200 stream (tp.status < 400: the HTTP status is then not shown).
func fromAPIError(e genai.APIError, tp *tap, err error) (*llm.Error, bool) {
	status := 0
	if tp.status >= 400 {
		status = tp.status
	}
	f := llm.NewAPIFailure(Name, status, e.Message, tp.header, err)
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
