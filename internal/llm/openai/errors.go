package openai

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

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
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, bufio.ErrTooLong) {
		return &llm.Error{Kind: llm.ErrProtocol, Provider: Name, Err: err,
			Message: "the server sent a stream chunk that is not valid JSON (" + err.Error() + "); check that OPENAI_BASE_URL (" + p.baseURL + ") is an OpenAI-compatible endpoint"}, false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &llm.Error{Kind: llm.ErrConnection, Provider: Name, Err: err,
			Message: "the connection closed before the response was complete; check the network or OPENAI_BASE_URL and try again"}, true
	}
	return &llm.Error{Kind: llm.ErrConnection, Provider: Name, Err: err,
		Message: "cannot reach " + p.baseURL + " (" + err.Error() + "); is the server running? check the network and OPENAI_BASE_URL"}, true
}

func apiMessage(e *sdk.Error) string {
	if e.Message != "" {
		return e.Message
	}
	raw := strings.TrimSpace(e.RawJSON())
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return raw
}

// fromStatus classifies an error response (status) or an in-stream error (status 0).
func (p *Provider) fromStatus(status int, typ, code, detail string, res *http.Response, err error) (*llm.Error, bool) {
	if status < 400 {
		status = 0
	}
	if detail == "" && status != 0 {
		detail = http.StatusText(status)
	}
	out := &llm.Error{Provider: Name, StatusCode: status, Err: err}
	if res != nil {
		if d, ok := llm.ParseRetryAfter(res.Header.Get("Retry-After-Ms"), res.Header.Get("Retry-After"), time.Now()); ok {
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
	case status == http.StatusUnauthorized || code == "invalid_api_key":
		out.Kind, out.Message = llm.ErrAuth, with("the API key was refused")+"; "+keyHint
	case status == http.StatusForbidden:
		out.Kind, out.Message = llm.ErrAuth, with("the API key may not use this model or endpoint")+"; "+keyHint+" and the key's permissions"
	case code == "insufficient_quota" || typ == "insufficient_quota":
		out.Kind, out.Message = llm.ErrRateLimit, with("the account's quota is exhausted")+"; check the plan and billing of the key in OPENAI_API_KEY"
	case status == http.StatusTooManyRequests || strings.Contains(typ, "rate_limit"):
		out.Kind, out.Message = llm.ErrRateLimit, with("rate limited")+"; wait a minute and retry, or run fewer parallel tasks (SYNAPSE_MAX_PARALLEL_TASKS)"
		retry = true
	case status == http.StatusServiceUnavailable || status == 529 || strings.Contains(typ, "overloaded"):
		out.Kind, out.Message = llm.ErrOverloaded, with("the server is overloaded")+"; try again in a little while"
		retry = true
	case status == http.StatusNotFound || code == "model_not_found":
		out.Kind, out.Message = llm.ErrStatus, with("not found")+`; check the model name (--model, SYNAPSE_MODEL or "model" in settings.json; local servers need the model pulled) and OPENAI_BASE_URL (usually ending in /v1)`
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity || typ == "invalid_request_error":
		out.Kind, out.Message = llm.ErrBadRequest, with("the request was refused")
	case status >= 500 || typ == "server_error" || status == 0:
		out.Kind, out.Message = llm.ErrStatus, with("the server had an internal error")+"; try again"
		retry = true
	default:
		out.Kind, out.Message = llm.ErrStatus, with("the server reported an error")
		retry = status == http.StatusRequestTimeout || status == http.StatusConflict
	}
	return out, retry
}
