package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// attempt is one scripted outcome of try in TestRetryPolicyDo.
type attempt struct {
	emitted bool
	err     *AttemptError // nil: success
}

func failing(kind ErrorKind, retry bool, after time.Duration) *AttemptError {
	return &AttemptError{Error: &Error{Kind: kind, Provider: "p", Message: string(kind), RetryAfter: after}, Retry: retry}
}

func TestRetryPolicyDo(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		script     []attempt
		wantTries  int
		wantKind   ErrorKind // "" means success
		wantMsg    string
		wantWaits  []time.Duration
	}{
		{name: "first try succeeds", maxRetries: 2, script: []attempt{{}}, wantTries: 1},
		{name: "retryable then success", maxRetries: 2,
			script:    []attempt{{err: failing(ErrOverloaded, true, 0)}, {err: failing(ErrRateLimit, true, 3*time.Second)}, {}},
			wantTries: 3, wantWaits: []time.Duration{time.Second, 3 * time.Second}},
		{name: "not retryable", maxRetries: 2, script: []attempt{{err: failing(ErrAuth, false, 0)}},
			wantTries: 1, wantKind: ErrAuth, wantMsg: "auth"},
		{name: "output already emitted", maxRetries: 2, script: []attempt{{emitted: true, err: failing(ErrConnection, true, 0)}},
			wantTries: 1, wantKind: ErrConnection, wantMsg: "connection (the answer had already started, so it was not retried: send the request again)"},
		{name: "gives up after one retry", maxRetries: 1,
			script:    []attempt{{err: failing(ErrStatus, true, 0)}, {err: failing(ErrStatus, true, 0)}},
			wantTries: 2, wantKind: ErrStatus, wantMsg: "status (gave up after 1 retry)", wantWaits: []time.Duration{time.Second}},
		{name: "gives up after two retries", maxRetries: 2,
			script:    []attempt{{err: failing(ErrStatus, true, 0)}, {err: failing(ErrStatus, true, 0)}, {err: failing(ErrStatus, true, 0)}},
			wantTries: 3, wantKind: ErrStatus, wantMsg: "status (gave up after 2 retries)", wantWaits: []time.Duration{time.Second, 2 * time.Second}},
		{name: "no retries allowed: message unchanged", maxRetries: 0, script: []attempt{{err: failing(ErrStatus, true, 0)}},
			wantTries: 1, wantKind: ErrStatus, wantMsg: "status"},
		{name: "retry-after longer than the cap", maxRetries: 3, script: []attempt{{err: failing(ErrRateLimit, true, time.Hour)}},
			wantTries: 1, wantKind: ErrRateLimit, wantMsg: "rate_limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			p := RetryPolicy{MaxRetries: tt.maxRetries, BaseDelay: time.Second, MaxRetryAfter: time.Minute,
				Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			tries := 0
			resp, err := p.Do(context.Background(), func() (Response, bool, *AttemptError) {
				a := tt.script[tries]
				tries++
				if a.err != nil {
					return Response{}, a.emitted, a.err
				}
				return Response{StopReason: "end_turn"}, a.emitted, nil
			})
			if tries != tt.wantTries {
				t.Errorf("tries = %d, want %d", tries, tt.wantTries)
			}
			if tt.wantKind == "" {
				if err != nil || resp.StopReason != "end_turn" {
					t.Fatalf("got %+v, %v; want the response", resp, err)
				}
			} else {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tt.wantKind || e.Message != tt.wantMsg {
					t.Fatalf("err = %v, want %s %q", err, tt.wantKind, tt.wantMsg)
				}
			}
			// Jitter takes up to 20% off the backoff; a retry-after is exact.
			if len(waits) != len(tt.wantWaits) {
				t.Fatalf("waits = %v, want %v", waits, tt.wantWaits)
			}
			for i, w := range tt.wantWaits {
				if waits[i] > w || waits[i] < w-w/5 {
					t.Errorf("wait %d = %v, want about %v", i, waits[i], w)
				}
			}
		})
	}
}

func TestRetryPolicyDoStopsWhenCancelled(t *testing.T) {
	t.Run("during the attempt", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tries := 0
		_, err := RetryPolicy{MaxRetries: 3}.Do(ctx, func() (Response, bool, *AttemptError) {
			tries++
			cancel()
			return Response{}, false, failing(ErrConnection, true, 0)
		})
		if !errors.Is(err, context.Canceled) || tries != 1 {
			t.Errorf("err = %v after %d tries, want context.Canceled after 1", err, tries)
		}
	})
	t.Run("during the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := RetryPolicy{MaxRetries: 3, BaseDelay: time.Hour,
			Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}
		tries := 0
		_, err := p.Do(ctx, func() (Response, bool, *AttemptError) {
			tries++
			return Response{}, false, failing(ErrConnection, true, 0)
		})
		if !errors.Is(err, context.Canceled) || tries != 1 || strings.Contains(err.Error(), "gave up") {
			t.Errorf("err = %v after %d tries, want context.Canceled after 1", err, tries)
		}
	})
}
