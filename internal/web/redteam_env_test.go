package web

import (
	"fmt"
	"strings"
	"testing"
)

// TestRedTeamEngineEnv: an engine runs its own model, which runs commands;
// whatever the engine's environment holds, those commands can read. The
// server's environment holds Synapse's provider keys and other secrets: an
// engine gets only what its CLI needs (its vendor's variables, PATH,
// locale), never Synapse's keys unless the user maps one to it.
func TestRedTeamEngineEnv(t *testing.T) {
	secrets := []string{
		"ANTHROPIC_API_KEY=sk-ant-synapse",
		"ANTHROPIC_AUTH_TOKEN=synapse-token",
		"OPENAI_API_KEY=sk-synapse",
		"AWS_SECRET_ACCESS_KEY=aws-secret",
		"GITHUB_TOKEN=ghp-secret",
		"GEMINI_API_KEY=gemini-own",
		"GEMINI_CLI_HINT=gemini-cli-own",
		"CODEX_HOME_HINT=codex-own",
		"IFLOW_API_KEY=iflow-own",
		"LC_ALL=C.UTF-8",
	}
	type want struct{ name, line string }
	tests := []struct {
		name   string
		engine string
		mapped map[string][]string
		wants  []want
	}{
		{"codex", "codex-tui", nil, []want{
			{"ANTHROPIC_API_KEY", "ENV ANTHROPIC_API_KEY unset"},
			{"ANTHROPIC_AUTH_TOKEN", "ENV ANTHROPIC_AUTH_TOKEN unset"},
			{"OPENAI_API_KEY", "ENV OPENAI_API_KEY unset"},
			{"AWS_SECRET_ACCESS_KEY", "ENV AWS_SECRET_ACCESS_KEY unset"},
			{"GITHUB_TOKEN", "ENV GITHUB_TOKEN unset"},
			{"GEMINI_API_KEY", "ENV GEMINI_API_KEY unset"},
			{"CODEX_HOME_HINT", "ENV CODEX_HOME_HINT=codex-own"},
			{"LC_ALL", "ENV LC_ALL=C.UTF-8"},
			{"LANG", "ENV LANG=C.UTF-8"},
		}},
		// GEMINI_API_KEY is Synapse's own Gemini key too: like
		// OPENAI_API_KEY for codex, the gemini engine gets it only mapped.
		{"gemini", "gemini-tui", nil, []want{
			{"GEMINI_API_KEY", "ENV GEMINI_API_KEY unset"},
			{"GEMINI_CLI_HINT", "ENV GEMINI_CLI_HINT=gemini-cli-own"},
			{"ANTHROPIC_API_KEY", "ENV ANTHROPIC_API_KEY unset"},
			{"IFLOW_API_KEY", "ENV IFLOW_API_KEY unset"},
		}},
		{"gemini with GEMINI_API_KEY mapped by the user", "gemini-tui", map[string][]string{"gemini-tui": {"GEMINI_API_KEY"}}, []want{
			{"GEMINI_API_KEY", "ENV GEMINI_API_KEY=gemini-own"},
			{"OPENAI_API_KEY", "ENV OPENAI_API_KEY unset"},
		}},
		{"iflow", "iflow-tui", nil, []want{
			{"IFLOW_API_KEY", "ENV IFLOW_API_KEY=iflow-own"},
			{"OPENAI_API_KEY", "ENV OPENAI_API_KEY unset"},
		}},
		{"codex with OPENAI_API_KEY mapped by the user", "codex-tui", map[string][]string{"codex-tui": {"OPENAI_API_KEY"}}, []want{
			{"OPENAI_API_KEY", "ENV OPENAI_API_KEY=sk-synapse"},
			{"ANTHROPIC_API_KEY", "ENV ANTHROPIC_API_KEY unset"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, func(o *Options) {
				o.Env = append(o.Env, secrets...)
				o.EngineEnv = tt.mapped
			})
			st := e.start(tt.engine)
			c := e.dial(st.ID)
			c.waitOutput("CHILDREN-STARTED")
			for i, w := range tt.wants {
				c.typeLine("env " + w.name)
				// Lines are answered in order: once the marker's answer is
				// there, so is the whole answer before it.
				marker := fmt.Sprintf("END_%d", i)
				c.typeLine("env " + marker)
				c.waitOutput("ENV " + marker + " unset")
				if !strings.Contains(c.out.String(), w.line+"\r\n") {
					t.Errorf("%s: want %q; output:\n%q", tt.engine, w.line, c.out.String())
				}
			}
			e.stop(st.ID)
		})
	}
}
