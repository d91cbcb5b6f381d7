package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// synapse doctor names the provider, why, the model with its price, and
// where each credential was found, over combinations of environment and
// settings; it never prints a secret, not even a piece of one.
func TestDoctor(t *testing.T) {
	const (
		anthropicKey = "sk-ant-api03-SECRETanthropicKEYvalue1234"
		openaiKey    = "sk-proj-SECRETopenaiKEYvalue5678"
		geminiKey    = "AIzaSySECRETgeminiKEYvalue9012"
		googleKey    = "AIzaSySECRETgoogleKEYvalue3456"
		awsKeyID     = "AKIASECRETAWSKEYID7890"
		awsSecret    = "wJalrSECRETawsSECRETaccessKEY6543"
		awsSession   = "FwoGZXIvSECRETsessionTOKEN4321"
	)
	secrets := []string{anthropicKey, openaiKey, geminiKey, googleKey, awsKeyID, awsSecret, awsSession, "user:pass"}
	tests := []struct {
		name     string
		env      map[string]string
		settings string
		files    []string // under HOME
		args     []string
		wantCode int
		want     []string
		wantErr  string
	}{
		{name: "nothing configured: not ready, with the fix",
			wantCode: 1, want: []string{"Provider: anthropic, chosen by default", "Anthropic: none; set ANTHROPIC_API_KEY", "Gemini: none", "Not ready"},
			wantErr: "set ANTHROPIC_API_KEY"},
		{name: "anthropic key in the environment",
			env:  map[string]string{"ANTHROPIC_API_KEY": anthropicKey},
			want: []string{"Provider: anthropic, chosen by default", "Model: claude-sonnet-4-5, the provider's default; $3 input, $15 output, $0.3 cache read, $3.75 cache write per million tokens", "Anthropic: ANTHROPIC_API_KEY (environment) — used", "Ready: anthropic with claude-sonnet-4-5"}},
		{name: "gemini chosen by SYNAPSE_PROVIDER, key from settings",
			env:      map[string]string{"SYNAPSE_PROVIDER": "gemini", "ANTHROPIC_API_KEY": anthropicKey},
			settings: `{"env":{"GEMINI_API_KEY":"` + geminiKey + `"}}`,
			want: []string{"Provider: gemini, chosen by SYNAPSE_PROVIDER (environment)", "Model: gemini-2.5-pro, the provider's default; $1.25 input, $10 output, $0.125 cache read per million tokens",
				`Gemini: GEMINI_API_KEY ("env" in`, "— used", "Anthropic: ANTHROPIC_API_KEY (environment)\n", "Ready: gemini"}},
		{name: "GOOGLE_API_KEY is the one used when both are set",
			env:  map[string]string{"GEMINI_API_KEY": geminiKey, "GOOGLE_API_KEY": googleKey, "SYNAPSE_MODEL": "gemini-2.5-flash"},
			want: []string{"Provider: gemini, chosen by the model name gemini-2.5-flash, from SYNAPSE_MODEL (environment)", "GEMINI_API_KEY (environment); GOOGLE_API_KEY (environment) — used", "$0.3 input"}},
		{name: "only an OpenAI key: inferred",
			env:  map[string]string{"OPENAI_API_KEY": openaiKey},
			want: []string{"Provider: openai, chosen by its credentials being the only ones configured", "Model: gpt-5", "OpenAI: OPENAI_API_KEY (environment) — used"}},
		{name: "settings provider, a base URL with user info, an unpriced model",
			settings: `{"provider":"openai","model":"qwen3:8b","env":{"OPENAI_BASE_URL":"http://user:pass@127.0.0.1:11434/v1?key=` + openaiKey + `"}}`,
			want:     []string{`Provider: openai, chosen by "provider" in`, "Model: qwen3:8b, from \"model\" in", "no known price", "Endpoint: http://127.0.0.1:11434/v1\n", "Ready: openai"}},
		{name: "unknown provider: not ready",
			env: map[string]string{"SYNAPSE_PROVIDER": "bard"}, wantCode: 1, want: []string{"Provider: bard"}, wantErr: "use anthropic, openai, gemini, bedrock or vertex"},
		{name: "AWS and Google cloud credentials are found, secrets not shown",
			env: map[string]string{"ANTHROPIC_API_KEY": anthropicKey, "AWS_ACCESS_KEY_ID": awsKeyID, "AWS_SECRET_ACCESS_KEY": awsSecret, "AWS_SESSION_TOKEN": awsSession,
				"AWS_REGION": "eu-west-1", "GOOGLE_CLOUD_PROJECT": "my-project", "CLOUD_ML_REGION": "us-east5", "GOOGLE_APPLICATION_CREDENTIALS": "~/sa.json"},
			files: []string{".aws/config", ".config/gcloud/application_default_credentials.json", "sa.json"},
			want: []string{"Amazon Bedrock (AWS): AWS_ACCESS_KEY_ID (environment); AWS_SECRET_ACCESS_KEY (environment); AWS_SESSION_TOKEN (environment); config ~/.aws/config (file); region eu-west-1, AWS_REGION (environment)",
				"Google Vertex AI (Google ADC): service account or ADC ~/sa.json (file); gcloud application default credentials ~/.config/gcloud/application_default_credentials.json (file); project my-project, GOOGLE_CLOUD_PROJECT (environment); region us-east5, CLOUD_ML_REGION (environment)"}},
		{name: "Claude Code's Bedrock switch chooses bedrock",
			env:  map[string]string{"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": awsKeyID, "AWS_SECRET_ACCESS_KEY": awsSecret},
			want: []string{"Provider: bedrock, chosen by CLAUDE_CODE_USE_BEDROCK (environment)", "Ready: bedrock with claude-sonnet-4-5"}},
		{name: "vertex without a region: not ready, says what to set",
			env: map[string]string{"CLAUDE_CODE_USE_VERTEX": "1"}, wantCode: 1,
			want: []string{"Provider: vertex, chosen by CLAUDE_CODE_USE_VERTEX (environment)", "Not ready"}, wantErr: "CLOUD_ML_REGION"},
		{name: "a credentials file named but missing",
			env:  map[string]string{"ANTHROPIC_API_KEY": anthropicKey, "AWS_PROFILE": "work", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/creds"},
			want: []string{"profile work, AWS_PROFILE (environment); shared credentials /nonexistent/creds (named by AWS_SHARED_CREDENTIALS_FILE, but missing)"}},
		{name: "--provider and --model flags",
			env: map[string]string{"GOOGLE_API_KEY": googleKey, "ANTHROPIC_API_KEY": anthropicKey}, args: []string{"--provider", "gemini", "--model", "gemini-2.5-flash-lite"},
			want: []string{"Provider: gemini, chosen by --provider", "Model: gemini-2.5-flash-lite, from --model; $0.1 input", "GOOGLE_API_KEY (environment) — used"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": filepath.Join(home, ".synapse"), "PATH": os.Getenv("PATH")}
			for k, v := range tc.env {
				env[k] = v
			}
			if tc.settings != "" {
				if err := os.MkdirAll(env["SYNAPSE_HOME"], 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(env["SYNAPSE_HOME"], "settings.json"), []byte(tc.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tc.files {
				p := filepath.Join(home, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var out, errb bytes.Buffer
			code := Run(context.Background(), append([]string{"doctor"}, tc.args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: testutil.MapEnv(env)})
			t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q", w)
				}
			}
			if tc.wantErr != "" && (!strings.Contains(errb.String(), tc.wantErr) || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0) {
				t.Errorf("stderr %q: want one line containing %q", errb.String(), tc.wantErr)
			}
			if !strings.Contains(out.String(), "Sandbox: ") {
				t.Error("no sandbox line")
			}
			// The temporary home's random digits could match a secret's end.
			all := strings.ReplaceAll(out.String()+errb.String(), home, "$HOME")
			for _, s := range secrets {
				for _, piece := range []string{s, s[:8], s[len(s)-4:]} {
					if strings.Contains(all, piece) {
						t.Errorf("output shows (part of) a secret: %q", piece)
					}
				}
			}
		})
	}
}
