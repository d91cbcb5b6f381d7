package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// Seed 004 "默认开启时应在用户消息前注入英文技能搜索指令" / "显式关闭后应保留原始用户输入",
// as settings.json drives it for synapse run and the REPL: without the key
// the first user message carries the instruction block and then the request;
// with "enableSkillSearchInstruction": false it is the input, unchanged.
func TestSeedSkillSearchInstructionFromSettings(t *testing.T) {
	cases := []struct {
		name     string
		settings string // "" writes no settings.json
		input    string
		wrapped  bool
	}{
		{"default on", "", "<user-request>", true},
		{"explicit true", `{"enableSkillSearchInstruction": true}`, "<user-request>", true},
		{"explicit false", `{"enableSkillSearchInstruction": false}`, "保持原始输入", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Only the wiring of the setting is under test: no OS sandbox needed.
			home, proj, syn := unsandboxedHome(t)
			if c.settings != "" {
				writeTestFile(t, filepath.Join(syn, "settings.json"), c.settings)
			}
			writeTestFile(t, filepath.Join(proj, "README.md"), "x\n")
			srv := llmtest.New(t, llmtest.TextTurn("ok"))
			a, err := New(testutil.MapEnv(map[string]string{
				"HOME": home, "SYNAPSE_HOME": syn,
				"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "llmtest-key", "SYNAPSE_MODEL": "test-model",
			}))
			if err != nil {
				t.Fatal(err)
			}
			g, err := a.NewAgent(context.Background(), AgentSetup{Cwd: proj})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if _, err := g.Runner.Run(context.Background(), c.input); err != nil {
				t.Fatal(err)
			}
			req, ok := srv.LastRequest()
			if !ok {
				t.Fatal("no request reached the model")
			}
			first := req.FirstUserText()
			if !c.wrapped {
				if first != c.input {
					t.Fatalf("first user message = %q, want exactly %q", first, c.input)
				}
				return
			}
			i, j := strings.Index(first, "Skill Search Priority"), strings.Index(first, "Original user request")
			if i < 0 || j < i || !strings.HasSuffix(first, c.input) {
				t.Fatalf("first user message lacks the instruction block before the original request: %q", first)
			}
		})
	}
}
