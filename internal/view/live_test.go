package view

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/tool"
)

// The view passes what the live screen needs from the events: thinking,
// structured retries, a file change as a diff (the model's output aside),
// a task call without a row of its own, the task's tokens, live output.
func TestViewLiveDetails(t *testing.T) {
	var out bytes.Buffer
	v := New(render.New(render.Options{Out: &out}))
	task := `task:general -p "look" -d "look around"`
	for _, e := range []agent.Event{
		{Kind: agent.ThinkingDelta, Text: "Let me think.\nSecond thought."},
		{Kind: agent.Retry, Text: "model request failed, retry 1 of 3 in 2s: overloaded",
			RetryNotice: &llm.RetryNotice{Attempt: 1, Max: 3, Wait: 2 * time.Second, Reason: "overloaded"}},
		{Kind: agent.ToolStart, CallID: "e", Command: "edit a.txt old new", Route: router.Classify("edit a.txt old new")},
		{Kind: agent.ToolOutput, CallID: "e", Text: "live piece"},
		{Kind: agent.ToolEnd, CallID: "e", Command: "edit a.txt old new", Result: &tool.Result{Output: "Edited /w/a.txt: replaced 1 occurrence\n",
			Change: &command.FileChange{Path: "/w/a.txt", Old: "x\nold\n", New: "x\nnew\n"}}},
		{Kind: agent.ToolStart, CallID: "t", Command: task, Route: router.Classify(task)},
		{Kind: agent.TaskStart, TaskID: "k", TaskType: "general", TaskDescription: "look around"},
		{Kind: agent.TaskEnd, TaskID: "k", Duration: 2 * time.Second, ToolCount: 1,
			Usage: &llm.Usage{InputTokens: 1000, OutputTokens: 200}, Result: &tool.Result{Output: "## Found\nit"}},
		{Kind: agent.ToolEnd, CallID: "t", Command: task, Result: &tool.Result{Output: "## Found\nit"}},
	} {
		v.Handle(e)
	}
	got := out.String()
	for _, want := range []string{
		"✻ Thought for 0s · 2 lines\n", // one line; Ctrl+O shows it whole
		"↻ overloaded · retrying in 2s (retry 1/3)\n",
		"✓ edit a.txt old new\n", "    2 - old\n", "    2 + new\n",
		"✓ Task(general: look around) · 2s · 1 tool · 1.2k tokens\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"Edited /w/a.txt", "▸ task:general", "live piece"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, got)
		}
	}
}
