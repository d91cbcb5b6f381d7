package app

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/gemini"
	"github.com/synapse-agent/synapse/internal/llm/openai"
)

// ProviderSelection is what the command line asked for; empty fields defer to
// the environment, then settings.json, then inference and defaults.
type ProviderSelection struct {
	Provider string // --provider: anthropic, openai, gemini, bedrock or vertex
	Model    string // --model
}

// Settings reads $SYNAPSE_HOME/settings.json (missing file: defaults).
func (a *App) Settings() (config.Settings, error) {
	return config.LoadSettings(a.Config.SettingsPath())
}

// Provider builds the model provider and returns it with the model to use.
// Precedence: flags, then the environment (SYNAPSE_PROVIDER, SYNAPSE_MODEL,
// ANTHROPIC_*/OPENAI_*), then settings.json ("provider", "model", "env").
func (a *App) Provider(sel ProviderSelection) (llm.Provider, string, error) {
	c, err := a.resolveProvider(sel)
	if err != nil {
		return nil, "", err
	}
	p, err := c.build()
	if err != nil {
		return nil, "", err
	}
	return p, c.Model, nil
}

func (a *App) resolveProvider(sel ProviderSelection) (providerChoice, error) {
	s, err := a.Settings()
	if err != nil {
		return providerChoice{}, err
	}
	c, err := resolveProvider(s, a.Config.Getenv, a.Config.SettingsPath(), sel)
	c.IdleTimeout = a.Config.StreamIdleTimeout
	c.log = a.debugLog()
	return c, err
}

// modelProviders picks the provider of a model chosen after start-up (the
// REPL's /model, a sub-agent's --model): a model whose name implies another
// provider than the start-up one gets that provider's client (built once),
// when that provider is configured; any other model keeps the start-up
// provider. It is safe for concurrent use.
type modelProviders struct {
	a      *App
	start  providerChoice
	startP llm.Provider

	mu    sync.Mutex
	built map[providerChoice]llm.Provider
}

func (a *App) newModelProviders(start providerChoice, p llm.Provider) *modelProviders {
	return &modelProviders{a: a, start: start, startP: p, built: map[providerChoice]llm.Provider{}}
}

// name is the provider model's requests go to: the one its name implies,
// else the start-up one.
func (m *modelProviders) name(model string) string {
	if name := modelProvider(model); name != "" && !staysOnCloud(m.start.Name, name) {
		return name
	}
	return m.start.Name
}

