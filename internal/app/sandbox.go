package app

import (
	"fmt"
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
	// Visible are host directories under /tmp commands may read (the
	// agent's scratch directory): see sandbox.ManagerOptions.Visible.
	Visible []string
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
		HideEnv:        a.hiddenEnv(),
		Home:           a.Config.UserHome,
		CommandTimeout: timeout,
		ReadOnly:       opts.ReadOnly,
		StartSession:   start,
		Visible:        opts.Visible,
		Launcher:       launcher(),
	})
}

// launcher is this binary, which runs itself as the Landlock launcher
// (sandbox.LauncherCommand, handled first thing in cli.Main); "" when it
// cannot be found, which leaves the Landlock backend out.
func launcher() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
}

// hiddenEnv names the variables of settings.json "env": they configure the
// agent (keys, base URLs, models), so the commands it runs do not see them
// (the sandbox manager always hides the provider credentials too). A broken
// settings file hides nothing more here; provider selection reports it.
func (a *App) hiddenEnv() []string {
	s, err := a.Settings()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	return names
}

// agentSandbox builds the sandbox manager a top-level agent's commands run
// under: sandbox.json's policy for cwd and the extra writable paths
// (--allow-path) granted for this process. Its warnings are for the caller
// to show (Agent.Notices). The caller shuts it down.
func (a *App) agentSandbox(cwd string, allow, visible []string) (*sandbox.Manager, error) {
	mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd, Visible: visible})
	if err != nil {
		return nil, err
	}
	for _, p := range allow {
		if err := mgr.AddRuntimeWhitelist(p); err != nil {
			_ = mgr.Shutdown()
			return nil, fmt.Errorf("--allow-path %s: %w", p, err)
		}
	}
	return mgr, nil
}
