package skills

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestScriptDoesNotSeeAgentCredentials: without an explicit environment a
// script gets the process's minus the agent's provider credentials; with one
// (the sandbox manager's Env()) it gets exactly that.
func TestScriptDoesNotSeeAgentCredentials(t *testing.T) {
	testutil.RequireTool(t, "bash")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-agent")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-agent")
	t.Setenv("OPENAI_API_KEY", "sk-oai-agent")
	t.Setenv("SYNAPSE_SKILL_VISIBLE", "plain")
	dir := t.TempDir()
	path := filepath.Join(dir, "env.sh")
	if err := os.WriteFile(path, []byte(`echo "a=$ANTHROPIC_API_KEY t=$ANTHROPIC_AUTH_TOKEN o=$OPENAI_API_KEY v=$SYNAPSE_SKILL_VISIBLE"`+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc := Script{Name: "env", Path: path}
	tests := []struct {
		name string
		env  []string
		want string
	}{
		{"default", nil, "a= t= o= v=plain\n"},
		{"given", []string{"PATH=" + os.Getenv("PATH"), "SYNAPSE_SKILL_VISIBLE=given"}, "a= t= o= v=given\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sc.Run(context.Background(), dir, nil, dir, RunOptions{Env: tt.env})
			if r.ExitCode != 0 || r.Stdout != tt.want {
				t.Errorf("got %q (exit %d, %s), want %q", r.Stdout, r.ExitCode, r.Stderr, tt.want)
			}
		})
	}
}
