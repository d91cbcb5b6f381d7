package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestAgentOptionsFromConfig(t *testing.T) {
	home := t.TempDir()
	cases := []struct {
		name                     string
		env                      map[string]string
		parallel, turns, failure int
	}{
		{"defaults", map[string]string{}, 5, config.DefaultMaxToolIterations, 3},
		{"overrides", map[string]string{"SYNAPSE_MAX_PARALLEL_TASKS": "3", "SYNAPSE_MAX_TOOL_ITERATIONS": "7", "SYNAPSE_MAX_CONSECUTIVE_TOOL_FAILURES": "2"}, 3, 7, 2},
		{"invalid falls back", map[string]string{"SYNAPSE_MAX_PARALLEL_TASKS": "-1"}, 5, config.DefaultMaxToolIterations, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": filepath.Join(home, ".synapse")}
			for k, v := range c.env {
				env[k] = v
			}
			a, err := New(testutil.MapEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			o := a.AgentOptions(false, nil)
			if o.MaxParallelTasks != c.parallel || o.MaxTurns != c.turns || o.MaxConsecutiveFailures != c.failure || o.SessionsDir != "" {
				t.Errorf("options = %+v", o)
			}
			if p := a.AgentOptions(true, nil); p.SessionsDir != filepath.Join(home, ".synapse", "sessions") {
				t.Errorf("sessions dir = %q", p.SessionsDir)
			}
		})
	}
}

func TestBrokenPricingIsAWarning(t *testing.T) {
	home := t.TempDir()
	syn := filepath.Join(home, ".synapse")
	if err := os.MkdirAll(syn, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(syn, "pricing.json"), []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(testutil.MapEnv(map[string]string{"HOME": home, "SYNAPSE_HOME": syn}))
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	o := a.AgentOptions(true, func(err error) { warned = append(warned, err.Error()) })
	// A broken file leaves the built-in prices in force.
	if o.Pricing["claude-sonnet-4-5"].Output != 15 || len(warned) != 1 || !strings.Contains(warned[0], "pricing.json") {
		t.Errorf("pricing = %v, warnings = %v", o.Pricing, warned)
	}
	if err := os.WriteFile(filepath.Join(syn, "pricing.json"), []byte(`{"models":{"claude-sonnet-4-5":{"input":3,"output":16}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The file's entry wins; the other built-in prices stay.
	if o := a.AgentOptions(true, nil); o.Pricing["claude-sonnet-4-5"].Output != 16 || o.Pricing["gpt-4o"].Input != 2.5 {
		t.Errorf("pricing = %v", o.Pricing)
	}
}

// TestContextSettingsFromSettingsFile: settings.json "context" reaches the
// agent's context manager and compaction model, under the environment; a
// broken settings.json does not stop App.New (commands that need no
// settings still work) and is reported where an agent starts.
func TestContextSettingsFromSettingsFile(t *testing.T) {
	home := t.TempDir()
	testutil.WriteFile(t, filepath.Join(home, "settings.json"), `{"context": {"window": 100000, "offloadThreshold": 30000, "compactModel": "small"}}`)
	env := map[string]string{"HOME": home, "SYNAPSE_HOME": home, "SYNAPSE_OFFLOAD_THRESHOLD": "45000"}
	a, err := New(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	o := a.AgentOptions(false, nil)
	if o.Context.Window != 100000 || o.Context.OffloadAt != 45000 || o.Context.CompactAt != 0 || o.CompactModel != "small" {
		t.Errorf("context %+v, compact model %q", o.Context, o.CompactModel)
	}
	testutil.WriteFile(t, filepath.Join(home, "settings.json"), `{"context": {"compactThreshold": -1}}`)
	a, err = New(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("a broken settings.json stopped App.New: %v", err)
	}
	if _, err := a.Settings(); err == nil || !strings.Contains(err.Error(), `"context.compactThreshold" is -1`) || !strings.Contains(err.Error(), filepath.Join(home, "settings.json")) {
		t.Errorf("settings error: %v", err)
	}
}
