package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// BenchmarkParallelSubagentTurn is one parent turn through app.NewAgent:
// the model calls task:explore five times, each sub-agent answers at once,
// the parent answers. Compare with BenchmarkRequestCriticalPath, the three
// requests on the turn's critical path made directly: the difference is
// what the loop, the batch and five sub-agents add beyond the server.
func BenchmarkParallelSubagentTurn(b *testing.B) {
	testutil.RequireBwrap(b)
	w := newWorld(b, nil)
	scriptParallel(w.srv, 5, nil)
	g, err := w.app.NewAgent(context.Background(), app.AgentSetup{Cwd: w.proj, DisableSkillSearchInstruction: true})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	runner := g.Runner
	b.ReportAllocs()
	for b.Loop() {
		runner.Reset()
		res, err := runner.Run(context.Background(), "explore everything")
		if err != nil || res.Text != "collected 5 results" {
			b.Fatalf("run = %q, %v", res.Text, err)
		}
	}
}

// BenchmarkRequestCriticalPath makes the turn's critical path of requests
// directly with the same provider: parent (5 tool calls), one sub-agent,
// parent again.
func BenchmarkRequestCriticalPath(b *testing.B) {
	w := newWorld(b, nil)
	scriptParallel(w.srv, 5, nil)
	p, model, err := w.app.Provider(app.ProviderSelection{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		first, err := p.Stream(ctx, llm.Request{Model: model, System: "parent", MaxTokens: 100,
			Messages: []llm.Message{{Role: llm.RoleUser, Text: "explore everything"}}}, nil)
		if err != nil || len(first.Message.ToolCalls) != 5 {
			b.Fatalf("parent request: %v, %d calls", err, len(first.Message.ToolCalls))
		}
		if _, err := p.Stream(ctx, llm.Request{Model: model, System: "an explore sub-agent of Synapse", MaxTokens: 100,
			Messages: []llm.Message{{Role: llm.RoleUser, Text: "explore area 1 of the project"}}}, nil); err != nil {
			b.Fatal(err)
		}
		first.Message.Role = llm.RoleAssistant
		msgs := []llm.Message{{Role: llm.RoleUser, Text: "explore everything"}, first.Message}
		for i, c := range first.Message.ToolCalls {
			msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Text: fmt.Sprintf("explored area %d", i)})
		}
		if _, err := p.Stream(ctx, llm.Request{Model: model, System: "parent", MaxTokens: 100, Messages: msgs}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
