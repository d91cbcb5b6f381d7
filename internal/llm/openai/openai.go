// Package openai adapts OpenAI's APIs (through the official Go SDK) to
// llm.Provider: Chat Completions, and the Responses API for OpenAI's
// reasoning models (responses.go). Chat Completions is meant to work with
// OpenAI-compatible servers too
// (Ollama, vLLM, llama.cpp, LM Studio): it asks for usage in the stream but
// does not require it, assembles tool-call fragments by index while tolerating
// servers that send whole calls at once, reads the non-standard
// reasoning_content / reasoning deltas as thinking, and sends no key when none
// is configured.
package openai

import (
	"cmp"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Name is the provider name used in settings and errors.
const Name = "openai"

// DefaultModel is used when neither flags, environment nor settings name
// one; on api.openai.com it goes on the Responses wire.
const DefaultModel = "gpt-5"

// DefaultBaseURL is the public API endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure a Provider. Every value is explicit: the SDK's own
// reading of the process environment is bypassed.
type Options struct {
	APIKey  string // "" sends no Authorization header (local servers)
	BaseURL string // "" means DefaultBaseURL; include /v1 as OpenAI clients do
	// HTTPClient nil means llm.NewHTTPClient(IdleTimeout): no overall
	// timeout (streams are long), but a silent server is abandoned.
	HTTPClient *http.Client
	// IdleTimeout bounds the server's silence (headers, then between
	// stream reads) when HTTPClient is nil; 0 means llm.DefaultStreamIdleTimeout.
	IdleTimeout time.Duration
	Retry       *llm.RetryPolicy
	// Images sends tool images as image_url parts: "on", "off", or ""
	// (on for api.openai.com only: compatible servers often run text-only
	// models that refuse image parts, so they get the text notes instead).
	Images string
	// Wire is WireChat, WireResponses, or "" to choose by model: the
	// Responses API for OpenAI's reasoning models (gpt-5*, o1/o3/o4,
	// codex) on api.openai.com, Chat Completions otherwise.
	Wire string
}

// Provider is the OpenAI implementation of llm.Provider; safe for concurrent use.
type Provider struct {
	chat     sdk.ChatCompletionService
	resp     responses.ResponseService
	retry    llm.RetryPolicy
	baseURL  string
	official bool   // api.openai.com: use max_completion_tokens
	images   bool   // send tool images as image_url parts
	wire     string // Options.Wire
	conv     *llm.EncodeCache[encodedMessage]
	items    *llm.EncodeCache[[]byte] // Responses input items
}

// New builds a Provider.
func New(opts Options) *Provider {
	base := cmp.Or(opts.BaseURL, DefaultBaseURL)
	ro := []option.RequestOption{
		option.WithHTTPClient(httpClient(opts.HTTPClient, opts.IdleTimeout)),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		ro = append(ro, option.WithAPIKey(opts.APIKey))
	}
	rp := llm.DefaultRetryPolicy()
	if opts.Retry != nil {
		rp = *opts.Retry
	}
	official := false
	if u, err := url.Parse(base); err == nil {
		official = strings.EqualFold(u.Hostname(), "api.openai.com")
	}
	images := opts.Images == "on" || (opts.Images == "" && official)
	ro = slices.Clip(ro) // each service appends its own middleware
	return &Provider{
		chat:  sdk.NewChatCompletionService(append(ro, option.WithMiddleware(llm.StreamFromJSON(streamFromCompletion)))...),
		resp:  responses.NewResponseService(append(ro, option.WithMiddleware(llm.StreamFromJSON(streamFromResponse)))...),
		retry: rp, baseURL: strings.TrimSuffix(base, "/"), official: official, images: images, wire: opts.Wire,
		conv: &llm.EncodeCache[encodedMessage]{}, items: &llm.EncodeCache[[]byte]{}}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return Name }

// Stream implements llm.Provider. Failures before any output are retried per
// the policy; once output reached onEvent they are returned.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	if p.useResponses(req.Model) {
		return p.streamResponses(ctx, req, onEvent)
	}
	params := p.params(req)
	body, err := p.body(params, req.System, req.Messages)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name, Err: err,
			Message: "cannot encode the request: " + err.Error()}
	}
	maxTokens := maxTokensOf(params)
	return p.retry.DoNotify(ctx, onEvent, func() (llm.Response, bool, *llm.AttemptError) {
		return p.once(ctx, body, maxTokens, onEvent)
	})
}

func (p *Provider) once(ctx context.Context, body []byte, maxTokens int64, onEvent func(llm.Event)) (llm.Response, bool, *llm.AttemptError) {
	stream := p.chat.NewStreaming(ctx, sdk.ChatCompletionNewParams{}, option.WithRequestBody("application/json", body))
	defer stream.Close()
	a := assembler{onEvent: onEvent, maxTokens: maxTokens}
	for stream.Next() {
		a.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		le, retry := p.classify(err)
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
	}
	resp, err := a.finish(p.baseURL)
	if err != nil {
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: err, Retry: err.Kind == llm.ErrConnection}
	}
	return resp, a.emitted, nil
}

func maxTokensOf(p sdk.ChatCompletionNewParams) int64 {
	if p.MaxCompletionTokens.Valid() {
		return p.MaxCompletionTokens.Value
	}
	if p.MaxTokens.Valid() {
		return p.MaxTokens.Value
	}
	return 0
}

func httpClient(c *http.Client, idle time.Duration) *http.Client {
	if c != nil {
		return c
	}
	return llm.NewHTTPClient(idle)
}
