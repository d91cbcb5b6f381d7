package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// The REPL's /model switches the provider with the model when the model
// implies the other one (gpt-4o under an Anthropic start, and back), refuses
// with what to configure when that provider is not set up, and sub-agents
// started without --model follow the switched model and provider.
func TestAgentSwitchModelFollowsProvider(t *testing.T) {
	home, proj, syn := unsandboxedHome(t)
	writeTestFile(t, filepath.Join(proj, "README.md"), "x\n")

	srv := llmtest.New(t)
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case strings.Contains(req.LastUserText(), "delegate") && len(req.LastToolResults()) == 0:
			return llmtest.ToolTurn(llmtest.BashCall("t1", `task:general -d "sub" -p "sub work"`))
		case strings.Contains(req.FirstUserText(), "sub work"):
			return llmtest.TextTurn("sub " + req.Format + " " + req.Model)
		}
		return llmtest.TextTurn("answer " + req.Format + " " + req.Model)
	})
	newAgent := func(t *testing.T, openai bool) *Agent {
		env := map[string]string{"HOME": home, "SYNAPSE_HOME": syn, "SYNAPSE_MODEL": "claude-test",
			"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "llmtest-key"}
		if openai {
			env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.OpenAIBaseURL(), "llmtest-key"
		}
		a, err := New(testutil.MapEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		g, err := a.NewAgent(context.Background(), AgentSetup{Cwd: proj, DisableSkillSearchInstruction: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		return g
	}
	ask := func(t *testing.T, g *Agent, input, want string) {
		t.Helper()
		res, err := g.Runner.Run(context.Background(), input)
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != want {
			t.Errorf("answer = %q, want %q", res.Text, want)
		}
	}

	t.Run("switch to the other provider and back", func(t *testing.T) {
		g := newAgent(t, true)
		if err := g.SwitchModel("gpt-4o"); err != nil {
			t.Fatal(err)
		}
		if m := g.Runner.Model(); m != "gpt-4o" {
			t.Errorf("model = %q", m)
		}
		ask(t, g, "hi", "answer openai gpt-4o")
		ask(t, g, "delegate", "answer openai gpt-4o")
		last, _ := srv.LastRequest()
		if res, ok := last.ToolResult("t1"); !ok || res.Content != "sub openai gpt-4o" {
			t.Errorf("sub-agent result = %q, want it run on openai with gpt-4o", res.Content)
		}
		if err := g.SwitchModel("claude-other"); err != nil {
			t.Fatal(err)
		}
		ask(t, g, "again", "answer anthropic claude-other")
		if err := g.SwitchModel("local-model"); err != nil {
			t.Fatal(err)
		}
		ask(t, g, "local", "answer anthropic local-model")
	})
	t.Run("other provider not configured", func(t *testing.T) {
		g := newAgent(t, false)
		err := g.SwitchModel("gpt-4o")
		if err == nil {
			t.Fatal("switching to gpt-4o without the openai provider succeeded")
		}
		for _, w := range []string{"gpt-4o", "OPENAI_API_KEY", "OPENAI_BASE_URL"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error lacks %q: %v", w, err)
			}
		}
		if m := g.Runner.Model(); m != "claude-test" {
			t.Errorf("model after a refused switch = %q, want claude-test", m)
		}
		ask(t, g, "hi", "answer anthropic claude-test")
	})
}
