package shell

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
)

// A running command's output reaches the context's OutputFunc as it is
// printed, before the command ends; the result still holds all of it.
func TestOutputStreamsWhileRunning(t *testing.T) {
	s := startT(t, Options{})
	var mu sync.Mutex
	var seen strings.Builder
	first := make(chan struct{})
	ctx := command.WithOutput(context.Background(), func(chunk string) {
		mu.Lock()
		defer mu.Unlock()
		// stdout and stderr are read by separate goroutines, so err-line
		// may be streamed before early: wait for early, whatever came first.
		had := strings.Contains(seen.String(), "early")
		seen.WriteString(chunk)
		if !had && strings.Contains(seen.String(), "early") {
			close(first)
		}
	})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan command.Result, 1)
	go func() {
		r, err := s.Execute(ctx, "echo early; echo err-line >&2; sleep 1; echo late")
		if err != nil {
			t.Errorf("Execute: %v", err)
		}
		done <- r
	}()
	select {
	case <-first:
	case r := <-done:
		t.Fatalf("the command ended (%+v) before its first output was streamed", r)
	case <-time.After(20 * time.Second):
		t.Fatal("no output streamed")
	}
	select {
	case <-done:
		t.Fatal("the command ended at once; it should still be sleeping")
	default:
	}
	r := <-done
	if r.Stdout != "early\nlate\n" {
		t.Errorf("stdout = %q", r.Stdout)
	}
	mu.Lock()
	got := seen.String()
	mu.Unlock()
	for _, want := range []string{"early\n", "err-line\n", "late\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("streamed output %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, ":start") || strings.Contains(got, ":end") {
		t.Errorf("framing markers leaked into the streamed output: %q", got)
	}
}
