package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		ms, s  string
		want   time.Duration
		wantOK bool
	}{
		{"", "", 0, false},
		{"", "2", 2 * time.Second, true},
		{"", "0.5", 500 * time.Millisecond, true},
		{"250", "9", 250 * time.Millisecond, true},
		{"junk", "3", 3 * time.Second, true},
		{"", now.Add(7 * time.Second).Format(time.RFC1123), 7 * time.Second, true},
		{"", now.Add(-time.Minute).Format(time.RFC1123), 0, true},
		{"", "soon", 0, false},
		{"-5", "", 0, false},
	}
	for _, tc := range tests {
		got, ok := ParseRetryAfter(tc.ms, tc.s, now)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ParseRetryAfter(%q, %q) = %v, %v; want %v, %v", tc.ms, tc.s, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestRetryPolicyDelay(t *testing.T) {
	p := RetryPolicy{MaxRetries: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 250 * time.Millisecond, MaxRetryAfter: 10 * time.Second}
	tests := []struct {
		attempt    int
		retryAfter time.Duration
		min, max   time.Duration
		ok         bool
	}{
		{0, 0, 80 * time.Millisecond, 100 * time.Millisecond, true},
		{1, 0, 160 * time.Millisecond, 200 * time.Millisecond, true},
		{2, 0, 200 * time.Millisecond, 250 * time.Millisecond, true}, // capped
		{0, 3 * time.Second, 3 * time.Second, 3 * time.Second, true}, // server knows best
		{0, time.Minute, 0, 0, false},                                // too long to wait
		{3, 0, 0, 0, false},                                          // out of retries
	}
	for _, tc := range tests {
		d, ok := p.Delay(tc.attempt, tc.retryAfter)
		if ok != tc.ok || d < tc.min || d > tc.max {
			t.Errorf("Delay(%d, %v) = %v, %v; want [%v, %v], %v", tc.attempt, tc.retryAfter, d, ok, tc.min, tc.max, tc.ok)
		}
	}
}

func TestRetryPolicyWaitHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (RetryPolicy{}).Wait(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestContextWindow(t *testing.T) {
	tests := []struct {
		model string
		want  int
		known bool
	}{
		{"claude-sonnet-4-5", 200_000, true},
		{"claude-3-5-haiku-latest", 200_000, true},
		{"gpt-4o-mini", 128_000, true},
		{"gpt-4.1-nano", 1_047_576, true},
		{"gpt-4", 8_192, true},
		{"GPT-5", 400_000, true},
		{"o1-mini", 128_000, true},
		{"o3-mini", 200_000, true},
		{"gpt-4-32k-0613", 32_768, true},
		{"gpt-4.5-preview", 128_000, true},
		{"qwen3:8b", 40_960, true},
		{"library/llama3.1:70b", 131_072, true},
		{"my-own-model", DefaultContextWindow, false},
	}
	for _, tc := range tests {
		if got := ContextWindow(tc.model); got != tc.want {
			t.Errorf("ContextWindow(%q) = %d, want %d", tc.model, got, tc.want)
		}
		if _, ok := LookupContextWindow(tc.model); ok != tc.known {
			t.Errorf("LookupContextWindow(%q) known = %v", tc.model, ok)
		}
	}
}

func TestErrorMessageAndKind(t *testing.T) {
	inner := errors.New("dial tcp: refused")
	err := error(&Error{Kind: ErrAuth, Provider: "anthropic", StatusCode: 401, Message: "the API key was refused", Err: inner})
	if got := err.Error(); got != "anthropic: the API key was refused (HTTP 401)" {
		t.Errorf("Error() = %q", got)
	}
	if kindOf(err) != ErrAuth || !errors.Is(err, inner) || kindOf(inner) != "" {
		t.Error("kind or unwrap broken")
	}
}

func kindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
