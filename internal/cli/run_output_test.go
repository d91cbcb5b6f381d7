package cli

import (
	"bytes"
	"strings"
	"testing"

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
			Extras: map[string]any{"type": tool.ExtrasTypeSandboxBlocked}}, []string{"✗ echo x", "blocked by the sandbox", "/etc/x"}, []string{"✓"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			o := newRunOutput(IO{Out: &out, Err: &errw}, formatText, func(string) string { return "" })
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

// An empty prompt says where it was empty: `synapse run -` with nothing on
// stdin must not be told to use `synapse run -`.
func TestReadPromptEmpty(t *testing.T) {
	cases := []struct {
		name string
		in   string
		args []string
		want string
	}{
		{"no argument", "", nil, `use synapse run "<prompt>"`},
		{"blank argument", "", []string{"  "}, `use synapse run "<prompt>"`},
		{"empty stdin", " \n", []string{"-"}, "stdin was empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readPrompt(strings.NewReader(c.in), c.args)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}