// For returns the provider to send model's requests to.
func (m *modelProviders) For(model string) (llm.Provider, error) {
	name := m.name(model)
	if name == m.start.Name {
		return m.startP, nil
	}
	c, err := m.a.resolveProvider(ProviderSelection{Provider: name, Model: model})
	if err != nil {
		var missing *missingKeyError
		if errors.As(err, &missing) {
			return nil, fmt.Errorf("%s is a model of the %s provider, which is not configured: set %s (or %s for a local or compatible server) in the environment or in \"env\" of %s, or choose a model of the %s provider",
				model, name, missing.keyVar, missing.urlVar, missing.settingsPath, m.start.Name)
		}
		return nil, fmt.Errorf("%s needs the %s provider: %w", model, name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.built[c]
	if !ok {
		if p, err = c.build(); err != nil {
			return nil, fmt.Errorf("%s needs the %s provider: %w", model, name, err)
		}
		m.built[c] = p
	}
	return p, nil
}

// missingKeyError is a provider without a key nor a local server address.
type missingKeyError struct {
	provider, keyVar, urlVar, settingsPath string
}

func (e *missingKeyError) Error() string {
	hint := ""
	if e.provider == config.ProviderOpenAI {
		hint = "; for a local OpenAI-compatible server (Ollama, vLLM, llama.cpp) set OPENAI_BASE_URL to its address, e.g. http://127.0.0.1:11434/v1, and no key is needed"
	}
	if e.provider == config.ProviderGemini {
		hint = "; GOOGLE_API_KEY works too (a Gemini API key from https://aistudio.google.com/apikey)"
	}
	return fmt.Sprintf("no API key for the %s provider: set %s in the environment or in \"env\" of %s (or pick another provider with --provider)%s",
		e.provider, e.keyVar, e.settingsPath, hint)
}

// providerChoice is a fully resolved provider configuration.
type providerChoice struct {
	Name      string
	Model     string
	APIKey    string
	AuthToken string // anthropic only
	BaseURL   string
	Images    string      // openai only: SYNAPSE_OPENAI_IMAGES (on, off, or "" for api.openai.com only)
	Wire      string      // openai only: SYNAPSE_OPENAI_WIRE (chat, responses, or "" to choose by model)
	Cloud     cloudConfig // bedrock and vertex only
	// IdleTimeout abandons a request whose server stays silent that long.
	IdleTimeout time.Duration
	// log, when set (SYNAPSE_DEBUG=1), records the requests and retries.
	log *slog.Logger
}

func (c providerChoice) build() (llm.Provider, error) {
	var retry *llm.RetryPolicy
	if c.log != nil {
		retry = retryLogged(llm.DefaultRetryPolicy(), c.Name, c.log)
	}
	var p llm.Provider
	switch {
	case c.Name == config.ProviderOpenAI:
		p = openai.New(openai.Options{APIKey: c.APIKey, BaseURL: c.BaseURL, Images: c.Images, Wire: c.Wire, IdleTimeout: c.IdleTimeout, Retry: retry})
	case c.Name == config.ProviderGemini:
		p = gemini.New(gemini.Options{APIKey: c.APIKey, BaseURL: c.BaseURL, IdleTimeout: c.IdleTimeout, Retry: retry})
	case isCloud(c.Name):
		var err error
		if p, err = c.buildCloud(retry); err != nil {
			return nil, err
		}
	default:
		p = anthropic.New(anthropic.Options{APIKey: c.APIKey, AuthToken: c.AuthToken, BaseURL: c.BaseURL, IdleTimeout: c.IdleTimeout, Retry: retry})
	}
	if c.log != nil {
		p = loggedProvider{Provider: p, log: c.log}
	}
	return p, nil
}

func resolveProvider(s config.Settings, getenv config.Getenv, settingsPath string, sel ProviderSelection) (providerChoice, error) {
	lookup := func(name string) (string, string) { return s.Lookup(getenv, name) }
	where := func(from string) string {
		if from == "environment" {
			return "from the environment"
		}
		return `from "env" in ` + settingsPath
	}

	// Provider: flag > SYNAPSE_PROVIDER > settings "provider" > model name > configured keys > anthropic.
	name, nameFrom := strings.ToLower(strings.TrimSpace(sel.Provider)), "from --provider"
	if name == "" {
		if v, from := lookup("SYNAPSE_PROVIDER"); v != "" {
			name, nameFrom = strings.ToLower(v), "SYNAPSE_PROVIDER "+where(from)
		}
	}
	if name == "" && s.Provider != "" {
		name, nameFrom = s.Provider, `"provider" in `+settingsPath
	}
	if name != "" && name != config.ProviderAnthropic && name != config.ProviderOpenAI && name != config.ProviderGemini && !isCloud(name) {
		return providerChoice{}, fmt.Errorf("unknown provider %q (%s): use anthropic, openai, gemini, bedrock or vertex", name, nameFrom)
	}

	// Model: flag > SYNAPSE_MODEL > settings "model" (when it is for this provider).
	model := strings.TrimSpace(sel.Model)
	if model == "" {
		model, _ = lookup("SYNAPSE_MODEL")
	}
	if name == "" {
		name = inferProvider(model, lookup)
	}
	if model == "" && s.Model != "" && (s.Provider == "" || s.Provider == name) {
		model = s.Model
	}
	if model == "" {
		model = anthropic.DefaultModel
		if name == config.ProviderOpenAI {
			model = openai.DefaultModel
		}
		if name == config.ProviderGemini {
			model = gemini.DefaultModel
		}
	}

	c := providerChoice{Name: name, Model: model}
	if isCloud(name) {
		return resolveCloud(c, lookup, where)
	}
	keyVar, urlVar := "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"
	if name == config.ProviderOpenAI {
		keyVar, urlVar = "OPENAI_API_KEY", "OPENAI_BASE_URL"
	}
	if name == config.ProviderGemini {
		keyVar, urlVar = geminiKeyVar(lookup), "GOOGLE_GEMINI_BASE_URL"
	}
	c.APIKey, _ = lookup(keyVar)
	if name == config.ProviderAnthropic {
		c.AuthToken, _ = lookup("ANTHROPIC_AUTH_TOKEN")
	} else if name == config.ProviderOpenAI {
		switch v, from := lookup("SYNAPSE_OPENAI_IMAGES"); v {
		case "", "on", "off":
			c.Images = v
		default:
			return providerChoice{}, fmt.Errorf("SYNAPSE_OPENAI_IMAGES (%s) is %q: use on (send tool images to the model), off, or leave it unset (on for api.openai.com only)", where(from), v)
		}
		switch v, from := lookup("SYNAPSE_OPENAI_WIRE"); strings.ToLower(v) {
		case "", "auto":
		case openai.WireChat, openai.WireResponses:
			c.Wire = strings.ToLower(v)
		default:
			return providerChoice{}, fmt.Errorf("SYNAPSE_OPENAI_WIRE (%s) is %q: use responses (the Responses API), chat (Chat Completions, which compatible servers speak), or leave it unset (responses for OpenAI's reasoning models on api.openai.com)", where(from), v)
		}
	}
	base, baseFrom := lookup(urlVar)
	if base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return providerChoice{}, fmt.Errorf("%s (%s) is not a usable URL: %q; use a full http(s) URL such as %s",
				urlVar, where(baseFrom), base, exampleURL(name))
		}
		c.BaseURL = base
	}
	// A server on this machine (Ollama, vLLM, llama.cpp, a local gateway or a
	// test server) usually needs no key; anything else does.
	if c.APIKey == "" && c.AuthToken == "" && !isLoopback(c.BaseURL) {
		return providerChoice{}, &missingKeyError{provider: name, keyVar: keyVar, urlVar: urlVar, settingsPath: settingsPath}
	}
	return c, nil
}

