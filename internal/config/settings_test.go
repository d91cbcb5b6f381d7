package config

import (
	"encoding/json"
	"github.com/synapse-agent/synapse/internal/testutil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLoadSettings(t *testing.T) {
	f := false
	tests := []struct {
		name    string
		content *string // nil: no file
		want    Settings
		wantErr []string // substrings of the error
	}{
		{name: "missing file is defaults", content: nil, want: Settings{}},
		{name: "empty file is defaults", content: ptr("  \n"), want: Settings{}},
		{name: "full", content: ptr(`{"provider":"OpenAI","model":"gpt-4o","env":{"OPENAI_API_KEY":"sk-1"},"enableSkillSearchInstruction":false,"maxTokens":4096,"thinkingBudget":1024}`),
			want: Settings{Provider: "openai", Model: "gpt-4o", Env: map[string]string{"OPENAI_API_KEY": "sk-1"}, EnableSkillSearchInstruction: &f, MaxTokens: 4096, ThinkingBudget: 1024}},
		{name: "unknown keys kept", content: ptr(`{"model":"m","theme":"dark","statusLine":{"a":[1,2]}}`),
			want: Settings{Model: "m", Extra: map[string]json.RawMessage{"theme": json.RawMessage(`"dark"`), "statusLine": json.RawMessage(`{"a":[1,2]}`)}}},
		{name: "syntax error names file, line and column", content: ptr("{\n  \"model\": \"m\",\n  \"env\": {,}\n}"),
			wantErr: []string{"settings.json", "line 3, column 11", "invalid JSON"}},
		{name: "truncated", content: ptr(`{"model":`), wantErr: []string{"settings.json", "invalid JSON", "unexpected end"}},
		{name: "wrong type", content: ptr(`{"env":{"OPENAI_API_KEY":123}}`), wantErr: []string{"settings.json", "line 1", "must be a string", "number"}},
		{name: "bool as string", content: ptr(`{"enableSkillSearchInstruction":"yes"}`), wantErr: []string{"enableSkillSearchInstruction", "true or false"}},
		{name: "not an object", content: ptr(`[1]`), wantErr: []string{"settings.json"}},
		{name: "null", content: ptr(`null`), wantErr: []string{"settings.json", "JSON object"}},
		{name: "unknown provider", content: ptr(`{"provider":"bard"}`), wantErr: []string{"settings.json", `"bard"`, `"anthropic", "openai", "gemini", "bedrock" or "vertex"`}},
		{name: "negative maxTokens", content: ptr(`{"maxTokens":-1}`), wantErr: []string{"maxTokens"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "settings.json")
			if tc.content != nil {
				if err := os.WriteFile(path, []byte(*tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := LoadSettings(path)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want an error, got %+v", got)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if !strings.Contains(err.Error(), path) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestSkillSearchInstructionDefault(t *testing.T) {
	on, off := true, false
	for _, tc := range []struct {
		v    *bool
		want bool
	}{{nil, true}, {&on, true}, {&off, false}} {
		if got := (Settings{EnableSkillSearchInstruction: tc.v}).SkillSearchInstruction(); got != tc.want {
			t.Errorf("%v: got %v", tc.v, got)
		}
	}
}

func TestSaveSettingsKeepsUnknownKeysAndRoundTrips(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home")
	path := filepath.Join(dir, "settings.json")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	orig := `{"model":"old","theme":"dark","permissions":{"allow":["ls"]},"maxTokens":100,"shareEnv":["GITHUB_TOKEN"],"consoleEnv":{"codex-tui":["OPENAI_API_KEY"]}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Model = "claude-sonnet-4-5"
	s.Provider = ProviderAnthropic
	s.MaxTokens = 0 // removed
	s.Env = map[string]string{"ANTHROPIC_API_KEY": "k"}
	if err := SaveSettings(path, s); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatalf("saved file is not JSON: %v\n%s", err, data)
	}
	want := map[string]any{
		"model": "claude-sonnet-4-5", "provider": "anthropic", "theme": "dark",
		"permissions": map[string]any{"allow": []any{"ls"}},
		"env":         map[string]any{"ANTHROPIC_API_KEY": "k"},
		"shareEnv":    []any{"GITHUB_TOKEN"},
		"consoleEnv":  map[string]any{"codex-tui": []any{"OPENAI_API_KEY"}},
	}
	if !reflect.DeepEqual(raw, want) {
		t.Errorf("saved %v, want %v", raw, want)
	}
	again, err := LoadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Model != s.Model || again.Env["ANTHROPIC_API_KEY"] != "k" || string(again.Extra["theme"]) != `"dark"` {
		t.Errorf("round trip %+v", again)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: the file may hold keys and must be private", fi.Mode())
	}
}

func TestSaveSettingsCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "settings.json")
	if err := SaveSettings(path, Settings{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if s, err := LoadSettings(path); err != nil || s.Model != "m" {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestSettingsLookup(t *testing.T) {
	s := Settings{Env: map[string]string{"A": "from-settings", "B": "settings-b"}}
	env := testutil.MapEnv(map[string]string{"A": "from-env", "C": "  "})
	tests := []struct{ name, want, from string }{
		{"A", "from-env", "environment"},
		{"B", "settings-b", "settings"},
		{"C", "", ""}, // blank counts as unset
		{"D", "", ""},
	}
	for _, tc := range tests {
		v, from := s.Lookup(env, tc.name)
		if v != tc.want || from != tc.from {
			t.Errorf("%s: got %q from %q, want %q from %q", tc.name, v, from, tc.want, tc.from)
		}
	}
}

func TestSkillEnhanceSettings(t *testing.T) {
	tests := []struct {
		json    string
		on      bool
		profile string
		warn    string
	}{
		{`{}`, false, ProfileConservative, ""},
		{`{"skillEnhance": {"autoEnhance": true}}`, true, ProfileConservative, ""},
		{`{"skillEnhance": {"autoEnhance": "yes"}}`, false, ProfileConservative, `must be true or false, not "yes"`},
		{`{"skillEnhance": {"autoEnhance": 1, "triggerProfile": "aggressive"}}`, false, ProfileAggressive, "must be true or false"},
		{`{"skillEnhance": {"triggerProfile": "wild"}}`, false, ProfileConservative, `use "conservative", "neutral" or "aggressive"`},
		{`{"skillEnhance": true}`, false, ProfileConservative, "must be an object"},
	}
	for _, tt := range tests {
		s, err := ParseSettings("settings.json", []byte(tt.json))
		if err != nil {
			t.Fatalf("%s: %v", tt.json, err)
		}
		cfg, warns := s.SkillEnhanceConfig()
		if cfg.AutoEnhance != tt.on || cfg.TriggerProfile != tt.profile {
			t.Errorf("%s: %+v", tt.json, cfg)
		}
		if got := strings.Join(warns, "\n"); (tt.warn == "") != (got == "") || !strings.Contains(got, tt.warn) {
			t.Errorf("%s: warnings %q, want %q", tt.json, got, tt.warn)
		}
	}
}

func TestSetAutoEnhanceKeepsEverythingElse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	orig := `{"model": "m1", "custom": [1, 2], "hooks": {"Stop": []}, "skillEnhance": {"autoEnhance": "bad", "triggerProfile": "neutral"}}`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SetAutoEnhance(path, true); err != nil {
		t.Fatal(err)
	}
	s, err := LoadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, warns := s.SkillEnhanceConfig()
	if !cfg.AutoEnhance || cfg.TriggerProfile != ProfileNeutral || len(warns) != 0 || s.Model != "m1" || strings.Join(strings.Fields(string(s.Extra["custom"])), "") != "[1,2]" || !strings.Contains(string(s.Hooks), "Stop") {
		t.Errorf("after --on: %+v %v %+v", cfg, warns, s)
	}
	if err := SetAutoEnhance(path, false); err != nil {
		t.Fatal(err)
	}
	s, _ = LoadSettings(path)
	if cfg, _ := s.SkillEnhanceConfig(); cfg.AutoEnhance {
		t.Error("--off did not persist")
	}
}

// TestContextSettings: settings.json "context" sets the context window,
// the thresholds and the summary model; each SYNAPSE_* variable of the same
// meaning beats its key; a bad value is an error naming the key and file.
func TestContextSettings(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		want    [4]any // window, offload, compact, compactModel
		wantErr []string
	}{
		{name: "no context key", file: `{"model":"m"}`, want: [4]any{0, 0, 0, ""}},
		{name: "settings alone", file: `{"context":{"window":100000,"offloadThreshold":50000,"compactThreshold":70000,"compactModel":" claude-haiku-4-5 "}}`,
			want: [4]any{100000, 50000, 70000, "claude-haiku-4-5"}},
		{name: "environment beats settings", file: `{"context":{"window":100000,"offloadThreshold":50000,"compactThreshold":70000,"compactModel":"small"}}`,
			env:  map[string]string{"SYNAPSE_MAX_CONTEXT_WINDOW": "64000", "SYNAPSE_COMPACT_THRESHOLD": "40000", "SYNAPSE_COMPACT_MODEL": "other"},
			want: [4]any{64000, 50000, 40000, "other"}},
		{name: "an invalid variable still beats settings, with its warning", file: `{"context":{"offloadThreshold":50000}}`,
			env: map[string]string{"SYNAPSE_OFFLOAD_THRESHOLD": "lots"}, want: [4]any{0, 0, 0, ""}},
		{name: "some keys", file: `{"context":{"compactThreshold":90000}}`, want: [4]any{0, 0, 90000, ""}},
		{name: "zero", file: `{"context":{"offloadThreshold":0}}`, wantErr: []string{`"context.offloadThreshold" is 0`, "positive whole number of tokens"}},
		{name: "negative", file: `{"context":{"window":-5}}`, wantErr: []string{`"context.window" is -5`}},
		{name: "fraction", file: `{"context":{"compactThreshold":1.5}}`, wantErr: []string{`"context.compactThreshold"`, "whole number"}},
		{name: "string", file: "{\n  \"context\": {\"window\": \"200k\"}\n}", wantErr: []string{`"context.window"`, "line 2", "whole number", "string"}},
		{name: "unknown key", file: `{"context":{"offload":5000}}`, wantErr: []string{`"context.offload" is not a context setting`, "offloadThreshold"}},
		{name: "empty model", file: `{"context":{"compactModel":"  "}}`, wantErr: []string{`"context.compactModel" is empty`}},
		{name: "not an object", file: `{"context":5}`, wantErr: []string{`"context"`, "an object"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": home}
			for k, v := range tc.env {
				env[k] = v
			}
			cfg, err := Load(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg.SettingsPath(), []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := LoadSettings(cfg.SettingsPath())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("want an error, got %+v", s.Context)
				}
				for _, w := range append(tc.wantErr, cfg.SettingsPath()) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg.ApplySettings(s)
			if got := [4]any{cfg.ContextWindow, cfg.OffloadThreshold, cfg.CompactThreshold, cfg.CompactModel}; got != tc.want {
				t.Errorf("window, offload, compact, model = %v, want %v", got, tc.want)
			}
			if _, bad := tc.env["SYNAPSE_OFFLOAD_THRESHOLD"]; bad && !strings.Contains(strings.Join(cfg.Warnings, "\n"), "SYNAPSE_OFFLOAD_THRESHOLD") {
				t.Errorf("no warning for the invalid variable: %v", cfg.Warnings)
			}
		})
	}
}

func TestScratchPaths(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"XDG_CACHE_HOME": "/home/u/.cache", "EMPTY": ""}[k]
		return v, ok
	}
	s, err := ParseSettings("settings.json", []byte(`{"permissions": {"scratch": ["~/.cache/foo", "$XDG_CACHE_HOME/bar/", "${UNSET}/x", "rel/dir", "/", "/srv/scratch/../scratch2", "$EMPTY/y"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	paths, warns := s.ScratchPaths("/home/u", lookup)
	if want := []string{"/home/u/.cache/foo", "/home/u/.cache/bar", "/srv/scratch2"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("paths = %q, want %q", paths, want)
	}
	if len(warns) != 4 {
		t.Fatalf("warnings = %q, want one each for ${UNSET}, rel/dir, / and $EMPTY", warns)
	}
	for i, want := range []string{"${UNSET}/x", "rel/dir", `"/"`, "$EMPTY/y"} {
		if !strings.Contains(warns[i], want) || !strings.Contains(warns[i], "permissions.scratch") {
			t.Errorf("warning %d = %q, want it to name %s", i, warns[i], want)
		}
	}
	if _, warns := (Settings{Permissions: []byte(`["~/x"]`)}).ScratchPaths("/home/u", lookup); len(warns) != 1 {
		t.Errorf("a list instead of an object: warnings %q", warns)
	}
	if paths, warns := (Settings{}).ScratchPaths("/home/u", lookup); paths != nil || warns != nil {
		t.Errorf("no key: %q %q", paths, warns)
	}
}

// A first run writes the defaults once, where the user can see and change
// them: a file that loads cleanly, holds no key, and is never overwritten.
func TestWriteDefaultSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "settings.json")
	did, err := WriteDefaultSettings(path)
	if err != nil || !did {
		t.Fatalf("first write: %v %v", did, err)
	}
	s, err := LoadSettings(path)
	if err != nil {
		t.Fatalf("the defaults do not load: %v", err)
	}
	if !s.SkillSearchInstruction() || len(s.Env) != 0 || s.Provider != "" || s.Model != "" || len(s.Extra) != 0 {
		t.Errorf("defaults = %+v", s)
	}
	if se, warns := s.SkillEnhanceConfig(); se.AutoEnhance || len(warns) != 0 {
		t.Errorf("skillEnhance = %+v %v", se, warns)
	}
	if paths, warns := s.ScratchPaths("/h", func(string) (string, bool) { return "", false }); len(paths) != 0 || len(warns) != 0 {
		t.Errorf("scratch = %v %v", paths, warns)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(strings.ToLower(string(data)), "key") {
		t.Errorf("the defaults mention a key:\n%s", data)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: %v %v", fi.Mode(), err)
	}
	if err := os.WriteFile(path, []byte(`{"model": "mine"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if did, err := WriteDefaultSettings(path); did || err != nil {
		t.Errorf("second write: %v %v", did, err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"model": "mine"}` {
		t.Errorf("the user's file was replaced: %s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}
