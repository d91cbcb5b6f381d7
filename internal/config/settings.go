package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// Provider names accepted in settings.json, SYNAPSE_PROVIDER and --provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderGemini    = "gemini"
	ProviderBedrock   = "bedrock" // Claude through Amazon Bedrock
	ProviderVertex    = "vertex"  // Claude through Google Vertex AI
)

// Settings is $SYNAPSE_HOME/settings.json. Every field is optional; a missing
// file is all defaults. Keys this version does not know are kept in Extra and
// written back by SaveSettings.
type Settings struct {
	// Provider is "anthropic", "openai", "gemini", "bedrock" or "vertex"; empty means inferred.
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

	// Hooks is the user's command hooks (internal/hooks reads it), kept raw
	// so that a broken entry is a warning at start-up, not a failure to start.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// SkillEnhance is {"autoEnhance": bool, "triggerProfile": "conservative"
	// | "neutral" | "aggressive"}, raw for the same reason (see SkillEnhanceConfig).
	SkillEnhance json.RawMessage `json:"skillEnhance,omitempty"`

	// Permissions is {"scratch": ["~/.cache/foo", "$HOME/build-cache"]}:
	// paths the ask permission mode lets commands write without asking,
	// besides the session's private /tmp. Raw, so that a broken entry is a
	// warning (see ScratchPaths).
	Permissions json.RawMessage `json:"permissions,omitempty"`

	// ShareEnv names the environment variables project files (a project's
	// .mcp.json) may expand, such as GITHUB_TOKEN; any other ${VAR} in a
	// project file expands to nothing. The user's own files are not limited.
	ShareEnv []string `json:"shareEnv,omitempty"`
	// ConsoleEnv maps a web-console engine ID ("codex-tui") to variables of
	// the server's environment it gets besides its vendor's own: the only
	// way an engine sees one of Synapse's provider keys.
	ConsoleEnv map[string][]string `json:"consoleEnv,omitempty"`
	// Context holds the long-session settings ("context": {"window": …});
	// each SYNAPSE_* variable of the same meaning beats its key (see
	// Config.ApplySettings).
	Context *ContextSettings `json:"context,omitempty"`

	// Extra holds the keys this version does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// knownKeys are the JSON keys of Settings' fields.
var knownKeys = []string{"provider", "model", "env", "enableSkillSearchInstruction", "maxTokens", "thinkingBudget", "hooks", "skillEnhance", "shareEnv", "consoleEnv", "context", "permissions"}

// ContextSettings is settings.json "context": the context window and the
// offload and compaction thresholds, in tokens (absent or 0: from the
// model's window), and the model that writes compaction summaries.
type ContextSettings struct {
	Window           int    `json:"window,omitempty"`           // SYNAPSE_MAX_CONTEXT_WINDOW
	OffloadThreshold int    `json:"offloadThreshold,omitempty"` // SYNAPSE_OFFLOAD_THRESHOLD
	CompactThreshold int    `json:"compactThreshold,omitempty"` // SYNAPSE_COMPACT_THRESHOLD
	CompactModel     string `json:"compactModel,omitempty"`     // SYNAPSE_COMPACT_MODEL
}

// validate rejects values that cannot be meant: a threshold or window
// that is not a positive number of tokens, an empty compactModel.
func (c *ContextSettings) validate(path string, raw json.RawMessage) error {
	if c == nil {
		if t := bytes.TrimSpace(raw); len(t) > 0 && string(t) != "null" {
			return fmt.Errorf(`%s: "context" must be an object like {"offloadThreshold": 120000}`, path)
		}
		return nil
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(raw, &keys) // the same bytes decoded into c already
	for k, v := range keys {
		switch k {
		case "window", "offloadThreshold", "compactThreshold":
			var n int
			if err := json.Unmarshal(v, &n); err != nil || n <= 0 {
				return fmt.Errorf(`%s: "context.%s" is %s; it must be a positive whole number of tokens (or remove the key to follow the model's window)`, path, k, v)
			}
		case "compactModel":
			if strings.TrimSpace(c.CompactModel) == "" {
				return fmt.Errorf(`%s: "context.compactModel" is empty; name a model (or remove the key to use the conversation's model)`, path)
			}
		default:
			return fmt.Errorf(`%s: "context.%s" is not a context setting; use window, offloadThreshold, compactThreshold or compactModel`, path, k)
		}
	}
	c.CompactModel = strings.TrimSpace(c.CompactModel)
	return nil
}

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
	if s.Provider != "" && s.Provider != ProviderAnthropic && s.Provider != ProviderOpenAI && s.Provider != ProviderGemini && s.Provider != ProviderBedrock && s.Provider != ProviderVertex {
		return Settings{}, fmt.Errorf(`%s: "provider" is %q; use "anthropic", "openai", "gemini", "bedrock" or "vertex" (or remove the key to infer it)`, path, s.Provider)
	}
	if s.MaxTokens < 0 {
		return Settings{}, fmt.Errorf(`%s: "maxTokens" must be a positive number, not %d`, path, s.MaxTokens)
	}
	if s.ThinkingBudget < 0 {
		return Settings{}, fmt.Errorf(`%s: "thinkingBudget" must be a positive number, not %d`, path, s.ThinkingBudget)
	}
	if err := s.Context.validate(path, raw["context"]); err != nil {
		return Settings{}, err
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
		return "a whole number"
	case "struct":
		return "an object"
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
	set("hooks", s.Hooks, len(s.Hooks) > 0)
	set("skillEnhance", s.SkillEnhance, len(s.SkillEnhance) > 0)
	set("context", s.Context, s.Context != nil)
	set("permissions", s.Permissions, len(s.Permissions) > 0)
	set("shareEnv", s.ShareEnv, len(s.ShareEnv) > 0)
	set("consoleEnv", s.ConsoleEnv, len(s.ConsoleEnv) > 0)
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

// ScratchPaths reads "permissions.scratch": each entry with `$VAR`,
// `${VAR}` (from lookup) and a leading `~` (home) expanded, absolute and
// clean. An entry that cannot be used is skipped with a warning naming it;
// "/" is refused (it would let every write run without asking).
func (s Settings) ScratchPaths(home string, lookup func(string) (string, bool)) (paths, warns []string) {
	raw := bytes.TrimSpace(s.Permissions)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p struct {
		Scratch []string `json:"scratch"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, []string{`settings.json "permissions" must be an object like {"scratch": ["~/.cache/foo"]}; the ask mode's scratch list is only the session's /tmp`}
	}
	for _, e := range p.Scratch {
		skip := func(why string) {
			warns = append(warns, fmt.Sprintf(`settings.json "permissions.scratch": entry %q was skipped: %s`, e, why))
		}
		x, err := ExpandVars(e, lookup)
		switch {
		case err != nil:
			skip(err.Error())
			continue
		case x == "":
			continue
		case (x == "~" || strings.HasPrefix(x, "~/")) && home == "":
			skip("~ cannot be expanded: HOME is not set")
			continue
		}
		x = filepath.Clean(ExpandHome(x, home))
		switch {
		case !filepath.IsAbs(x):
			skip("it is not an absolute path once expanded; write it as /full/path, ~/path or $VAR/path")
		case x == "/":
			skip("/ would let every write run without asking; name the directories commands may write freely")
		default:
			paths = append(paths, x)
		}
	}
	return paths, warns
}

// Trigger profiles of skill auto-enhance, from the most to the least selective.
const (
	ProfileConservative = "conservative"
	ProfileNeutral      = "neutral"
	ProfileAggressive   = "aggressive"
)

// SkillEnhanceConfig is settings.json "skillEnhance".
type SkillEnhanceConfig struct {
	// AutoEnhance runs the skill auto-enhance stop hook (default off: it
	// costs a sub-agent run after a worthwhile turn).
	AutoEnhance bool
	// TriggerProfile is how readily a turn counts as worth learning from.
	TriggerProfile string
}

// SkillEnhanceConfig reads "skillEnhance". A value of the wrong type is a
// warning and the default (off, conservative), never silently on.
func (s Settings) SkillEnhanceConfig() (SkillEnhanceConfig, []string) {
	cfg := SkillEnhanceConfig{TriggerProfile: ProfileConservative}
	if len(bytes.TrimSpace(s.SkillEnhance)) == 0 || string(bytes.TrimSpace(s.SkillEnhance)) == "null" {
		return cfg, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(s.SkillEnhance, &raw); err != nil {
		return cfg, []string{`settings.json "skillEnhance" must be an object like {"autoEnhance": true, "triggerProfile": "conservative"}; auto-enhance stays off`}
	}
	var warns []string
	if v, ok := raw["autoEnhance"]; ok {
		if err := json.Unmarshal(v, &cfg.AutoEnhance); err != nil {
			warns = append(warns, fmt.Sprintf(`settings.json "skillEnhance.autoEnhance" must be true or false, not %s; auto-enhance stays off (fix it with /skill enhance --on or --off)`, string(v)))
			cfg.AutoEnhance = false
		}
	}
	if v, ok := raw["triggerProfile"]; ok {
		var p string
		_ = json.Unmarshal(v, &p)
		switch p = strings.ToLower(strings.TrimSpace(p)); p {
		case ProfileConservative, ProfileNeutral, ProfileAggressive:
			cfg.TriggerProfile = p
		default:
			warns = append(warns, fmt.Sprintf(`settings.json "skillEnhance.triggerProfile" is %s; use "conservative", "neutral" or "aggressive" (using conservative)`, string(v)))
		}
	}
	return cfg, warns
}

// SetAutoEnhance writes "skillEnhance.autoEnhance" into the settings file at
// path, keeping every other key (of "skillEnhance" too).
func SetAutoEnhance(path string, on bool) error {
	s, err := LoadSettings(path)
	if err != nil {
		return err
	}
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(s.SkillEnhance)) > 0 {
		// A broken value is replaced: the user asked for a definite state.
		_ = json.Unmarshal(s.SkillEnhance, &obj)
		if obj == nil {
			obj = map[string]json.RawMessage{}
		}
	}
	obj["autoEnhance"] = json.RawMessage(strconv.FormatBool(on))
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encode skillEnhance: %w", err)
	}
	s.SkillEnhance = data
	return SaveSettings(path, s)
}

// defaultSettings is what a first run writes to settings.json: the settings
// a user is most likely to change, at their default values, so the file
// shows where they go. Never a key: keys stay in the environment (or are
// added by the user).
const defaultSettings = `{
  "enableSkillSearchInstruction": true,
  "skillEnhance": {"autoEnhance": false, "triggerProfile": "conservative"},
  "permissions": {"scratch": []},
  "shareEnv": []
}
`

// WriteDefaultSettings writes the default settings to path when no file is
// there, and reports whether it did. The file appears whole or not at all
// (written aside, then linked into place), and one that appeared meanwhile,
// from another first run or the user, is left as it is.
func WriteDefaultSettings(path string) (bool, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there, or not ours to judge: loading reports a problem
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".settings.json.tmp-*")
	if err != nil {
		return false, fmt.Errorf("cannot write the default %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.WriteString(defaultSettings)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path) // fails if the file appeared meanwhile
	}
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("cannot write the default %s: %w", path, err)
	}
	return true, nil
}
