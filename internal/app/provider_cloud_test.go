package app

import (
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestResolveCloudProvider(t *testing.T) {
	aws := map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "tok"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	bedrockAWS := cloudConfig{Region: "eu-west-1", AccessKeyID: "AKID", SecretAccessKey: "secret", SessionToken: "tok"}
	checkResolve(t, []resolveCase{
		{name: "CLAUDE_CODE_USE_BEDROCK chooses bedrock with the default model",
			env:  with(aws, "CLAUDE_CODE_USE_BEDROCK", "1", "ANTHROPIC_API_KEY", "ak"),
			want: providerChoice{Name: "bedrock", Model: "claude-sonnet-4-5", Cloud: bedrockAWS}},
		{name: "SYNAPSE_PROVIDER bedrock, a profile, the default region variable, no instance metadata",
			env: map[string]string{"SYNAPSE_PROVIDER": "bedrock", "AWS_PROFILE": "work", "AWS_DEFAULT_REGION": "us-west-2", "AWS_EC2_METADATA_DISABLED": "true",
				"AWS_BEARER_TOKEN_BEDROCK": "bk", "ANTHROPIC_BEDROCK_BASE_URL": "https://vpce.example"},
			want: providerChoice{Name: "bedrock", Model: "claude-sonnet-4-5", BaseURL: "https://vpce.example",
				Cloud: cloudConfig{Region: "us-west-2", Profile: "work", BearerToken: "bk", NoIMDS: true}}},
		{name: "settings provider vertex with its env; the settings model applies",
			settings: config.Settings{Provider: "vertex", Model: "claude-opus-4-5", Env: map[string]string{"CLOUD_ML_REGION": "global", "ANTHROPIC_VERTEX_PROJECT_ID": "proj"}},
			env:      map[string]string{"HOME": "/home/u", "GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json"},
			want: providerChoice{Name: "vertex", Model: "claude-opus-4-5",
				Cloud: cloudConfig{Region: "global", Project: "proj", CredentialsFile: "/keys/sa.json", ADCFile: "/home/u/.config/gcloud/application_default_credentials.json"}}},
		{name: "CLAUDE_CODE_USE_VERTEX with gcloud's config dir and the project of GOOGLE_CLOUD_PROJECT",
			env: map[string]string{"CLAUDE_CODE_USE_VERTEX": "true", "CLOUD_ML_REGION": "us-east5", "GOOGLE_CLOUD_PROJECT": "gp", "CLOUDSDK_CONFIG": "/cfg"},
			want: providerChoice{Name: "vertex", Model: "claude-sonnet-4-5",
				Cloud: cloudConfig{Region: "us-east5", Project: "gp", ADCFile: "/cfg/application_default_credentials.json"}}},
		{name: "a Claude model stays on the cloud the switch chose",
			env:  with(aws, "CLAUDE_CODE_USE_BEDROCK", "1", "SYNAPSE_MODEL", "claude-haiku-4-5"),
			want: providerChoice{Name: "bedrock", Model: "claude-haiku-4-5", Cloud: bedrockAWS}},
		{name: "another vendor's model is not sent to the cloud the switch chose",
			env:  map[string]string{"CLAUDE_CODE_USE_VERTEX": "1", "SYNAPSE_MODEL": "gpt-5", "OPENAI_API_KEY": "o"},
			want: providerChoice{Name: "openai", Model: "gpt-5", APIKey: "o"}},
		{name: "a Bedrock model id implies bedrock",
			env:  with(aws, "SYNAPSE_MODEL", "global.anthropic.claude-sonnet-4-5-20250929-v1:0"),
			want: providerChoice{Name: "bedrock", Model: "global.anthropic.claude-sonnet-4-5-20250929-v1:0", Cloud: bedrockAWS}},
		{name: "a Vertex model id implies vertex",
			env:  map[string]string{"SYNAPSE_MODEL": "claude-opus-4-5@20251101", "CLOUD_ML_REGION": "global"},
			want: providerChoice{Name: "vertex", Model: "claude-opus-4-5@20251101", Cloud: cloudConfig{Region: "global"}}},
		{name: "CLAUDE_CODE_USE_BEDROCK=0 is off",
			env:  map[string]string{"CLAUDE_CODE_USE_BEDROCK": "0", "ANTHROPIC_API_KEY": "ak"},
			want: providerChoice{Name: "anthropic", Model: "claude-sonnet-4-5", APIKey: "ak"}},
		{name: "bad endpoint override names the variable",
			env:     map[string]string{"SYNAPSE_PROVIDER": "vertex", "ANTHROPIC_VERTEX_BASE_URL": "aiplatform.googleapis.com"},
			wantErr: []string{"ANTHROPIC_VERTEX_BASE_URL", "from the environment", "https://us-east5-aiplatform.googleapis.com"}},
	})
}

// /model on a cloud provider: Claude models stay there (mapped to the
// platform's ids), other vendors' models go to their provider.
func TestModelProvidersOnCloud(t *testing.T) {
	m := &modelProviders{start: providerChoice{Name: "bedrock"}}
	for model, want := range map[string]string{
		"claude-opus-4-5": "bedrock", "claude-haiku-4-5-20251001": "bedrock", "us.anthropic.claude-opus-4-5-20251101-v1:0": "bedrock",
		"gpt-5": "openai", "llama3": "bedrock",
	} {
		if got := m.name(model); got != want {
			t.Errorf("on bedrock, name(%q) = %q, want %q", model, got, want)
		}
	}
	m = &modelProviders{start: providerChoice{Name: "anthropic"}}
	if got := m.name("claude-opus-4-5@20251101"); got != "vertex" {
		t.Errorf("on anthropic, a Vertex id goes to %q", got)
	}
}

// TestCloudProviderTalksToServer builds the bedrock and vertex providers
// through App.Provider, from the environment and settings.json, and streams
// one turn over each wire (a SigV4-checked Bedrock stream; a Vertex stream
// with a token from the key file's token endpoint).
func TestCloudProviderTalksToServer(t *testing.T) {
	for _, format := range []string{llmtest.FormatBedrock, llmtest.FormatVertex} {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.TextTurn("hello from "+format))
			home := t.TempDir()
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": home}
			var list []string
			settings := `{}`
			if format == llmtest.FormatBedrock {
				list = srv.BedrockEnv()
			} else {
				var err error
				if list, err = srv.VertexEnv(home); err != nil {
					t.Fatal(err)
				}
				// The switch and the region from settings.json instead of the environment.
				settings = `{"provider":"vertex","env":{"CLOUD_ML_REGION":"` + llmtest.VertexRegion + `"}}`
			}
			for _, kv := range list {
				k, v, _ := strings.Cut(kv, "=")
				if format == llmtest.FormatVertex && (k == "CLAUDE_CODE_USE_VERTEX" || k == "CLOUD_ML_REGION") {
					continue
				}
				env[k] = v
			}
			p, model, text := streamThroughApp(t, home, settings, env)
			if p.Name() != format || model != "claude-sonnet-4-5" {
				t.Errorf("provider %q model %q", p.Name(), model)
			}
			if text != "hello from "+format {
				t.Errorf("text %q", text)
			}
			r, _ := srv.LastRequest()
			if r.Format != format || !strings.Contains(r.Model, "claude-sonnet-4-5") {
				t.Errorf("format %q model %q", r.Format, r.Model)
			}
		})
	}
}

// Missing cloud settings stop the start with an error that names them.
func TestCloudProviderMissingSettings(t *testing.T) {
	home := t.TempDir()
	a, err := New(testutil.MapEnv(map[string]string{"HOME": home, "SYNAPSE_HOME": home, "CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Provider(ProviderSelection{}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_VERTEX_PROJECT_ID") {
		t.Fatalf("err = %v, want one naming ANTHROPIC_VERTEX_PROJECT_ID", err)
	}
}
