package llmtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

// Events collects what a provider streamed, for assertions. Pass its On as
// the onEvent callback of llm.Provider.Stream.
type Events struct {
	Text, Thinking string // the text and thinking deltas, joined
	Calls          []llm.ToolCall
	Usage          []llm.Usage
}

// On records one event.
func (c *Events) On(e llm.Event) {
	switch e.Type {
	case llm.EventTextDelta:
		c.Text += e.Text
	case llm.EventThinkingDelta:
		c.Thinking += e.Text
	case llm.EventToolCall:
		c.Calls = append(c.Calls, *e.ToolCall)
	case llm.EventUsage:
		c.Usage = append(c.Usage, *e.Usage)
	}
}

// Waits records the retry waits a provider asked for, instead of sleeping.
type Waits struct {
	mu sync.Mutex
	d  []time.Duration
}

// Sleep is an llm.RetryPolicy Sleep that records d and returns at once.
func (w *Waits) Sleep(_ context.Context, d time.Duration) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.d = append(w.d, d)
	return nil
}

// List returns the waits recorded so far, in order.
func (w *Waits) List() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// RetryPolicy is a policy with short backoffs (10ms doubling to 40ms, a
// retry-after up to a minute) for provider tests; w, when not nil, records
// the waits instead of sleeping.
func RetryPolicy(maxRetries int, w *Waits) *llm.RetryPolicy {
	rp := llm.RetryPolicy{MaxRetries: maxRetries, BaseDelay: 10 * time.Millisecond, MaxDelay: 40 * time.Millisecond, MaxRetryAfter: time.Minute}
	if w != nil {
		rp.Sleep = w.Sleep
	}
	return &rp
}

// CheckCancel checks a provider's cancellation contract against a server
// whose reply never comes: cancelling the context while the request is in
// flight makes Stream return context.Canceled, without another attempt.
// newProvider points the provider under test at srv, with retries allowed.
func CheckCancel(t *testing.T, newProvider func(srv *Server) llm.Provider) {
	t.Helper()
	srv := New(t, Turn{Text: "late", Delay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := newProvider(srv).Stream(ctx, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
		done <- err
	}()
	for srv.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if srv.Count() != 1 {
		t.Errorf("%d requests: a cancelled request must not be retried", srv.Count())
	}
}
