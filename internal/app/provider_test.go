package app

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// resolveCase is one resolveProvider call: its settings, environment and
// selection, and the choice it makes or the strings its error must hold.
type resolveCase struct {
	name     string
	settings config.Settings
	env      map[string]string
	sel      ProviderSelection
	want     providerChoice
	wantErr  []string
}

// settingsPath is the settings file the resolve cases name in errors.
const settingsPath = "/h/.synapse/settings.json"

func checkResolve(t *testing.T, tests []resolveCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveProvider(tc.settings, testutil.MapEnv(tc.env), settingsPath, tc.sel)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// streamThroughApp writes settings to settings.json in home, builds the App
// from env, takes the provider App.Provider chooses, and streams one "hi"
// through it to its model; it returns the provider, the model and the answer.
func streamThroughApp(t *testing.T, home, settings string, env map[string]string) (p llm.Provider, model, answer string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(testutil.MapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	p, model, err = a.Provider(ProviderSelection{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := p.Stream(context.Background(), llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, model, resp.Message.Text
}

func TestResolveProvider(t *testing.T) {
	const path = settingsPath
	checkResolve(t, []resolveCase{
		{name: "defaults to anthropic with its default model",
			env:  map[string]string{"ANTHROPIC_API_KEY": "ak"},
			want: providerChoice{Name: "anthropic", Model: "claude-sonnet-4-5", APIKey: "ak"}},
		{name: "only OpenAI configured infers openai",
			env:  map[string]string{"OPENAI_API_KEY": "ok"},
			want: providerChoice{Name: "openai", Model: "gpt-5", APIKey: "ok"}},
		{name: "settings env supplies the key and base URL",
			settings: config.Settings{Provider: "openai", Model: "qwen3:8b", Env: map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": "https://gw.example/v1"}},
			want:     providerChoice{Name: "openai", Model: "qwen3:8b", APIKey: "sk", BaseURL: "https://gw.example/v1"}},
		{name: "environment beats settings env",
			settings: config.Settings{Env: map[string]string{"ANTHROPIC_API_KEY": "settings-key", "ANTHROPIC_BASE_URL": "https://settings.example"}},
			env:      map[string]string{"ANTHROPIC_API_KEY": "env-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"},
			want:     providerChoice{Name: "anthropic", Model: "claude-sonnet-4-5", APIKey: "env-key", BaseURL: "http://127.0.0.1:9"}},
		{name: "SYNAPSE_MODEL beats settings model",
			settings: config.Settings{Model: "claude-opus-4-1"},
			env:      map[string]string{"ANTHROPIC_API_KEY": "k", "SYNAPSE_MODEL": "claude-haiku-4-5"},
			want:     providerChoice{Name: "anthropic", Model: "claude-haiku-4-5", APIKey: "k"}},
		{name: "flags beat environment and settings",
			settings: config.Settings{Provider: "anthropic", Model: "claude-opus-4-1", Env: map[string]string{"OPENAI_API_KEY": "o"}},
			env:      map[string]string{"SYNAPSE_PROVIDER": "anthropic", "SYNAPSE_MODEL": "claude-x", "ANTHROPIC_API_KEY": "a"},
			sel:      ProviderSelection{Provider: "OpenAI", Model: "gpt-4.1"},
			want:     providerChoice{Name: "openai", Model: "gpt-4.1", APIKey: "o"}},
		{name: "SYNAPSE_PROVIDER beats settings provider",
			settings: config.Settings{Provider: "anthropic", Model: "claude-opus-4-1"},
			env:      map[string]string{"SYNAPSE_PROVIDER": "openai", "OPENAI_API_KEY": "o"},
			want:     providerChoice{Name: "openai", Model: "gpt-5", APIKey: "o"}}, // the settings model belongs to anthropic
		{name: "model name picks the provider",
			env:  map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
			sel:  ProviderSelection{Model: "gpt-4o-mini"},
			want: providerChoice{Name: "openai", Model: "gpt-4o-mini", APIKey: "o"}},
		{name: "auth token counts as a key",
			env:  map[string]string{"ANTHROPIC_AUTH_TOKEN": "tok"},
			want: providerChoice{Name: "anthropic", Model: "claude-sonnet-4-5", AuthToken: "tok"}},
		{name: "loopback OpenAI-compatible server needs no key",
			env:  map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "SYNAPSE_MODEL": "llama3.2"},
			want: providerChoice{Name: "openai", Model: "llama3.2", BaseURL: "http://localhost:11434/v1"}},
		{name: "SYNAPSE_OPENAI_IMAGES turns tool images on for a compatible server",
			env:  map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "SYNAPSE_MODEL": "llava", "SYNAPSE_OPENAI_IMAGES": "on"},
			want: providerChoice{Name: "openai", Model: "llava", BaseURL: "http://localhost:11434/v1", Images: "on"}},
		{name: "SYNAPSE_OPENAI_WIRE from settings env chooses the wire",
			settings: config.Settings{Env: map[string]string{"OPENAI_API_KEY": "o", "SYNAPSE_OPENAI_WIRE": "Responses"}},
			want:     providerChoice{Name: "openai", Model: "gpt-5", APIKey: "o", Wire: "responses"}},
		{name: "SYNAPSE_OPENAI_WIRE auto is the default",
			env:  map[string]string{"OPENAI_API_KEY": "o", "SYNAPSE_OPENAI_WIRE": "auto"},
			want: providerChoice{Name: "openai", Model: "gpt-5", APIKey: "o"}},
		{name: "bad SYNAPSE_OPENAI_WIRE",
			env:     map[string]string{"OPENAI_API_KEY": "o", "SYNAPSE_OPENAI_WIRE": "completions"},
			wantErr: []string{"SYNAPSE_OPENAI_WIRE", "from the environment", `"completions"`, "use responses", "chat"}},
		{name: "bad SYNAPSE_OPENAI_IMAGES",
			env:     map[string]string{"OPENAI_API_KEY": "o", "SYNAPSE_OPENAI_IMAGES": "yes"},
			wantErr: []string{"SYNAPSE_OPENAI_IMAGES", `"yes"`, "use on"}},
		{name: "missing anthropic key names the variable and the file",
			wantErr: []string{"ANTHROPIC_API_KEY", path}},
		{name: "missing openai key on a remote URL",
			env:     map[string]string{"OPENAI_BASE_URL": "https://api.example.com/v1"},
			wantErr: []string{"OPENAI_API_KEY", path, "Ollama"}},
		{name: "unknown provider flag",
			env: map[string]string{"ANTHROPIC_API_KEY": "a"}, sel: ProviderSelection{Provider: "bard"},
			wantErr: []string{`"bard"`, "--provider", "anthropic, openai, gemini, bedrock or vertex"}},
		{name: "SYNAPSE_PROVIDER=gemini with GEMINI_API_KEY",
			env:  map[string]string{"SYNAPSE_PROVIDER": "gemini", "GEMINI_API_KEY": "g", "ANTHROPIC_API_KEY": "a"},
			want: providerChoice{Name: "gemini", Model: "gemini-2.5-pro", APIKey: "g"}},
		{name: "GOOGLE_API_KEY wins over GEMINI_API_KEY, as in Google's SDKs",
			settings: config.Settings{Provider: "gemini", Env: map[string]string{"GEMINI_API_KEY": "g"}},
			env:      map[string]string{"GOOGLE_API_KEY": "goog"},
			want:     providerChoice{Name: "gemini", Model: "gemini-2.5-pro", APIKey: "goog"}},
		{name: "only a Gemini key configured infers gemini",
			env:  map[string]string{"GEMINI_API_KEY": "g"},
			want: providerChoice{Name: "gemini", Model: "gemini-2.5-pro", APIKey: "g"}},
		{name: "a gemini model name picks gemini",
			env:  map[string]string{"ANTHROPIC_API_KEY": "a", "GOOGLE_API_KEY": "g"},
			sel:  ProviderSelection{Model: "gemini-2.5-flash"},
			want: providerChoice{Name: "gemini", Model: "gemini-2.5-flash", APIKey: "g"}},
		{name: "gemini base URL override on loopback needs no key",
			env:  map[string]string{"SYNAPSE_PROVIDER": "gemini", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:8080"},
			want: providerChoice{Name: "gemini", Model: "gemini-2.5-pro", BaseURL: "http://127.0.0.1:8080"}},
		{name: "missing gemini key names both variables",
			env:     map[string]string{"SYNAPSE_PROVIDER": "gemini"},
			wantErr: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", path}},
		{name: "unknown SYNAPSE_PROVIDER",
			env:     map[string]string{"SYNAPSE_PROVIDER": "bard"},
			wantErr: []string{"SYNAPSE_PROVIDER", "environment"}},
		{name: "bad base URL names the variable and where it came from",
			settings: config.Settings{Env: map[string]string{"ANTHROPIC_API_KEY": "a", "ANTHROPIC_BASE_URL": "api.anthropic.com"}},
			wantErr:  []string{"ANTHROPIC_BASE_URL", path, "api.anthropic.com"}},
	})
}

// TestProviderTalksToServer builds each provider through App.Provider, from
// settings.json and the environment, and streams one turn over the real wire.
func TestProviderTalksToServer(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI, llmtest.FormatResponses, llmtest.FormatGemini} {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.TextTurn("hello from "+format))
			home := t.TempDir()
			settings := `{"provider":"anthropic","env":{"ANTHROPIC_API_KEY":"from-settings"}}`
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": home, "ANTHROPIC_BASE_URL": srv.URL()}
			if format == llmtest.FormatOpenAI {
				settings = `{"provider":"openai","model":"local-model","env":{"OPENAI_BASE_URL":"http://192.0.2.1/v1"}}`
				env = map[string]string{"HOME": home, "SYNAPSE_HOME": home, "OPENAI_BASE_URL": srv.OpenAIBaseURL()}
			}
			if format == llmtest.FormatResponses {
				settings = `{"provider":"openai","env":{"SYNAPSE_OPENAI_WIRE":"responses"}}`
				env = map[string]string{"HOME": home, "SYNAPSE_HOME": home, "OPENAI_BASE_URL": srv.OpenAIBaseURL()}
			}
			if format == llmtest.FormatGemini {
				settings = `{"provider":"gemini","env":{"GEMINI_API_KEY":"from-settings"}}`
				env = map[string]string{"HOME": home, "SYNAPSE_HOME": home, "GOOGLE_GEMINI_BASE_URL": srv.URL()}
			}
			p, _, text := streamThroughApp(t, home, settings, env)
			if want := map[string]string{llmtest.FormatResponses: "openai"}[format]; p.Name() != cmp.Or(want, format) {
				t.Errorf("provider %q, want %q", p.Name(), cmp.Or(want, format))
			}
			if text != "hello from "+format {
				t.Errorf("text %q", text)
			}
			r, _ := srv.LastRequest()
			switch format {
			case llmtest.FormatAnthropic:
				if r.Header.Get("X-Api-Key") != "from-settings" || r.Model != "claude-sonnet-4-5" {
					t.Errorf("key %q model %q", r.Header.Get("X-Api-Key"), r.Model)
				}
			case llmtest.FormatOpenAI:
				if r.Header.Get("Authorization") != "" || r.Model != "local-model" {
					t.Errorf("auth %q model %q", r.Header.Get("Authorization"), r.Model)
				}
			case llmtest.FormatResponses:
				if r.Format != llmtest.FormatResponses || r.Model != "gpt-5" {
					t.Errorf("format %q model %q: want the default model on the Responses wire", r.Format, r.Model)
				}
			case llmtest.FormatGemini:
				if r.Header.Get("X-Goog-Api-Key") != "from-settings" || r.Model != "gemini-2.5-pro" {
					t.Errorf("key %q model %q", r.Header.Get("X-Goog-Api-Key"), r.Model)
				}
			}
		})
	}
}

func TestProviderReportsBrokenSettings(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "settings.json")
	if err := os.WriteFile(path, []byte(`{"provider": }`), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := New(testutil.MapEnv(map[string]string{"HOME": home, "SYNAPSE_HOME": home, "ANTHROPIC_API_KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Provider(ProviderSelection{}); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v, want one naming %s", err, path)
	}
}
