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

// newSettingsAgent builds an agent whose settings.json holds settings.
func newSettingsAgent(t *testing.T, syn, settings string, extra map[string]string) *Agent {
	t.Helper()
	if err := os.MkdirAll(syn, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(syn, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t)
	env := map[string]string{"HOME": filepath.Dir(syn), "SYNAPSE_HOME": syn, "SYNAPSE_MODEL": "claude-test",
		"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "llmtest-key"}
	for k, v := range extra {
		env[k] = v
	}
	a, err := New(testutil.MapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	g, err := a.NewAgent(context.Background(), AgentSetup{Cwd: t.TempDir(), DisableSkillSearchInstruction: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

func TestAutoEnhanceSettingAndSwitch(t *testing.T) {
	syn := filepath.Join(t.TempDir(), ".synapse")
	g := newSettingsAgent(t, syn, `{"skillEnhance": {"autoEnhance": "yes"}, "hooks": {"PreToolUse": "rm"}}`, nil)
	notices := strings.Join(g.Notices(), "\n")
	if g.AutoEnhance() || !strings.Contains(notices, `"skillEnhance.autoEnhance" must be true or false`) || !strings.Contains(notices, `"hooks" is not valid`) {
		t.Fatalf("auto-enhance %v, notices:\n%s", g.AutoEnhance(), notices)
	}
	if err := g.SetAutoEnhance(true); err != nil || !g.AutoEnhance() {
		t.Fatalf("switch on: %v", err)
	}
	// A new agent reads the saved state.
	g2 := newSettingsAgentKeep(t, syn)
	if !g2.AutoEnhance() || len(g2.SettingsNotices()) != 1 {
		t.Errorf("saved state: %v, notices %q", g2.AutoEnhance(), g2.SettingsNotices())
	}
}

// newSettingsAgentKeep builds another agent over the same SYNAPSE_HOME.
func newSettingsAgentKeep(t *testing.T, syn string) *Agent {
	data, err := os.ReadFile(filepath.Join(syn, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	return newSettingsAgent(t, syn, string(data), nil)
}

func TestSkillMaxVersionsFromTheEnvironment(t *testing.T) {
	syn := filepath.Join(t.TempDir(), ".synapse")
	g := newSettingsAgent(t, syn, `{}`, map[string]string{"SYNAPSE_SKILL_MAX_VERSIONS": "4"})
	if n := g.Extensions.Skills.Store.MaxVersions; n != 4 {
		t.Errorf("store keeps %d versions, want 4", n)
	}
}
