package openai

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/synapse-agent/synapse/internal/llm"
)

const keyHint = `check OPENAI_API_KEY (environment, or "env" in settings.json)`

func (p *Provider) classify(err error) (*llm.Error, bool) {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return p.fromStatus(apiErr.StatusCode, apiErr.Type, apiErr.Code, apiMessage(apiErr), apiErr.Response, err)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var body struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body)
		msg := body.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(string(se.Event.Data))
		}
		code, _ := body.Error.Code.(string)
		return p.fromStatus(0, body.Error.Type, code, msg, nil, err)
	}
	return llm.TransportError(Name, err, llm.TransportMessages{
		Endpoint: p.baseURL, URLVar: "OPENAI_BASE_URL",
		Undecodable: "the server sent a stream chunk that is not valid JSON (" + err.Error() + "); check that OPENAI_BASE_URL (" + p.baseURL + ") is an OpenAI-compatible endpoint",
		Closed:      "the connection closed before the response was complete; check the network or OPENAI_BASE_URL and try again",
		Unreachable: "cannot reach " + p.baseURL + " (" + err.Error() + "); is the server running? check the network and OPENAI_BASE_URL",
	})
}

func apiMessage(e *sdk.Error) string {
	if e.Message != "" {
		return e.Message
	}
	return llm.Excerpt(e.RawJSON())
}

// fromStatus classifies an error response (status) or an in-stream error (status 0).
func (p *Provider) fromStatus(status int, typ, code, detail string, res *http.Response, err error) (*llm.Error, bool) {
	var header http.Header
	if res != nil {
		header = res.Header
	}
	f := llm.NewAPIFailure(Name, status, detail, header, err)
	status = f.Status
	switch {
	case status == http.StatusUnauthorized || code == "invalid_api_key":
		return f.Typed(llm.ErrAuth, "the API key was refused", keyHint), false
	case status == http.StatusForbidden:
		return f.Typed(llm.ErrAuth, "the API key may not use this model or endpoint", keyHint+" and the key's permissions"), false
	case code == "insufficient_quota" || typ == "insufficient_quota":
		return f.Typed(llm.ErrRateLimit, "the account's quota is exhausted", "check the plan and billing of the key in OPENAI_API_KEY"), false
	case status == http.StatusTooManyRequests || strings.Contains(typ, "rate_limit"):
		return f.Typed(llm.ErrRateLimit, "rate limited", "wait a minute and retry, or run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS)"), true
	case status == http.StatusServiceUnavailable || status == 529 || strings.Contains(typ, "overloaded"):
		return f.Typed(llm.ErrOverloaded, "the server is overloaded", "try again in a little while"), true
	case status == http.StatusNotFound || code == "model_not_found":
		return f.Typed(llm.ErrStatus, "not found", `check the model name (--model, SYNAPSE_MODEL or "model" in settings.json; local servers need the model pulled) and OPENAI_BASE_URL (usually ending in /v1)`), false
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity || typ == "invalid_request_error":
		return f.Typed(llm.ErrBadRequest, "the request was refused", llm.BadRequestHint(f.Detail, code)), false
	case status >= 500 || typ == "server_error" || status == 0:
		return f.Typed(llm.ErrStatus, "the server had an internal error", "try again"), true
	}
	return f.Typed(llm.ErrStatus, "the server reported an error", ""), status == http.StatusRequestTimeout || status == http.StatusConflict
}
