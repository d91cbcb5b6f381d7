package llm

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how often, and after how long a wait, a provider retries a
// request that failed with a retryable status (429, 5xx, 529) or a connection
// error before any output was streamed.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt
	BaseDelay  time.Duration // first backoff; doubles on each retry
	MaxDelay   time.Duration // cap of the backoff
	// MaxRetryAfter caps a server-requested wait (retry-after); a longer
	// request is not waited for: the error is returned with its RetryAfter.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done; nil uses a timer. Tests record the waits here.
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultRetryPolicy is used when a provider is given none.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second, MaxRetryAfter: 2 * time.Minute}
}

// Delay returns how long to wait before retry number attempt (0-based), given
// the server's retry-after (0 when absent); ok is false when the policy says
// to give up.
func (p RetryPolicy) Delay(attempt int, retryAfter time.Duration) (d time.Duration, ok bool) {
	if attempt >= p.MaxRetries {
		return 0, false
	}
	if retryAfter > 0 {
		if p.MaxRetryAfter > 0 && retryAfter > p.MaxRetryAfter {
			return 0, false
		}
		return retryAfter, true
	}
	d = p.BaseDelay << min(attempt, 20)
	if p.MaxDelay > 0 && d > p.MaxDelay {
		d = p.MaxDelay
	}
	// Up to 20% jitter so that parallel sub-agents do not retry in lockstep.
	if d > 0 {
		d -= time.Duration(rand.Int64N(int64(d)/5 + 1))
	}
	return d, true
}

// Wait sleeps d or until ctx is done, returning ctx.Err() in that case.
func (p RetryPolicy) Wait(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseRetryAfter reads the retry-after-ms and retry-after header values
// (seconds or an HTTP date, relative to now). ok is false when neither is usable.
func ParseRetryAfter(retryAfterMs, retryAfter string, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(retryAfterMs); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(retryAfter)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// AttemptError is the error of one attempt at a request and whether another
// attempt may succeed.
type AttemptError struct {
	*Error
	Retry bool
}

// RetryNotice says that a failed attempt will be retried: the retry's
// number (1 for the first), how many the policy allows, the wait before it,
// and why the attempt failed.
type RetryNotice struct {
	Attempt int
	Max     int
	Wait    time.Duration
	Reason  string
}

// Do runs try until it succeeds, then returns its response. It stops with
// ctx's error once ctx is done, and with try's error when output already
// reached the caller (emitted: a retry would show it twice), when the error
// is not retryable, or when the policy gives up (the message then says after
// how many retries).
func (p RetryPolicy) Do(ctx context.Context, try func() (resp Response, emitted bool, err *AttemptError)) (Response, error) {
	return p.DoNotify(ctx, nil, try)
}

// DoNotify is Do that also tells onEvent (when not nil) about each retry
// before waiting for it, as an EventRetry, so a user sees why nothing moves.
func (p RetryPolicy) DoNotify(ctx context.Context, onEvent func(Event), try func() (resp Response, emitted bool, err *AttemptError)) (Response, error) {
	for attempt := 0; ; attempt++ {
		resp, emitted, err := try()
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		if emitted && err.Retry {
			// A retry would show the partial answer twice: the user retries.
			err.Message += " (the answer had already started, so it was not retried: send the request again)"
		}
		if emitted || !err.Retry {
			return Response{}, err.Error
		}
		d, ok := p.Delay(attempt, err.RetryAfter)
		if !ok {
			if attempt > 0 {
				retries := "1 retry"
				if attempt > 1 {
					retries = strconv.Itoa(attempt) + " retries"
				}
				err.Message += " (gave up after " + retries + ")"
			}
			return Response{}, err.Error
		}
		if onEvent != nil {
			onEvent(Event{Type: EventRetry, Retry: &RetryNotice{Attempt: attempt + 1, Max: p.MaxRetries, Wait: d, Reason: err.Error.Reason()}})
		}
		if werr := p.Wait(ctx, d); werr != nil {
			return Response{}, werr
		}
	}
}
