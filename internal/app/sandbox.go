package app

import (
	"os"
	"time"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// SandboxOptions are the per-agent parts of a sandbox manager.
type SandboxOptions struct {
	// Cwd is the agent's working directory (default: the process's).
	Cwd string
	// ReadOnly gives a sandbox without a writable workspace (explore agents).
	ReadOnly bool
	// Start starts the persistent shell; nil uses the default shell starter.
	Start sandbox.StartSession
	// CommandTimeout overrides the configured per-command timeout.
	CommandTimeout time.Duration
}

// NewSandbox builds a sandbox manager from $SYNAPSE_HOME/sandbox.json. The
// manager decides whether commands are sandboxed (on by default where the
// platform can run it; see package sandbox) and Status explains the decision.
func (a *App) NewSandbox(opts SandboxOptions) (*sandbox.Manager, error) {
	timeout := opts.CommandTimeout
	if timeout == 0 {
		timeout = a.Config.CommandTimeout
	}
	start := opts.Start
	if start == nil {
		start = startShell
	}
	return sandbox.NewManager(sandbox.ManagerOptions{
		ConfigPath:     a.Config.SandboxPath(),
		Cwd:            opts.Cwd,
		Env:            os.Environ(),
		Home:           a.Config.UserHome,
		CommandTimeout: timeout,
		ReadOnly:       opts.ReadOnly,
		StartSession:   start,
	})
}
