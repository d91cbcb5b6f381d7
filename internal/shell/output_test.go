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

// The live output of a command stopped by a cancel or a timeout keeps the
// command's own lines and loses bash's report of the job we killed
// ("bash: line 1: 1234 Killed  sleep 30"), as its result does: a front end
// showing the streamed output of a cancelled command shows no such noise.
func TestStoppedCommandStreamsNoKilledJobNoise(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		timeout   time.Duration
	}{
		{"cancel", "echo started >&2; echo out; sleep 30", 0},
		{"cancel pipeline", "echo started >&2; sleep 30 | cat", 0},
		{"timeout", "echo started >&2; sleep 30", 500 * time.Millisecond},
		{"timeout pipeline", "echo started >&2; sleep 30 | cat", 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startT(t, Options{Timeout: tc.timeout})
			var mu sync.Mutex
			var seen strings.Builder
			started := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = command.WithOutput(ctx, func(chunk string) {
				mu.Lock()
				defer mu.Unlock()
				had := strings.Contains(seen.String(), "started\n")
				seen.WriteString(chunk)
				if !had && strings.Contains(seen.String(), "started\n") {
					close(started)
				}
			})
			done := make(chan command.Result, 1)
			go func() {
				r, err := s.Execute(ctx, tc.cmd)
				if err != nil {
					t.Errorf("Execute: %v", err)
				}
				done <- r
			}()
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				t.Fatal("the command's first line was not streamed")
			}
			if tc.timeout == 0 {
				cancel()
			}
			var r command.Result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the command did not stop")
			}
			if r.ExitCode != command.Interrupted && r.ExitCode != TimedOut {
				t.Fatalf("result %+v, want an interrupt or a timeout", r)
			}
			mu.Lock()
			got := seen.String()
			mu.Unlock()
			if strings.Contains(got, "Killed") || strings.Contains(got, "| cat") || !strings.Contains(got, "started\n") {
				t.Errorf("streamed output %q: want the command's own lines without bash's job report", got)
			}
		})
	}
}

// jobNoise passes output as it comes until the stop; after it, whole lines
// without the job report, a line cut between chunks once its end arrives.
func TestJobNoiseFilter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before []string
		after  []string
		want   string
	}{
		{"untouched before the stop", []string{"1234 Killed  x\n"}, nil, "1234 Killed  x\n"},
		{"report dropped", []string{"a\n"}, []string{"bash: line 1: 1234 Killed                  sleep 30\n", "b\n"}, "a\nb\n"},
		{"report cut between chunks", nil, []string{"bash: line 1: 12", "34 Killed  sleep 30\nmore"}, "more"},
		{"pipeline members", nil, []string{"bash: line 1: 1234 Killed  sleep 30\n      1235  | cat\n"}, ""},
		{"pipeline member in a later chunk", nil, []string{"/dev/fd/63: line 1: 1234 Killed  sleep 30\n", "     1235                       | cat\n", "after\n"}, "after\n"},
		{"a member-like line without a report", nil, []string{"   12 | x\n"}, "   12 | x\n"},
		{"other lines kept", nil, []string{"grep: x: No such file\n"}, "grep: x: No such file\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got strings.Builder
			j := jobNoise{emit: func(b []byte) { got.Write(b) }}
			for _, c := range tc.before {
				j.write([]byte(c))
			}
			j.on = true
			for _, c := range tc.after {
				j.write([]byte(c))
			}
			j.flush()
			if got.String() != tc.want {
				t.Errorf("passed %q, want %q", got.String(), tc.want)
			}
		})
	}
}
