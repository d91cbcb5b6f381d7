package llm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAPIFailureTyped(t *testing.T) {
	inner := errors.New("sdk error")
	tests := []struct {
		name        string
		status      int
		detail      string
		header      http.Header
		what, hint  string
		wantStatus  int
		wantMessage string
		wantError   string // "" when it is the message with provider and status
		wantWait    time.Duration
	}{
		{name: "detail and hint", status: 401, detail: "bad key", what: "the API key was refused", hint: "check KEY",
			wantStatus: 401, wantMessage: "the API key was refused: bad key", wantError: "prov: the API key was refused: bad key; check KEY (HTTP 401)"},
		{name: "status text when no detail", status: 404, what: "not found", hint: "check the model",
			wantStatus: 404, wantMessage: "not found: Not Found", wantError: "prov: not found: Not Found; check the model (HTTP 404)"},
		{name: "no hint", status: 400, detail: "bad field", what: "the request was refused",
			wantStatus: 400, wantMessage: "the request was refused: bad field"},
		{name: "stream event has no status", status: 200, what: "the server reported an error",
			wantStatus: 0, wantMessage: "the server reported an error"},
		{name: "retry-after-ms wins", status: 429, detail: "slow down", header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"9"}},
			what: "rate limited", wantStatus: 429, wantMessage: "rate limited: slow down", wantWait: 1500 * time.Millisecond},
		{name: "retry-after seconds", status: 529, header: http.Header{"Retry-After": {"3"}},
			what: "overloaded", wantStatus: 529, wantMessage: "overloaded", wantWait: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := NewAPIFailure("prov", tt.status, tt.detail, tt.header, inner).Typed(ErrAuth, tt.what, tt.hint)
			if e.Kind != ErrAuth || e.Provider != "prov" || e.StatusCode != tt.wantStatus || e.Message != tt.wantMessage || e.RetryAfter != tt.wantWait {
				t.Errorf("got %+v, want status %d, message %q, wait %v", e, tt.wantStatus, tt.wantMessage, tt.wantWait)
			}
			reason := "prov: " + tt.wantMessage
			if tt.wantStatus != 0 {
				reason += fmt.Sprintf(" (HTTP %d)", tt.wantStatus)
			}
			if e.Reason() != reason {
				t.Errorf("Reason() = %q, want %q (no hint)", e.Reason(), reason)
			}
			want := tt.wantError
			if want == "" {
				want = reason
			}
			if e.Error() != want {
				t.Errorf("Error() = %q, want %q", e.Error(), want)
			}
			if !errors.Is(e, inner) {
				t.Errorf("the SDK error is not wrapped")
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	m := TransportMessages{Undecodable: "undecodable", Closed: "closed", Unreachable: "unreachable"}
	var syn *json.SyntaxError
	synErr := json.Unmarshal([]byte("{"), &struct{}{})
	if !errors.As(synErr, &syn) {
		t.Fatalf("setup: %v is not a syntax error", synErr)
	}
	typErr := json.Unmarshal([]byte(`{"a":1}`), &struct{ A string }{})
	tests := []struct {
		name      string
		err       error
		wantKind  ErrorKind
		wantMsg   string
		wantRetry bool
	}{
		{"syntax error", fmt.Errorf("decode: %w", synErr), ErrProtocol, "undecodable", false},
		{"type error", typErr, ErrProtocol, "undecodable", false},
		{"line too long", bufio.ErrTooLong, ErrProtocol, "undecodable", false},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), ErrConnection, "closed", true},
		{"EOF", io.EOF, ErrConnection, "closed", true},
		{"refused", errors.New("dial tcp: connection refused"), ErrConnection, "unreachable", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, retry := TransportError("prov", tt.err, m)
			if e.Kind != tt.wantKind || e.Message != tt.wantMsg || retry != tt.wantRetry || e.Provider != "prov" || e.StatusCode != 0 {
				t.Errorf("got %+v retry=%v, want %s %q retry=%v", e, retry, tt.wantKind, tt.wantMsg, tt.wantRetry)
			}
			if !errors.Is(e, tt.err) {
				t.Errorf("the cause is not wrapped")
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("x", 250)
	tests := []struct{ in, want string }{
		{"", ""},
		{"  short body \n", "short body"},
		{long, long[:200] + "…"},
		{strings.Repeat("y", 200), strings.Repeat("y", 200)},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.in); got != tt.want {
			t.Errorf("Excerpt(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestBadRequestHint(t *testing.T) {
	tests := []struct{ detail, code, want string }{
		{"prompt is too long: 210000 tokens > 200000 maximum", "", "context window"},
		{"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "", "context window"},
		{"whatever", "context_length_exceeded", "context window"},
		{"the input exceeds the context size of 8192", "", "context window"},
		{"messages: roles must alternate", "", "/clear"},
	}
	for _, tc := range tests {
		got := BadRequestHint(tc.detail, tc.code)
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "/clear") {
			t.Errorf("BadRequestHint(%q, %q) = %q, want it to contain %q and /clear", tc.detail, tc.code, got, tc.want)
		}
	}
}
