package agent

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// preparingTool is a testTool that counts Prepare calls and notes how many
// there had been when each call ran.
type preparingTool struct {
	*testTool
	mu         sync.Mutex
	prepares   int
	seenByCall []int
}

func (p *preparingTool) Prepare() {
	p.mu.Lock()
	p.prepares++
	p.mu.Unlock()
}

func (p *preparingTool) Call(ctx context.Context, input json.RawMessage) tool.Result {
	p.mu.Lock()
	p.seenByCall = append(p.seenByCall, p.prepares)
	p.mu.Unlock()
	return p.testTool.Call(ctx, input)
}

// The tool is told to get ready when the model begins a call, before the
// call has arrived whole (its shell then starts while the model writes the
// command), and never for an answer without one.
func TestToolIsPreparedWhenACallBegins(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.TextTurn("Nothing to run."),
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.BashCall("c1", "echo hi"), llmtest.BashCall("c2", "echo ho")}},
				llmtest.TextTurn("Done."),
			)
			tt := newTestTool(func(_ context.Context, cmd string) tool.Result { return tool.Result{Output: cmd} })
			pt := &preparingTool{testTool: tt}
			r, _ := newRunner(t, wire(t, format, srv), tt, func(o *Options) { o.Tool = pt })
			if _, err := r.Run(context.Background(), "hi"); err != nil {
				t.Fatal(err)
			}
			if pt.prepares != 0 {
				t.Fatalf("prepared %d times for an answer without a call", pt.prepares)
			}
			if _, err := r.Run(context.Background(), "run them"); err != nil {
				t.Fatal(err)
			}
			if pt.prepares != 2 || len(pt.seenByCall) != 2 || pt.seenByCall[0] == 0 {
				t.Fatalf("prepares %d, seen by the calls %v: want one per call, before they ran", pt.prepares, pt.seenByCall)
			}
		})
	}
}
