package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// SessionStore is the sessions directory of this configuration.
func (a *App) SessionStore(warn func(error)) *session.Store {
	return session.NewStore(a.Config.SessionsDir, a.pricing(warn), warn)
}

// pricing reads $SYNAPSE_HOME/pricing.json; a broken file is a warning and no
// prices, never a failure to start.
func (a *App) pricing(warn func(error)) session.Pricing {
	p, err := session.LoadPricing(a.Config.PricingPath())
	if err != nil {
		if warn != nil {
			warn(fmt.Errorf("costs are not shown: %w", err))
		}
		return nil
	}
	return p
}

// AgentOptions returns agent options filled from the configuration: limits,
// the sessions directory (when persist) and pricing. The caller sets the
// provider, model, tool, todo store, cwd and event sink.
func (a *App) AgentOptions(persist bool, warn func(error)) agent.Options {
	o := agent.Options{
		MaxTurns:               a.Config.MaxToolIterations,
		MaxConsecutiveFailures: a.Config.MaxConsecutiveFailures,
		MaxParallelTasks:       a.Config.MaxParallelTasks,
	}
	if persist {
		o.SessionsDir = a.Config.SessionsDir
		o.Pricing = a.pricing(warn)
	}
	return o
}

// RunnerSetup is what one top-level agent (synapse run, the REPL) is built from.
type RunnerSetup struct {
	Provider, Model string // --provider, --model ("" defers to env and settings)
	Cwd             string
	// Persist keeps the conversation in the sessions directory.
	Persist  bool
	ResumeID string // id, unique prefix or "latest"
	// AllowPaths are extra writable paths for the sandbox (--allow-path).
	AllowPaths []string
	OnEvent    func(agent.Event)
	// Warn receives non-fatal problems (sandbox warnings, a broken pricing file).
	Warn func(error)
	// Approver is asked about sandbox-blocked commands (nil: refused as blocked).
	Approver tool.Approver
	// Handlers serve skill:, command:search, mcp: and skill scripts; the
	// task:* handler is added here.
	Handlers map[router.Family]command.Handler
	// DisableSkillSearchInstruction leaves the user's text unwrapped.
	DisableSkillSearchInstruction bool
}

// NewRunner builds a top-level agent: provider, sandbox manager, Bash tool
// (with the task:* sub-agent handler bound to the runner) and the runner.
// The returned close stops the shell and flushes the session.
func (a *App) NewRunner(ctx context.Context, s RunnerSetup) (*agent.Runner, func() error, error) {
	warn := s.Warn
	if warn == nil {
		warn = func(error) {}
	}
	provider, model, err := a.Provider(ProviderSelection{Provider: s.Provider, Model: s.Model})
	if err != nil {
		return nil, nil, err
	}
	mgr, err := a.AgentSandbox(s.Cwd, s.AllowPaths, warn)
	if err != nil {
		return nil, nil, err
	}
	closers := []func() error{mgr.Shutdown}
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	handlers := map[router.Family]command.Handler{}
	for fam, h := range s.Handlers {
		handlers[fam] = h
	}
	tasks := a.NewTaskHandler(SubagentSetup{Provider: provider, Model: model, Cwd: s.Cwd, Handlers: s.Handlers})
	handlers[router.FamilyTask] = tasks
	todos := &todo.Store{}
	t, err := a.NewTool(ctx, ToolSetup{Cwd: s.Cwd, Exec: mgr, Todos: todos, Handlers: handlers, Approver: s.Approver})
	if err != nil {
		_ = closeAll()
		return nil, nil, err
	}
	closers = append(closers, t.Close)

	opts := a.AgentOptions(s.Persist, warn)
	opts.Provider, opts.Model, opts.Cwd = provider, model, s.Cwd
	opts.Tool, opts.Todos, opts.OnEvent = t, todos, s.OnEvent
	opts.ResumeID = s.ResumeID
	opts.DisableSkillSearchInstruction = s.DisableSkillSearchInstruction
	runner, err := agent.New(opts)
	if err != nil {
		_ = closeAll()
		return nil, nil, err
	}
	tasks.Bind(runner)
	closers = append(closers, runner.Close)
	return runner, closeAll, nil
}
