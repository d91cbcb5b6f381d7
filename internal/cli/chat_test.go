package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestNewChatFailsBeforeStarting(t *testing.T) {
	tests := []struct {
		name     string
		settings string
		env      map[string]string
		want     string
	}{
		{name: "no key", want: "ANTHROPIC_API_KEY"},
		{name: "broken settings", settings: "{", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "settings.json"},
		{name: "unknown session", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, want: "cannot resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": filepath.Join(home, ".synapse")}
			for k, v := range tt.env {
				env[k] = v
			}
			if tt.settings != "" {
				if err := os.MkdirAll(env["SYNAPSE_HOME"], 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(env["SYNAPSE_HOME"], "settings.json"), []byte(tt.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			a, err := app.New(testutil.MapEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			_, err = newChat(context.Background(), a, chatSetup{Cwd: t.TempDir(), ResumeID: "nope", In: strings.NewReader("")})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
