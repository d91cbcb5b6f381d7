package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// A model server that stalls must not hang synapse run: before anything was
// shown the request is retried (and stderr says so); once the answer had
// started, the run fails within about the idle timeout, naming the endpoint.
func TestRunStalledServer(t *testing.T) {
	for _, format := range formats {
		t.Run(format+"/stalls mid-answer: fails naming the endpoint", func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Turn{Text: "Working on it, here is the first part", Fragment: 5, StallAfter: 6})
			e := newRunEnv(t, srv, format)
			e.env = append(e.env, "SYNAPSE_STREAM_IDLE_TIMEOUT=5")
			start := time.Now()
			r := e.run(t, "", "run", "Do the task")
			took := time.Since(start)
			t.Logf("stderr after %s:\n%s", took.Round(time.Millisecond), r.stderr)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			for _, want := range []string{"stalled: no data for 5s", strings.TrimPrefix(srv.URL(), "http://"), "SYNAPSE_STREAM_IDLE_TIMEOUT"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr does not contain %q:\n%s", want, r.stderr)
				}
			}
			if took > 30*time.Second {
				t.Errorf("took %s; the idle timeout is 5s", took)
			}
			if srv.Count() != 1 {
				t.Errorf("%d requests: an answer already shown must not be retried", srv.Count())
			}
		})
		t.Run(format+"/no headers: retried with a notice", func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Turn{Delay: time.Hour}, llmtest.TextTurn("All done."))
			e := newRunEnv(t, srv, format)
			e.env = append(e.env, "SYNAPSE_STREAM_IDLE_TIMEOUT=1")
			r := e.run(t, "", "run", "Do the task")
			if r.code != 0 || !strings.Contains(r.stdout, "All done.") {
				t.Fatalf("exit %d, want 0 with the answer\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stderr, "(retry 1/4)") || !strings.Contains(r.stderr, "did not answer: no response within 1s") {
				t.Errorf("stderr does not announce the retry with its reason:\n%s", r.stderr)
			}
		})
	}
	t.Run("invalid value: default with a warning", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.TextTurn("All done."))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.env = append(e.env, "SYNAPSE_STREAM_IDLE_TIMEOUT=soon")
		r := e.run(t, "", "run", "Do the task")
		if r.code != 0 || !strings.Contains(r.stderr, `SYNAPSE_STREAM_IDLE_TIMEOUT="soon" is not a positive whole number of seconds: using the default, 300`) {
			t.Errorf("exit %d; stderr lacks the warning:\n%s", r.code, r.stderr)
		}
	})
}
