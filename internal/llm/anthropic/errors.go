package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/synapse-agent/synapse/internal/llm"
)

const keyHint = `check ANTHROPIC_API_KEY (environment, or "env" in settings.json)`

// site is where a provider's requests go, as its messages name it: the
// provider, the endpoint, the setting that overrides the endpoint, the API
// it should serve, the credentials it sends and what to check when they are
// refused.
type site struct {
	provider, endpoint, urlVar, api string
	refused, forbidden              string // what a 401 and a 403 mean
	authHint, accessHint            string // what to check then
}

func newSite(provider, endpoint, urlVar, api, cred, authHint, accessHint string) site {
	return site{provider: provider, endpoint: strings.TrimSuffix(endpoint, "/"), urlVar: urlVar, api: api,
		refused: "the server refused " + cred, forbidden: cred + " may not use this model or feature",
		authHint: authHint, accessHint: accessHint}
}

func (s site) closed() string {
	return "the connection closed before the response was complete; check the network or " + s.urlVar + " and try again"
}

// classify turns an SDK or transport error into a typed *llm.Error and says
// whether the attempt may be retried. An error that is already typed (a
// platform's credentials could not be found) is returned as it is.
func (p *Provider) classify(err error) (*llm.Error, bool) {
	var typed *llm.Error
	if errors.As(err, &typed) {
		return typed, false
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return p.site.fromAPI(apiErr, err)
	}
	s := p.site
	return llm.TransportError(s.provider, err, llm.TransportMessages{
		Endpoint: s.endpoint, URLVar: s.urlVar,
		Undecodable: "the server sent a stream event that is not valid JSON (" + err.Error() + "); check that " + s.urlVar + " (" + s.endpoint + ") is " + s.api,
		Closed:      s.closed(),
		Unreachable: "cannot reach " + s.endpoint + " (" + err.Error() + "); check the network and " + s.urlVar,
	})
}

// fromAPI classifies an HTTP error response or an error event inside a
// stream. Amazon Bedrock names its errors differently (ThrottlingException,
// or throttlingException as an event-stream exception) and Google Vertex AI
// reports quota as RESOURCE_EXHAUSTED; the HTTP status decides for those.
func (s site) fromAPI(e *sdk.Error, err error) (*llm.Error, bool) {
	var header http.Header
	if e.Response != nil {
		header = e.Response.Header
	}
	f := llm.NewAPIFailure(s.provider, e.StatusCode, apiMessage(e.RawJSON()), header, err)
	kind, status := string(e.Type()), f.Status
	if kind == "" {
		// Bedrock names the error in a header: "ThrottlingException:http://…".
		kind, _, _ = strings.Cut(header.Get("X-Amzn-ErrorType"), ":")
	}
	switch {
	case kind == "authentication_error" || status == http.StatusUnauthorized ||
		kind == "InvalidSignatureException" || kind == "UnrecognizedClientException" || kind == "ExpiredTokenException" || kind == "MissingAuthenticationTokenException":
		return f.Typed(llm.ErrAuth, s.refused, s.authHint), false
	case kind == "permission_error" || status == http.StatusForbidden:
		return f.Typed(llm.ErrAuth, s.forbidden, s.accessHint), false
	case kind == "rate_limit_error" || kind == "throttlingException" || status == http.StatusTooManyRequests:
		return f.Typed(llm.ErrRateLimit, "rate limited", "wait a minute and retry, or run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS)"), true
	case kind == "overloaded_error" || kind == "serviceUnavailableException" || kind == "modelStreamErrorException" || status == 529 || status == http.StatusServiceUnavailable:
		return f.Typed(llm.ErrOverloaded, "the API is overloaded", "try again in a little while"), true
	case kind == "not_found_error" || status == http.StatusNotFound:
		return f.Typed(llm.ErrStatus, "not found", `check the model name (--model, SYNAPSE_MODEL or "model" in settings.json) and `+s.urlVar), false
	case kind == "invalid_request_error" || kind == "request_too_large" || kind == "validationException" || status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		return f.Typed(llm.ErrBadRequest, "the request was refused", llm.BadRequestHint(f.Detail, "")), false
	case kind == "api_error" || kind == "internalServerException" || status >= 500:
		return f.Typed(llm.ErrStatus, "the API had an internal error", "try again"), true
	}
	return f.Typed(llm.ErrStatus, "the server reported an error", ""), status == http.StatusRequestTimeout || status == http.StatusConflict
}

// apiMessage extracts the error's message from an error body: error.message
// (Anthropic, Google), or message (Amazon Bedrock).
func apiMessage(raw string) string {
	var env struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(raw), &env) == nil {
		if env.Error.Message != "" {
			return env.Error.Message
		}
		if env.Message != "" {
			return env.Message
		}
	}
	return llm.Excerpt(raw)
}
