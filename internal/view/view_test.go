package view

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

func TestSinkTodoWriteSummary(t *testing.T) {
	var out bytes.Buffer
	sink := New(render.New(render.Options{Out: &out}))
	sink.Handle(agent.Event{Kind: agent.ToolStart, CallID: "1", Command: "TodoWrite '[]'"})
	sink.Handle(agent.Event{Kind: agent.TodoChange, Todos: nil})
	sink.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "1", Command: "TodoWrite '[]'", Result: &tool.Result{Output: "ok"}})
	if !strings.Contains(out.String(), "todo list is empty") {
		t.Errorf("TodoWrite line lacks the list summary:\n%s", out.String())
	}
}

func TestSinkToolMarks(t *testing.T) {
	tests := []struct {
		name   string
		result *tool.Result
		want   []string
	}{
		{"success", &tool.Result{Output: "hi"}, []string{"✓ echo x", "hi"}},
		{"failure", &tool.Result{Output: "boom\n[exit code: 2]", IsError: true, Message: "Command failed with exit code 2"}, []string{"✗ echo x", "Command failed", "boom"}},
		{"sandbox refusal is not shown as a success", &tool.Result{Output: "[sandbox blocked] The sandbox policy did not allow this command",
			Facts: tool.Facts{Type: tool.ExtrasTypeSandboxBlocked}}, []string{"✗ echo x", "blocked by the sandbox", "[sandbox blocked]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			sink := New(render.New(render.Options{Out: &out}))
			sink.Handle(agent.Event{Kind: agent.ToolStart, CallID: "1", Command: "echo x"})
			sink.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "1", Command: "echo x", Result: tt.result})
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// The REPL (New) and `synapse run` piped (NewSplit) draw the same events the
// same way; only where the answer text goes differs. A failed task shows its
// reason in both (it once showed only in the REPL).
func TestViewsAgree(t *testing.T) {
	events := []agent.Event{
		{Kind: agent.TextDelta, Text: "Looking."},
		{Kind: agent.ToolStart, CallID: "1", Command: "ls"},
		{Kind: agent.ToolEnd, CallID: "1", Command: "ls", Result: &tool.Result{Output: "a.go"}},
		{Kind: agent.TaskStart, TaskID: "t1", TaskType: "explore", TaskDescription: "find the bug"},
		{Kind: agent.TaskToolStart, TaskID: "t1", CallID: "s1", Command: "grep -r bug ."},
		{Kind: agent.TaskToolEnd, TaskID: "t1", CallID: "s1", Command: "grep -r bug .", Result: &tool.Result{Output: "x"}},
		{Kind: agent.TaskEnd, TaskID: "t1", Duration: 2 * time.Second, ToolCount: 1,
			Result: &tool.Result{IsError: true, Message: "the sub-agent hit its turn limit"}},
		{Kind: agent.Reminder, Text: "continue"},
		{Kind: agent.Warning, Err: errors.New("corrupt line 3")},
		{Kind: agent.TurnEnd},
	}
	var replOut, runText, runProgress bytes.Buffer
	repl := New(render.New(render.Options{Out: &replOut}))
	run := NewSplit(render.New(render.Options{Out: &runProgress}), &runText)
	for _, e := range events {
		repl.Handle(e)
		run.Handle(e)
	}
	run.Finish(false)
	for _, want := range []string{"✓ ls", "a.go", "explore", "find the bug", "the sub-agent hit its turn limit",
		ReminderNotice, "warning: corrupt line 3"} {
		if !strings.Contains(replOut.String(), want) {
			t.Errorf("REPL output lacks %q:\n%s", want, replOut.String())
		}
		if !strings.Contains(runProgress.String(), want) {
			t.Errorf("run progress lacks %q:\n%s", want, runProgress.String())
		}
	}
	if got := runText.String(); got != "Looking.\n" {
		t.Errorf("run answer text = %q, want %q", got, "Looking.\n")
	}
	if strings.Contains(runProgress.String(), "Looking.") {
		t.Errorf("run progress has the answer text:\n%s", runProgress.String())
	}
	// Apart from the answer text the two draw the same lines.
	if want, got := strings.Replace(replOut.String(), "Looking.\n", "", 1), runProgress.String(); got != want {
		t.Errorf("run progress differs from the REPL's:\n--- run\n%s--- repl\n%s", got, want)
	}
}

func TestTaskOutcome(t *testing.T) {
	boom := errors.New("provider down")
	tests := []struct {
		name    string
		e       agent.Event
		ok      bool
		errText string
	}{
		{"success", agent.Event{Result: &tool.Result{Output: "done"}}, true, ""},
		{"failed result", agent.Event{Result: &tool.Result{IsError: true, Message: "turn limit"}}, false, "turn limit"},
		{"run error wins", agent.Event{Result: &tool.Result{IsError: true, Message: "turn limit"}, Err: boom}, false, "provider down"},
		{"no result", agent.Event{}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, errText := TaskOutcome(tt.e)
			if ok != tt.ok || errText != tt.errText {
				t.Errorf("TaskOutcome = %v, %q; want %v, %q", ok, errText, tt.ok, tt.errText)
			}
		})
	}
}

// The size of the last request (cache included) is what /context shows;
// Reset forgets it.
func TestContextTokens(t *testing.T) {
	v := New(render.New(render.Options{}))
	v.Handle(agent.Event{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 500, CacheReadTokens: 49500, CacheCreationTokens: 10}})
	if got := v.ContextTokens(); got != 50010 {
		t.Errorf("ContextTokens = %d, want 50010", got)
	}
	v.Reset()
	if got := v.ContextTokens(); got != 0 {
		t.Errorf("after Reset ContextTokens = %d, want 0", got)
	}
}