// inferProvider picks a provider when none is named: Claude Code's
// CLAUDE_CODE_USE_BEDROCK/VERTEX (unless the model is another vendor's), else
// from the model name when it is unambiguous, else from which provider is
// configured, else anthropic.
func inferProvider(model string, lookup func(string) (string, string)) string {
	if name := cloudSwitch(lookup); name != "" && (modelProvider(model) == "" || staysOnCloud(name, modelProvider(model))) {
		return name
	}
	if name := modelProvider(model); name != "" {
		return name
	}
	configured := func(names ...string) bool {
		for _, n := range names {
			if v, _ := lookup(n); v != "" {
				return true
			}
		}
		return false
	}
	if !configured("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL") && configured("OPENAI_API_KEY", "OPENAI_BASE_URL") {
		return config.ProviderOpenAI
	}
	if !configured("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL") && configured("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL") {
		return config.ProviderGemini
	}
	return config.ProviderAnthropic
}

// modelProvider is the provider a model name implies, "" when it does not
// say (a local model such as llama3 may be served by either wire format).
func modelProvider(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if name := cloudModelProvider(m); name != "" {
		return name
	}
	switch {
	case strings.HasPrefix(m, "claude"):
		return config.ProviderAnthropic
	case strings.HasPrefix(m, "gpt-"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"), strings.HasPrefix(m, "chatgpt"):
		return config.ProviderOpenAI
	case strings.HasPrefix(m, "gemini-"):
		return config.ProviderGemini
	}
	return ""
}

func exampleURL(provider string) string {
	if provider == config.ProviderOpenAI {
		return "https://api.openai.com/v1 or http://127.0.0.1:11434/v1"
	}
	if provider == config.ProviderGemini {
		return gemini.DefaultBaseURL
	}
	return "https://api.anthropic.com"
}

// geminiKeyVar is the variable the Gemini key is read from: GOOGLE_API_KEY
// when it is set, as Google's SDKs prefer it, else GEMINI_API_KEY.
func geminiKeyVar(lookup func(string) (string, string)) string {
	if v, _ := lookup("GOOGLE_API_KEY"); v != "" {
		return "GOOGLE_API_KEY"
	}
	return "GEMINI_API_KEY"
}

// isLoopback reports whether a base URL points at this machine.
func isLoopback(base string) bool {
	if base == "" {
		return false
	}
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
