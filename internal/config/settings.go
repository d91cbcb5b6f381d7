package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// Provider names accepted in settings.json, SYNAPSE_PROVIDER and --provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// Settings is $SYNAPSE_HOME/settings.json. Every field is optional; a missing
// file is all defaults. Keys this version does not know are kept in Extra and
// written back by SaveSettings.
type Settings struct {
	// Provider is "anthropic" or "openai"; empty means inferred.
	Provider string `json:"provider,omitempty"`
	// Model is the default model; empty means the provider's default.
	Model string `json:"model,omitempty"`
	// Env holds variables such as ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
	// OPENAI_API_KEY, OPENAI_BASE_URL, SYNAPSE_MODEL. The process environment
	// beats them.
	Env map[string]string `json:"env,omitempty"`
	// EnableSkillSearchInstruction wraps the first user message of a run with
	// the skill-search instruction; nil means the default, true.
	EnableSkillSearchInstruction *bool `json:"enableSkillSearchInstruction,omitempty"`
	// MaxTokens caps one model reply; 0 means the model's default.
	MaxTokens int `json:"maxTokens,omitempty"`
	// ThinkingBudget > 0 enables extended thinking (Anthropic) with that budget.
	ThinkingBudget int `json:"thinkingBudget,omitempty"`

	// Extra holds the keys this version does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// knownKeys are the JSON keys of Settings' fields.
var knownKeys = []string{"provider", "model", "env", "enableSkillSearchInstruction", "maxTokens", "thinkingBudget"}

// SkillSearchInstruction reports whether the skill-search instruction is on (default true).
func (s Settings) SkillSearchInstruction() bool {
	return s.EnableSkillSearchInstruction == nil || *s.EnableSkillSearchInstruction
}

// Lookup returns the value of an environment-style variable: the process
// environment first, then the settings' "env". from says where it came from
// ("environment" or "settings"), or "" when unset.
func (s Settings) Lookup(getenv Getenv, name string) (value, from string) {
	if getenv != nil {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, "environment"
		}
	}
	if v := strings.TrimSpace(s.Env[name]); v != "" {
		return v, "settings"
	}
	return "", ""
}

// LoadSettings reads path. A missing (or empty) file gives zero Settings and no
// error; a malformed one gives an error naming the file, the place and the problem.
func LoadSettings(path string) (Settings, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Settings{}, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return ParseSettings(path, data)
}

// ParseSettings decodes settings.json content; path is only used in errors.
func ParseSettings(path string, data []byte) (Settings, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Settings{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Settings{}, settingsError(path, data, err)
	}
	if raw == nil {
		return Settings{}, fmt.Errorf("%s: the file must hold a JSON object ({…}), not null; fix it or delete it", path)
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return Settings{}, settingsError(path, data, err)
	}
	for k, v := range raw {
		if !isKnown(k) {
			if s.Extra == nil {
				s.Extra = map[string]json.RawMessage{}
			}
			s.Extra[k] = v
		}
	}
	s.Provider = strings.ToLower(strings.TrimSpace(s.Provider))
	if s.Provider != "" && s.Provider != ProviderAnthropic && s.Provider != ProviderOpenAI {
		return Settings{}, fmt.Errorf(`%s: "provider" is %q; use "anthropic" or "openai" (or remove the key to infer it)`, path, s.Provider)
	}
	if s.MaxTokens < 0 {
		return Settings{}, fmt.Errorf(`%s: "maxTokens" must be a positive number, not %d`, path, s.MaxTokens)
	}
	if s.ThinkingBudget < 0 {
		return Settings{}, fmt.Errorf(`%s: "thinkingBudget" must be a positive number, not %d`, path, s.ThinkingBudget)
	}
	return s, nil
}

func isKnown(k string) bool {
	for _, n := range knownKeys {
		if k == n {
			return true
		}
	}
	return false
}

// settingsError explains a JSON decoding error with a line and column.
func settingsError(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset)
		return fmt.Errorf("%s: invalid JSON at line %d, column %d: %v; fix it or delete the file", path, line, col, syn)
	case errors.As(err, &typ):
		line, col := position(data, typ.Offset)
		field := typ.Field
		if field == "" {
			field = "the top level"
		} else {
			field = fmt.Sprintf("%q", field)
		}
		return fmt.Errorf("%s: line %d, column %d: %s must be %s, not a JSON %s", path, line, col, field, describe(typ.Type.Kind().String()), typ.Value)
	}
	// e.g. "unexpected end of JSON input", which has no offset.
	return fmt.Errorf("%s: invalid JSON: %v; fix it or delete the file", path, err)
}

func describe(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "map":
		return "an object"
	case "bool":
		return "true or false"
	case "int", "int64":
		return "a number"
	case "ptr":
		return "true or false"
	}
	return "a " + kind
}

// position turns a decoder offset (bytes read up to and including the
// offending one) into the 1-based line and column of that byte.
func position(data []byte, off int64) (line, col int) {
	p := min(max(off-1, 0), int64(len(data)))
	before := data[:p]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(p) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// SaveSettings writes s to path atomically (temp file + rename), keeping the
// unknown keys of s.Extra; the directory is created if needed.
func SaveSettings(path string, s Settings) error {
	out := map[string]any{}
	for k, v := range s.Extra {
		out[k] = v
	}
	set := func(k string, v any, present bool) {
		if present {
			out[k] = v
		} else {
			delete(out, k)
		}
	}
	set("provider", s.Provider, s.Provider != "")
	set("model", s.Model, s.Model != "")
	set("env", s.Env, len(s.Env) > 0)
	set("enableSkillSearchInstruction", s.EnableSkillSearchInstruction, s.EnableSkillSearchInstruction != nil)
	set("maxTokens", s.MaxTokens, s.MaxTokens > 0)
	set("thinkingBudget", s.ThinkingBudget, s.ThinkingBudget > 0)
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode settings for %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// WriteFileAtomic creates path's directory (private) if needed and replaces
// path atomically with data (see fsutil.WriteFileAtomic).
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %w", dir, err)
	}
	return fsutil.WriteFileAtomic(path, data, perm)
}