// A TodoWrite line shows the list as changed by that call.
func TestTodoWriteShowsTheNewList(t *testing.T) {
	var out bytes.Buffer
	v := New(render.New(render.Options{Out: &out}))
	v.Handle(agent.Event{Kind: agent.ToolStart, CallID: "1", Command: "TodoWrite '[...]'"})
	v.Handle(agent.Event{Kind: agent.TodoChange, Todos: []todo.Item{{Content: "write the view", Status: todo.InProgress}}})
	v.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "1", Command: "TodoWrite '[...]'", Result: &tool.Result{Output: "ok"}})
	if !strings.Contains(out.String(), "write the view") {
		t.Errorf("TodoWrite line lacks the list:\n%s", out.String())
	}
}

// An error is drawn once, and Shown lets the caller skip repeating it;
// a limit is a notice, not an error.
func TestErrorsAndLimits(t *testing.T) {
	var out bytes.Buffer
	v := New(render.New(render.Options{Out: &out}))
	boom := errors.New("provider said no")
	v.Handle(agent.Event{Kind: agent.Error, Err: boom})
	if !v.Shown(boom) || v.Shown(errors.New("provider said no")) {
		t.Errorf("Shown: want true for the drawn error only")
	}
	if !strings.Contains(out.String(), "provider said no") {
		t.Errorf("error not drawn:\n%s", out.String())
	}
	out.Reset()
	v.Handle(agent.Event{Kind: agent.Error, Err: &agent.LimitError{Message: "stopped after 50 turns"}})
	if got := out.String(); !strings.Contains(got, "stopped after 50 turns") || strings.Contains(got, "✗") {
		t.Errorf("a limit should be a plain notice:\n%s", got)
	}
}

// A failure's folded output shows the command's own last lines (its error),
// not the exit-code line and repair hint written for the model.
func TestSinkFailureShowsTheError(t *testing.T) {
	var out bytes.Buffer
	sink := New(render.New(render.Options{Out: &out}))
	res := &tool.Result{IsError: true, Message: "`task:general` failed with exit code 1 (invalid_usage)",
		Output: "[stderr]\nUnexpected argument \"x\": give the task text with --prompt\nUsage: task:general --prompt \"<task>\"\nRun `task:general --help` for details.\n[exit code: 1]\n[Self-description] `task:general` was called with invalid arguments.",
		Facts:  tool.Facts{ExitCode: func() *int { n := 1; return &n }()}}
	sink.Handle(agent.Event{Kind: agent.ToolStart, CallID: "1", Command: "task:general x"})
	sink.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "1", Command: "task:general x", Result: res})
	got := out.String()
	if !strings.Contains(got, "Unexpected argument") {
		t.Errorf("the error line is not shown:\n%s", got)
	}
	for _, bad := range []string{"[exit code: 1]", "[Self-description]", "[stderr]"} {
		if strings.Contains(got, bad) {
			t.Errorf("shows %q, written for the model:\n%s", bad, got)
		}
	}
}

// An interrupted (or failed) task shows one failure row, its own with the
// reason; the task:* call's end adds none. A task:* call that failed before
// any task started still shows its failure.
func TestFailedTaskOneRow(t *testing.T) {
	const cmd = "task:general --prompt 'survey the repo'"
	interrupted := &tool.Result{Output: "cancelled", IsError: true, Message: "cancelled"}
	tests := []struct {
		name       string
		taskEnd    bool
		want, none []string
	}{
		{"interrupted task", true, []string{"✗ Task(general: survey the repo)", "Task execution interrupted"}, []string{"✗ task:general"}},
		{"no task started", false, []string{"✗ task:general", "cancelled"}, []string{"Task(general"}},
	}
	for _, tt := range tests {
		for _, tty := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tty=%v", tt.name, tty), func(t *testing.T) {
				var out bytes.Buffer
				v := New(render.New(render.Options{Out: &out, TTY: tty, Width: 100, Height: 30}))
				v.Handle(agent.Event{Kind: agent.ToolStart, CallID: "c1", Command: cmd})
				if tt.taskEnd {
					v.Handle(agent.Event{Kind: agent.TaskStart, TaskID: "t1", ParentCallID: "c1", TaskType: "general", TaskDescription: "survey the repo"})
					v.Handle(agent.Event{Kind: agent.TaskEnd, TaskID: "t1", ParentCallID: "c1", Duration: time.Second,
						Result: &tool.Result{IsError: true, Message: "Task execution interrupted"}})
				}
				v.Handle(agent.Event{Kind: agent.ToolEnd, CallID: "c1", Command: cmd, Result: interrupted})
				got := out.String()
				for _, w := range tt.want {
					if !strings.Contains(got, w) {
						t.Errorf("output lacks %q:\n%s", w, got)
					}
				}
				for _, n := range tt.none {
					if strings.Contains(got, n) {
						t.Errorf("output has %q:\n%s", n, got)
					}
				}
				if tt.taskEnd && strings.Count(got, "✗") != 1 {
					t.Errorf("%d failure rows, want one:\n%s", strings.Count(got, "✗"), got)
				}
			})
		}
	}
}
