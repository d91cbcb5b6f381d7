package agent

import (
	"context"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// A tool call's work reports to the runner that made the call through the
// context (as a sub-agent does): its events arrive in order with the
// runner's own, its usage adds to the run's, and it sees the runner's model.
func TestToolCallContextCarriesTheRunnersTrace(t *testing.T) {
	var seenModel string
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
		trace := ContextCallTrace(ctx)
		seenModel = trace.CurrentModel()
		trace.Report(Event{Kind: TaskStart, TaskID: "task-1", TaskType: "explore"})
		trace.AddUsage(llm.Usage{InputTokens: 1000, OutputTokens: 7}, "sub-model")
		trace.Report(Event{Kind: TaskEnd, TaskID: "task-1"})
		return tool.Result{Output: "found it"}
	})
	p := newProvider(t, "fake", llmtest.ToolTurn(taskCall("t1", "explore", "look")), llmtest.TextTurn("done"))
	r, rec := newRunner(t, p, tt, nil)
	res, err := r.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if seenModel == "" || seenModel != r.Model() {
		t.Errorf("the call saw model %q, want the runner's %q", seenModel, r.Model())
	}
	if len(rec.kinds(TaskStart)) != 1 || len(rec.kinds(TaskEnd)) != 1 {
		t.Errorf("task events did not reach the runner's OnEvent")
	}
	if res.Usage.InputTokens < 1000 || r.TotalUsage().OutputTokens < 7 {
		t.Errorf("the call's usage was not added: run %+v, total %+v", res.Usage, r.TotalUsage())
	}
}

// Without a trace (a command run outside any agent) reporting does nothing.
func TestZeroCallTraceDoesNothing(t *testing.T) {
	trace := ContextCallTrace(context.Background())
	trace.Report(Event{Kind: TaskStart})
	trace.AddUsage(llm.Usage{InputTokens: 1}, "m")
	if m := trace.CurrentModel(); m != "" {
		t.Errorf("CurrentModel = %q, want empty", m)
	}
}
