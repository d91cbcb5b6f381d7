package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultStreamIdleTimeout is how long a request may go without receiving a
// byte (before the response headers, or between two reads of the stream)
// before it is abandoned as stalled. Five minutes, because silence is normal
// for a while: reasoning models behind the OpenAI wire format stream nothing
// while they think, and a local server (Ollama, llama.cpp on a CPU) may take
// minutes to read a long prompt before its first token; Anthropic streams
// thinking deltas and pings, so it is never silent that long when healthy.
// A dead connection is still noticed within minutes, not never.
const DefaultStreamIdleTimeout = 5 * time.Minute

// StallError is a request abandoned because the server sent nothing for
// After: no response headers (Headers true), or no stream data.
type StallError struct {
	Headers bool
	After   time.Duration
}

func (e *StallError) Error() string {
	if e.Headers {
		return fmt.Sprintf("no response headers within %s", e.After)
	}
	return fmt.Sprintf("no stream data for %s", e.After)
}

// NewHTTPClient returns a client for model requests whose transport abandons
// a request once the server has been silent for idle (≤ 0 means
// DefaultStreamIdleTimeout): waiting for headers, or between stream reads.
// It has no overall timeout, since a healthy stream may last many minutes.
func NewHTTPClient(idle time.Duration) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	return &http.Client{Transport: WithIdleTimeout(base, idle)}
}

// WithIdleTimeout wraps base so that a request fails with a *StallError once
// the server has been silent for idle (≤ 0 means DefaultStreamIdleTimeout).
func WithIdleTimeout(base http.RoundTripper, idle time.Duration) http.RoundTripper {
	if idle <= 0 {
		idle = DefaultStreamIdleTimeout
	}
	return &idleTransport{base: base, idle: idle}
}

type idleTransport struct {
	base http.RoundTripper
	idle time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	// One cancel cause serves both phases: the timer cancels the request's
	// context, which unblocks the transport (waiting for headers) or the
	// body read (waiting for data), and the cause says which.
	ctx, cancel := context.WithCancelCause(req.Context())
	timer := time.AfterFunc(t.idle, func() { cancel(&StallError{Headers: true, After: t.idle}) })
	resp, err := t.base.RoundTrip(req.WithContext(ctx))
	timer.Stop()
	if err != nil {
		cause := context.Cause(ctx)
		cancel(nil)
		var stall *StallError
		if errors.As(cause, &stall) {
			return nil, stall
		}
		return nil, err
	}
	b := &idleBody{rc: resp.Body, ctx: ctx, cancel: cancel, idle: t.idle}
	b.timer = time.AfterFunc(t.idle, func() { cancel(&StallError{After: t.idle}) })
	resp.Body = b
	return resp, nil
}

// idleBody restarts the idle timer on every read that brought data and
// reports a stall as the read's error.
type idleBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	idle   time.Duration
	timer  *time.Timer
	once   sync.Once
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF {
		var stall *StallError
		if errors.As(context.Cause(b.ctx), &stall) {
			err = stall
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return b.rc.Close()
}
