package cli

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/tool"
)

// synapse run's text output marks a tool call by what happened to it, as the
// REPL does: a command the sandbox refused did not run, so it is shown as
// blocked, never with the success mark (the tool result is not an error for
// the model, which is told what to do instead).
func TestRunTextToolMarks(t *testing.T) {
	cases := []struct {
		name   string
		result tool.Result
		want   []string
		reject []string
	}{
		{"success", tool.Result{Output: "hi"}, []string{"✓ echo x", "hi"}, []string{"✗"}},
		{"failure", tool.Result{Output: "boom", IsError: true, Message: "Command failed with exit code 2"}, []string{"✗ echo x", "Command failed with exit code 2", "boom"}, []string{"✓"}},
		{"sandbox blocked", tool.Result{Output: "[sandbox blocked] The sandbox policy did not allow this command to access /etc/x.",
			Facts: tool.Facts{Type: tool.ExtrasTypeSandboxBlocked}}, []string{"✗ echo x", "blocked by the sandbox", "/etc/x"}, []string{"✓"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			o := newRunOutput(IO{Out: &out, Err: &errw}, formatText, false, func(string) string { return "" })
			o.event(agent.Event{Kind: agent.ToolStart, CallID: "c1", Command: "echo x"})
			res := c.result
			o.event(agent.Event{Kind: agent.ToolEnd, CallID: "c1", Command: "echo x", Result: &res})
			got := errw.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("progress lacks %q:\n%s", w, got)
				}
			}
			for _, r := range c.reject {
				if strings.Contains(got, r) {
					t.Errorf("progress has %q:\n%s", r, got)
				}
			}
		})
	}
}

// A task that fails shows why in `synapse run` as it does in the REPL (the
// two once drew TaskEnd differently, and run dropped the reason).
func TestRunTextShowsAFailedTasksReason(t *testing.T) {
	var out, errw bytes.Buffer
	o := newRunOutput(IO{Out: &out, Err: &errw}, formatText, false, func(string) string { return "" })
	o.event(agent.Event{Kind: agent.TaskStart, TaskID: "t1", TaskType: "explore", TaskDescription: "find the bug"})
	o.event(agent.Event{Kind: agent.TaskEnd, TaskID: "t1", Duration: time.Second,
		Result: &tool.Result{IsError: true, Message: "the sub-agent stopped after 20 turns"}})
	got := errw.String()
	for _, w := range []string{"find the bug", "✗", "the sub-agent stopped after 20 turns"} {
		if !strings.Contains(got, w) {
			t.Errorf("progress lacks %q:\n%s", w, got)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout carries only the answer, got %q", out.String())
	}
}

// An empty prompt says where it was empty: `synapse run -` with nothing on
// stdin must not be told to use `synapse run -`.
func TestReadPromptEmpty(t *testing.T) {
	cases := []struct {
		name string
		in   io.Reader
		args []string
		want string
	}{
		{"no argument, stdin a terminal", nil, nil, `use synapse run "<prompt>"`},
		{"blank argument, stdin a terminal", nil, []string{"  "}, `use synapse run "<prompt>"`},
		{"dash, stdin a terminal", nil, []string{"-"}, "no stdin to read the prompt from"},
		{"empty stdin", strings.NewReader(" \n"), []string{"-"}, "stdin was empty"},
		{"no argument, empty stdin", strings.NewReader(""), nil, "stdin was empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readPrompt(c.in, c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// Where the prompt comes from: arguments, stdin, or both (stdin appended as context).
func TestReadPrompt(t *testing.T) {
	cases := []struct {
		name string
		in   io.Reader
		args []string
		want string
	}{
		{"argument only", nil, []string{"fix", "it"}, "fix it"},
		{"stdin only", strings.NewReader("fix the test\n"), nil, "fix the test"},
		{"dash", strings.NewReader("fix the test\n"), []string{"-"}, "fix the test"},
		{"argument and stdin", strings.NewReader("diff --git a b\n"), []string{"review this"}, "review this\n\ndiff --git a b"},
		{"argument and empty stdin", strings.NewReader(""), []string{"review this"}, "review this"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readPrompt(c.in, c.args)
			if err != nil || got != c.want {
				t.Errorf("readPrompt = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// A terminal or /dev/null on stdin is never read: the run would wait for a
// person, or the prompt would silently be empty.
func TestPipedStdin(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if pipedStdin(null) != nil {
		t.Error("/dev/null counts as piped stdin")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if pipedStdin(r) == nil {
		t.Error("a pipe does not count as piped stdin")
	}
}
