// Package gemini adapts Google's Gemini API to llm.Provider: streaming
// (streamGenerateContent over SSE), function calling, usage, and the
// thought signatures Gemini 2.5 and 3 attach to function calls, which must
// go back with them on the next request. Retries and the stall timeout are
// ours, as on the other wires.
//
// The client is hand-written (wire.go holds the JSON shapes) rather than
// Google's SDK, google.golang.org/genai: the SDK links gRPC and OpenCensus
// (through cloud.google.com/go/auth), some two hundred packages whose init
// and pages every run of synapse paid for, Gemini or not, while one POST
// and a loop over "data:" lines is all this adapter needs.
package gemini

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Name is the provider name used in settings and errors.
const Name = "gemini"

// DefaultModel is used when neither flags, environment nor settings name one.
const DefaultModel = "gemini-2.5-pro"

// DefaultBaseURL is the Gemini API's endpoint.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// Options configure a Provider. Every value is explicit.
type Options struct {
	APIKey  string // GEMINI_API_KEY or GOOGLE_API_KEY; "" sends none (a local server)
	BaseURL string // "" means DefaultBaseURL; v1beta/models/… is appended
	// HTTPClient nil means llm.NewHTTPClient(IdleTimeout).
	HTTPClient *http.Client
	// IdleTimeout bounds the server's silence (headers, then between
	// stream reads) when HTTPClient is nil; 0 means llm.DefaultStreamIdleTimeout.
	IdleTimeout time.Duration
	Retry       *llm.RetryPolicy
}

// Provider is the Gemini implementation of llm.Provider; safe for concurrent use.
type Provider struct {
	http    *http.Client
	apiKey  string
	retry   llm.RetryPolicy
	baseURL string // without the trailing slash
}

// New builds a Provider.
func New(opts Options) *Provider {
	rp := llm.DefaultRetryPolicy()
	if opts.Retry != nil {
		rp = *opts.Retry
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient(opts.IdleTimeout)
	}
	return &Provider{http: hc, apiKey: opts.APIKey, retry: rp, baseURL: strings.TrimSuffix(cmp.Or(opts.BaseURL, DefaultBaseURL), "/")}
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return Name }

// Stream implements llm.Provider. Failures before any output are retried per
// the policy; once output reached onEvent they are returned.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	body, err := encodeRequest(req)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name, Err: err,
			Message: "cannot encode the request: " + err.Error()}
	}
	target, err := p.streamURL(req.Model)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name, Err: err, Message: err.Error(),
			Hint: `check the model name (--model, SYNAPSE_MODEL or "model" in settings.json)`}
	}
	return p.retry.DoNotify(ctx, onEvent, func() (llm.Response, bool, *llm.AttemptError) {
		return p.once(ctx, target, body, onEvent)
	})
}

func encodeRequest(req llm.Request) ([]byte, error) {
	r, err := newRequest(req)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// streamURL is the model's streamGenerateContent method. A model is named
// "gemini-2.5-pro" or, as the API lists them, "models/gemini-2.5-pro"
// (a tuned model: "tunedModels/…").
func (p *Provider) streamURL(model string) (string, error) {
	if model == "" || strings.ContainsAny(model, "?&#") || strings.Contains(model, "..") {
		return "", fmt.Errorf("%q is not a Gemini model name", model)
	}
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	u, err := url.Parse(p.baseURL + "/v1beta/" + model + ":streamGenerateContent?alt=sse")
	if err != nil {
		return "", fmt.Errorf("the Gemini endpoint %q is not a URL (GOOGLE_GEMINI_BASE_URL): %w", p.baseURL, err)
	}
	return u.String(), nil
}

// maxEvent bounds one streamed event (a chunk may carry an image).
const maxEvent = 64 << 20

// once runs one attempt; emitted reports whether any event reached onEvent.
func (p *Provider) once(ctx context.Context, target string, body []byte, onEvent func(llm.Event)) (llm.Response, bool, *llm.AttemptError) {
	a := assembler{onEvent: onEvent}
	if err := p.stream(ctx, target, body, a.add); err != nil {
		le, retry := p.classify(err)
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
	}
	resp, le := a.finishResponse(p.baseURL)
	if le != nil {
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: le.Kind == llm.ErrConnection || le.Kind == llm.ErrProtocol && a.malformedCall}
	}
	return resp, a.emitted, nil
}

// stream sends the request and hands each event of the answer to add. An
// error response, or an error object inside the stream, is an *apiError.
func (p *Provider) stream(ctx context.Context, target string, body []byte, add func(*generateResponse)) error {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if p.apiKey != "" {
		hreq.Header.Set("x-goog-api-key", p.apiKey)
	}
	resp, err := llm.StreamFromJSON(streamFromJSON)(hreq, p.http.Do)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return readAPIError(resp)
	}
	// Google sends "data: {GenerateContentResponse}" events, one line each,
	// with no event names and no terminator; blank lines separate them.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEvent)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			// Not an event: an error object sent bare, or not this wire.
			var bare generateResponse
			if json.Unmarshal(line, &bare) == nil && bare.Error != nil {
				return bare.Error
			}
			return fmt.Errorf("%w: %s", errBadChunk, llm.Excerpt(string(line)))
		}
		var ch generateResponse
		if err := json.Unmarshal(data, &ch); err != nil {
			return fmt.Errorf("decode a stream event: %w", err)
		}
		if ch.Error != nil {
			return ch.Error
		}
		add(&ch)
	}
	return sc.Err()
}

// streamFromJSON turns a whole answer (a gateway that ignored alt=sse) into
// the event stream: one GenerateContentResponse object, or the JSON array
// of them the API answers without alt=sse, one event each.
func streamFromJSON(body []byte) ([]byte, error) {
	var chunks []json.RawMessage
	if err := json.Unmarshal(body, &chunks); err != nil {
		var one map[string]json.RawMessage
		if err := json.Unmarshal(body, &one); err != nil {
			return nil, err
		}
		if _, ok := one["candidates"]; !ok {
			return nil, errors.New("not a GenerateContentResponse")
		}
		chunks = []json.RawMessage{body}
	}
	var buf bytes.Buffer
	for _, c := range chunks {
		llm.SSEEvent(&buf, "", c)
	}
	return buf.Bytes(), nil
}
