// Package app is the composition root: it resolves configuration once and builds
// providers, the sandbox manager, the Bash tool and the agent from it. Files are
// split by what they build (tool.go, sandbox.go, agent.go, …).
package app

import (
	"log/slog"
	"sync"

	"github.com/synapse-agent/synapse/internal/config"
)

// App holds what is resolved once per process.
type App struct {
	Config config.Config

	debugOnce sync.Once
	debug     *slog.Logger // SYNAPSE_DEBUG=1: the debug log; nil otherwise
}

// New resolves the configuration from getenv (nil means the process environment).
func New(getenv config.Getenv) (*App, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return nil, err
	}
	// settings.json "context" where the environment says nothing. A broken
	// file is not an error here: it is reported, naming the file and the
	// key, where the settings are needed (starting an agent), while
	// commands that do not need them (sessions, mcp approve) still work.
	if s, err := config.LoadSettings(cfg.SettingsPath()); err == nil {
		cfg.ApplySettings(s)
	}
	return &App{Config: cfg}, nil
}
