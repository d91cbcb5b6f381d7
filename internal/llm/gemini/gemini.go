// Package gemini adapts Google's Gemini API (through the official Go SDK,
// google.golang.org/genai) to llm.Provider: streaming
// (streamGenerateContent over SSE), function calling, usage, and the
// thought signatures Gemini 2.5 and 3 attach to function calls, which must
// go back with them on the next request. Retries and the stall timeout are
// ours, as on the other wires; the SDK's own retries and automatic stream
// continuation are off, and it reads nothing from the environment (every
// value is passed explicitly).
package gemini

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

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
	APIKey  string // GEMINI_API_KEY or GOOGLE_API_KEY
	BaseURL string // "" means DefaultBaseURL; the SDK appends v1beta/models/…
	// HTTPClient nil means llm.NewHTTPClient(IdleTimeout).
	HTTPClient *http.Client
	// IdleTimeout bounds the server's silence (headers, then between
	// stream reads) when HTTPClient is nil; 0 means llm.DefaultStreamIdleTimeout.
	IdleTimeout time.Duration
	Retry       *llm.RetryPolicy
}

// Provider is the Gemini implementation of llm.Provider; safe for concurrent use.
type Provider struct {
	models  *genai.Models
	err     error // the client could not be made (reported by Stream)
	retry   llm.RetryPolicy
	baseURL string
}

// placeholderKey is sent to a server on this machine when no key is set:
// the SDK refuses to start without one, and a test server or local
// gateway ignores it.
const placeholderKey = "none"

// New builds a Provider.
func New(opts Options) *Provider {
	base := cmp.Or(opts.BaseURL, DefaultBaseURL)
	rp := llm.DefaultRetryPolicy()
	if opts.Retry != nil {
		rp = *opts.Retry
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = llm.NewHTTPClient(opts.IdleTimeout)
	}
	tapped := *hc
	tapped.Transport = tapTransport{base: cmp.Or[http.RoundTripper](hc.Transport, http.DefaultTransport)}
	p := &Provider{retry: rp, baseURL: strings.TrimSuffix(base, "/")}
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cmp.Or(opts.APIKey, placeholderKey),
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &tapped,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta"},
	})
	if err != nil {
		p.err = err
		return p
	}
	p.models = c.Models
	return p
}

// Name implements llm.Provider.
func (p *Provider) Name() string { return Name }

// Stream implements llm.Provider. Failures before any output are retried per
// the policy; once output reached onEvent they are returned.
func (p *Provider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	if onEvent == nil {
		onEvent = func(llm.Event) {}
	}
	if p.err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrAuth, Provider: Name, Err: p.err,
			Message: "cannot set up the Gemini client: " + p.err.Error()}
	}
	contents, err := toContents(req.Messages)
	if err != nil {
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: Name, Err: err,
			Message: "cannot encode the request: " + err.Error()}
	}
	return p.retry.DoNotify(ctx, onEvent, func() (llm.Response, bool, *llm.AttemptError) {
		return p.once(ctx, req, contents, onEvent)
	})
}

func (p *Provider) once(ctx context.Context, req llm.Request, contents []*genai.Content, onEvent func(llm.Event)) (llm.Response, bool, *llm.AttemptError) {
	tp := &tap{}
	actx := context.WithValue(ctx, tapKey{}, tp)
	a := assembler{onEvent: onEvent}
	var serr error
	for chunk, err := range p.models.GenerateContentStream(actx, req.Model, contents, config(req)) {
		if err != nil {
			serr = err
			break
		}
		a.add(chunk)
	}
	if tp.err != nil {
		serr = tp.err // what the connection did, not what the SDK made of the cut stream
	}
	if serr != nil {
		le, retry := p.classify(serr, tp)
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: retry}
	}
	resp, le := a.finishResponse(p.baseURL)
	if le != nil {
		return llm.Response{}, a.emitted, &llm.AttemptError{Error: le, Retry: le.Kind == llm.ErrConnection || le.Kind == llm.ErrProtocol && a.malformedCall}
	}
	return resp, a.emitted, nil
}

// A tap records, for one attempt, the response's status and headers (the
// SDK's APIError keeps neither, and retry-after lives there) and the error
// that ended the body. The body reports that error to the SDK as a plain
// end of stream: the SDK would otherwise print it through the standard
// logger (onto the user's terminal) before handing it back.
type tap struct {
	status int
	header http.Header
	err    error
}

type tapKey struct{}

type tapTransport struct{ base http.RoundTripper }

func (t tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := llm.StreamFromJSON(streamFromJSON)(req, t.base.RoundTrip)
	tp, _ := req.Context().Value(tapKey{}).(*tap)
	if err != nil || tp == nil {
		return resp, err
	}
	tp.status, tp.header = resp.StatusCode, resp.Header
	resp.Body = &tapBody{rc: resp.Body, tap: tp}
	return resp, nil
}

// streamFromJSON turns a whole answer (a gateway that ignored alt=sse) into
// the stream the SDK reads: one GenerateContentResponse object, or the JSON
// array of them the API answers without alt=sse, one event each.
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

type tapBody struct {
	rc  io.ReadCloser
	tap *tap
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		b.tap.err = err
		err = io.EOF
	}
	return n, err
}

func (b *tapBody) Close() error { return b.rc.Close() }
