// Package anthropic adapts the Anthropic Messages API (through the official Go
// SDK) to llm.Provider: streaming with tool-argument assembly, extended
// thinking round-trips, prompt caching, usage with cache tokens, retries with
// backoff honouring retry-after, and typed errors.
package anthropic

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Name is the provider name used in settings and errors.
const Name = "anthropic"

// DefaultModel is used when neither flags, environment nor settings name one.
const DefaultModel = "claude-sonnet-4-5"

// DefaultBaseURL is the public API endpoint.
const DefaultBaseURL = "https://api.anthropic.com/"

// Options configure a Provider. Every value is explicit: the SDK's own
// reading of the process environment is bypassed so that configuration is
// resolved once, by the caller.
type Options struct {
	APIKey string // sent as x-api-key
	// AuthToken is sent as "Authorization: Bearer" (some gateways want it); optional.
	AuthToken string
	BaseURL   string // "" means DefaultBaseURL
	// HTTPClient nil means llm.NewHTTPClient(IdleTimeout): no overall
	// timeout (streams are long), but a silent server is abandoned.
	HTTPClient *http.Client
	// IdleTimeout bounds the server's silence (headers, then between
	// stream reads) when HTTPClient is nil; 0 means llm.DefaultStreamIdleTimeout.
	IdleTimeout time.Duration
	// Retry is the retry policy; nil means llm.DefaultRetryPolicy().
	Retry *llm.RetryPolicy
	// DisableCache leaves out cache_control markers (for gateways that refuse them).
	DisableCache bool
	// Platform, when set, reaches Claude through a cloud platform instead of
	// the Anthropic API; APIKey and AuthToken are then not used, and BaseURL
	// (when set) replaces the platform's own endpoint.
	Platform *Platform
}

// Platform is a cloud that serves Claude's Messages API under its own
// endpoint, credentials and model ids (Amazon Bedrock, Google Vertex AI).
// The SDK's option for it (bedrock.WithConfig) or our own (Vertex's)
// rewrites and authorizes each request; streaming, tool calls, retries,
// usage and errors are this package's as for the Anthropic API.
type Platform struct {
	Name string // the provider's name, in Name() and errors
	// Options are the platform's client options, applied after this
	// package's own (so they wrap its HTTP client and middleware).
	Options  []option.RequestOption
	Endpoint string // the platform's endpoint, for messages
	URLVar   string // the setting that overrides the endpoint
	Cred     string // what the credentials are, e.g. "the AWS credentials"
	AuthHint string // what to check when the credentials are refused
	// AccessHint is what to check when they may not use the model.
	AccessHint string
	// Model maps a model name to the platform's model id; nil keeps it.
	Model func(string) string
}

// Provider is the Anthropic implementation of llm.Provider. It is safe for
// concurrent use (sub-agents share one).
type Provider struct {
	// client sends the requests: its Execute with the body as is, not
	// MessageService.NewStreaming, which copies the whole body once more
	// (setting "stream", which the body already has) on every step.
	client  *sdk.Client
	retry   llm.RetryPolicy
	site    site
	model   func(string) string // the id sent for a model name
	noCache bool
	conv    *convCache
}

// New builds a Provider.
func New(opts Options) *Provider {
	ro := []option.RequestOption{
		option.WithHTTPClient(httpClient(opts.HTTPClient, opts.IdleTimeout)),
		option.WithMaxRetries(0), // retries are ours: they also cover errors inside the stream
		option.WithMiddleware(llm.StreamFromJSON(streamFromMessage)),
	}
	var s site
	model := func(m string) string { return m }
	if pl := opts.Platform; pl != nil {
		ro = append(ro, pl.Options...)
		s = newSite(pl.Name, pl.Endpoint, pl.URLVar, "an endpoint of "+pl.Name+" serving Claude", pl.Cred, pl.AuthHint, pl.AccessHint)
		if opts.BaseURL != "" {
			ro = append(ro, option.WithBaseURL(opts.BaseURL))
			s.endpoint = strings.TrimSuffix(opts.BaseURL, "/")
		}
		if pl.Model != nil {
			model = pl.Model
		}
	} else {
		base := cmp.Or(opts.BaseURL, DefaultBaseURL)
		ro = append(ro, option.WithBaseURL(base))
		if opts.APIKey != "" {
			ro = append(ro, option.WithAPIKey(opts.APIKey))
		}
		if opts.AuthToken != "" {
			ro = append(ro, option.WithAuthToken(opts.AuthToken))
		}
		s = newSite(Name, base, "ANTHROPIC_BASE_URL", "an Anthropic Messages API endpoint", "the API key", keyHint, keyHint+" and the key's permissions")
		s.refused = "the API key was refused"
	}
	rp := llm.DefaultRetryPolicy()
	if opts.Retry != nil {
		rp = *opts.Retry
	}
	return &Provider{
		client:  &sdk.Client{Options: ro},
		retry:   rp,
		site:    s,
		model:   model,
		noCache: opts.DisableCache,
		conv:    &convCache{},
	}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return p.site.provider }

// Stream implements llm.Provider. A failure before anything was streamed is
// retried per the policy; once output has reached onEvent it is not, since
// the caller has already shown it.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	params := p.params(req)
	buf, err := p.conv.body(params, req.Messages, !p.noCache)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.site.provider, Err: err,
			Message: "cannot encode the request: " + err.Error()}
	}
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	resp, err := p.retry.DoNotify(ctx, onEvent, func() (llm.Response, bool, *llm.AttemptError) {
		return p.once(ctx, buf.Bytes(), params.MaxTokens, onEvent)
	})
	if err == nil {
		// A whole answer came back, so the server had read the whole body
		// and nothing reads the buffer any more. After a failure it is
		// left to the garbage collector: a server may refuse a request
		// before reading it, and the transport may still be writing it.
		p.conv.done(buf)
	}
	return resp, err
}

// once runs one attempt; emitted reports whether any event reached onEvent.
// A cancelled context is returned as is (not an AttemptError) by Stream.
func (p *Provider) once(ctx context.Context, body []byte, maxTokens int, onEvent func(llm.Event)) (llm.Response, bool, *llm.AttemptError) {
	var raw *http.Response
	xerr := p.client.Execute(ctx, http.MethodPost, "v1/messages", body, &raw)
	stream := ssestream.NewStream[sdk.MessageStreamEventUnion](ssestream.NewDecoder(raw), xerr)
	defer stream.Close()
	a := assembler{site: p.site, onEvent: onEvent, maxTokens: int64(maxTokens)}
	for stream.Next() {
		if err := a.add(stream.Current()); err != nil {
			return llm.Response{}, a.emitted, &llm.AttemptError{Error: err}
		}
	}
	if err := stream.Err(); err != nil {
		le, retry := p.classify(err)
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
	}
	resp, err := a.finish()
	if err != nil {
		// An incomplete stream is a connection failure and may be retried.
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: err, Retry: err.Kind == llm.ErrConnection}
	}
	return resp, a.emitted, nil
}

func httpClient(c *http.Client, idle time.Duration) *http.Client {
	if c != nil {
		return c
	}
	return llm.NewHTTPClient(idle)
}
