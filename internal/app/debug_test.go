package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// SYNAPSE_DEBUG=1 writes $SYNAPSE_HOME/logs/debug-*.log with the model
// requests and retries, the tool calls with their timing and exit, and the
// sandbox state, and never the API key.
func TestDebugLog(t *testing.T) {
	home, proj, syn := unsandboxedHome(t)
	writeTestFile(t, filepath.Join(proj, "README.md"), "x\n")
	const key = "sk-ant-debuglog-secret-key-0123456789"
	srv := llmtest.New(t,
		llmtest.Turn{Status: 529, RetryAfterMs: "1"},
		llmtest.ToolTurn(llmtest.BashCall("t1", "cat README.md")),
		llmtest.TextTurn("done"))
	for _, debug := range []string{"1", ""} {
		env := map[string]string{"HOME": home, "SYNAPSE_HOME": syn, "SYNAPSE_MODEL": "claude-test",
			"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": key, "SYNAPSE_DEBUG": debug}
		a, err := New(testutil.MapEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		g, err := a.NewAgent(context.Background(), AgentSetup{Cwd: proj, DisableSkillSearchInstruction: true})
		if err != nil {
			t.Fatal(err)
		}
		if debug == "1" {
			if res, err := g.Runner.Run(context.Background(), "read the readme"); err != nil || res.Text != "done" {
				t.Fatalf("run: %+v, %v", res, err)
			}
		}
		_ = g.Close()
	}
	files, _ := filepath.Glob(filepath.Join(syn, "logs", "debug-*.log"))
	if len(files) != 1 {
		t.Fatalf("debug logs %v, want one (none without SYNAPSE_DEBUG)", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	log := string(data)
	for _, want := range []string{"msg=sandbox", "msg=request", "msg=retry", "msg=response", "msg=tool layer=native name=cat", `command="cat README.md"`, "exit=0"} {
		if !strings.Contains(log, want) {
			t.Errorf("debug log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, key) {
		t.Errorf("the API key reached the debug log:\n%s", log)
	}
}
