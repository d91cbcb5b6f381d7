package mcp

import (
	"testing"
)

// TestStdioServerDoesNotSeeAgentCredentials: a stdio server's environment
// lacks the agent's provider credentials (the default base environment is
// scrubbed, as the sandbox manager's Env() is), while the entries of its own
// "env" arrive whatever their names.
func TestStdioServerDoesNotSeeAgentCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-agent")
	t.Setenv("OPENAI_API_KEY", "sk-oai-agent")
	t.Setenv("SYNAPSE_MCPTEST_VISIBLE", "plain")
	tests := []struct {
		name string
		opts Options
		own  map[string]string // the server entry's "env"
		ask  string
		want string
	}{
		{"default env hides the anthropic key", Options{}, nil, "ANTHROPIC_API_KEY", ""},
		{"default env hides the openai key", Options{}, nil, "OPENAI_API_KEY", ""},
		{"default env keeps the rest", Options{}, nil, "SYNAPSE_MCPTEST_VISIBLE", "plain"},
		{"given env is used as is", Options{Env: []string{"SYNAPSE_MCPTEST_VISIBLE=given"}}, nil, "SYNAPSE_MCPTEST_VISIBLE", "given"},
		{"the server's own entry is passed", Options{}, map[string]string{"ANTHROPIC_API_KEY": "server-own"}, "ANTHROPIC_API_KEY", "server-own"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := stdioServer(t, "test")
			for k, v := range tt.own {
				c.Env[k] = v
			}
			tt.opts.Cwd = t.TempDir()
			_, h := newManager(t, tt.opts, c)
			if got, want := runOK(t, h, "mcp:test:env "+tt.ask), tt.want+"|"+tt.opts.Cwd+"\n"; got != want {
				t.Errorf("%s = %q, want %q", tt.ask, got, want)
			}
		})
	}
}
