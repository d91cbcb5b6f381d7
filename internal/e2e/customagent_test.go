package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// A session's custom agents (the Agent SDK host's) run through the real
// app: one given only reading tools works read-only like task:explore
// (the sandbox refuses its writes, write is not its command, it cannot
// nest), one given Bash writes; each gets its own system prompt.
func TestCustomAgentsHoldTheirTools(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	must(t, os.WriteFile(filepath.Join(w.proj, "existing.txt"), []byte("original\n"), 0o644))
	g, err := w.app.NewAgent(context.Background(), app.AgentSetup{Cwd: w.proj, DisableSkillSearchInstruction: true})
	must(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var kinds []subagent.Kind
	for name, d := range map[string]subagent.Definition{
		"reader": {Description: "reads", Prompt: "You are CUSTOM-READER.", Tools: []string{"Read", "Grep"}},
		"writer": {Description: "writes", Prompt: "You are CUSTOM-WRITER.", Tools: []string{"Bash"}},
	} {
		k, _, err := subagent.NewCustomKind(name, d)
		must(t, err)
		kinds = append(kinds, k)
	}
	g.Agents.Set(kinds)

	attempts := map[string][]string{
		"reader": {`echo x > r1.txt`, `write r2.txt hi`, `task:general -p n -d n`, `cat existing.txt`},
		"writer": {`echo x > w1.txt && echo wrote`},
	}
	var (
		mu      sync.Mutex
		results = map[string]string{}
	)
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		who := ""
		for _, n := range []string{"reader", "writer"} {
			if strings.HasPrefix(req.System, "You are CUSTOM-"+strings.ToUpper(n)) {
				who = n
			}
		}
		if who == "" {
			if req.Turns() == 0 {
				return llmtest.ToolTurn(llmtest.BashCall("p1", `task:reader -p "try" -d "reader"`), llmtest.BashCall("p2", `task:writer -p "try" -d "writer"`))
			}
			return llmtest.TextTurn("parent done")
		}
		if req.Turns() == 0 {
			var calls []llmtest.ToolCall
			for i, cmd := range attempts[who] {
				calls = append(calls, llmtest.BashCall(who+string(rune('0'+i)), cmd))
			}
			return llmtest.ToolTurn(calls...)
		}
		mu.Lock()
		for i, cmd := range attempts[who] {
			if tr, ok := req.ToolResult(who + string(rune('0'+i))); ok {
				results[cmd] = tr.Content
			}
		}
		mu.Unlock()
		return llmtest.TextTurn(who + " done")
	})
	res, err := g.Runner.Run(context.Background(), "go")
	if err != nil || res.Text != "parent done" {
		t.Fatalf("run = %q, %v", res.Text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for cmd, want := range map[string]string{
		`write r2.txt hi`:               "Command blocked",
		`task:general -p n -d n`:        "Command blocked",
		`cat existing.txt`:              "original",
		`echo x > w1.txt && echo wrote`: "wrote",
	} {
		if !strings.Contains(results[cmd], want) {
			t.Errorf("%s: %q, want %q", cmd, results[cmd], want)
		}
	}
	for _, f := range []string{"r1.txt", "r2.txt"} {
		if _, err := os.Stat(filepath.Join(w.proj, f)); err == nil {
			t.Errorf("the read-only agent wrote %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(w.proj, "w1.txt")); err != nil {
		t.Errorf("the writing agent could not write: %v", err)
	}
}
