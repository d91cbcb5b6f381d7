package llmtest

import (
	"context"
	"errors"
	"strings"
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
	Retries        []llm.RetryNotice
	// Seq is the order of the tool-call events: "start:<id>" for
	// EventToolCallStart, "call:<id>" for EventToolCall.
	Seq []string
}

// Announced reports whether calls arrived and each was announced by an
// EventToolCallStart of its ID before it.
func (c *Events) Announced() bool {
	started := map[string]bool{}
	calls := 0
	for _, s := range c.Seq {
		kind, id, _ := strings.Cut(s, ":")
		if kind == "start" {
			started[id] = true
			continue
		}
		calls++
		if !started[id] {
			return false
		}
	}
	return calls > 0
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
		c.Seq = append(c.Seq, "call:"+e.ToolCall.ID)
	case llm.EventToolCallStart:
		c.Seq = append(c.Seq, "start:"+e.ToolCall.ID)
	case llm.EventUsage:
		c.Usage = append(c.Usage, *e.Usage)
	case llm.EventRetry:
		c.Retries = append(c.Retries, *e.Retry)
	}
}

// Stream sends req through p and returns the response and what p streamed
// on the way; the test stops at once if the request fails.
func Stream(t testing.TB, p llm.Provider, req llm.Request) (llm.Response, Events) {
	t.Helper()
	var ev Events
	resp, err := p.Stream(context.Background(), req, ev.On)
	if err != nil {
		t.Fatal(err)
	}
	return resp, ev
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

// CheckStall checks a provider's idle-timeout contract against servers that
// go silent: one that never sends headers and one whose stream stops, both
// before any output (retried, with a retry notice) and after output was
// shown (a clear failure naming the endpoint, not retried), and that the
// next request on the same provider works. newProvider points the provider
// under test at srv with the given idle timeout and maxRetries retries
// (waits recorded, not slept); urlVar is the setting naming its endpoint.
func CheckStall(t *testing.T, urlVar string, newProvider func(srv *Server, idle time.Duration, maxRetries int) llm.Provider) {
	t.Helper()
	checkStall(t, urlVar, newProvider, true)
}

// CheckStallTextFirst is CheckStall for a wire whose first event already
// carries text (Gemini's): there a stream that stalls "before any text" is
// one that sends no headers, which CheckStall's other cases cover.
func CheckStallTextFirst(t *testing.T, urlVar string, newProvider func(srv *Server, idle time.Duration, maxRetries int) llm.Provider) {
	t.Helper()
	checkStall(t, urlVar, newProvider, false)
}

func checkStall(t *testing.T, urlVar string, newProvider func(srv *Server, idle time.Duration, maxRetries int) llm.Provider, preamble bool) {
	t.Helper()
	const idle = 300 * time.Millisecond
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
	tests := []struct {
		name       string
		turns      []Turn
		maxRetries int
		wantErr    string // "" means success with text "ok"
		wantTries  int
		wantNotes  int
	}{
		{name: "no headers, then a reply: retried", turns: []Turn{{Text: "late", Delay: time.Hour}, {Text: "ok"}},
			maxRetries: 2, wantTries: 2, wantNotes: 1},
		{name: "stalls before any text: retried", turns: []Turn{{Text: "never shown", StallAfter: 1}, {Text: "ok"}},
			maxRetries: 2, wantTries: 2, wantNotes: 1},
		{name: "stalls after text was shown: clear failure", turns: []Turn{{Text: "a partial answer that stops", Fragment: 4, StallAfter: 6}},
			maxRetries: 2, wantErr: "stalled: no data for 0.3s", wantTries: 1},
		{name: "never answers: gives up", turns: []Turn{{Delay: time.Hour}, {Delay: time.Hour}},
			maxRetries: 1, wantErr: "did not answer: no response within 0.3s", wantTries: 2, wantNotes: 1},
	}
	for _, tt := range tests {
		if !preamble && strings.HasPrefix(tt.name, "stalls before any text") {
			continue
		}
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t, tt.turns...)
			p := newProvider(srv, idle, tt.maxRetries)
			var ev Events
			resp, err := p.Stream(context.Background(), req, ev.On)
			var kind llm.ErrorKind
			if tt.wantErr != "" {
				kind = llm.ErrStalled
			}
			checkOutcome(t, resp, err, kind, []string{tt.wantErr, strings.TrimSuffix(srv.URL(), "/"), urlVar, "SYNAPSE_STREAM_IDLE_TIMEOUT"})
			if srv.Count() != tt.wantTries {
				t.Errorf("%d requests, want %d", srv.Count(), tt.wantTries)
			}
			if len(ev.Retries) != tt.wantNotes {
				t.Fatalf("retry notices = %+v, want %d", ev.Retries, tt.wantNotes)
			}
			for i, n := range ev.Retries {
				if n.Attempt != i+1 || n.Max != tt.maxRetries || n.Wait <= 0 || !strings.Contains(n.Reason, "SYNAPSE_STREAM_IDLE_TIMEOUT") {
					t.Errorf("retry notice %d = %+v", i, n)
				}
			}
			// The provider is not left broken: the next request works.
			srv.Script(Turn{Text: "ok"})
			if resp, err := p.Stream(context.Background(), req, nil); err != nil || resp.Message.Text != "ok" {
				t.Fatalf("next request = %q, %v", resp.Message.Text, err)
			}
		})
	}
}
