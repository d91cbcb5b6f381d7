package app

import (
	"context"
	"errors"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/jobs"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// ToolSetup is what one agent's Bash tool is built from.
type ToolSetup struct {
	// Cwd is the agent's directory. NewTool does not use it: the shell starts
	// where Exec was built to start it (SandboxOptions.Cwd).
	Cwd string
	// Exec runs native commands: the agent's sandbox manager (required:
	// there is no path that runs a model's or a user's commands unsandboxed
	// behind the policy's back).
	Exec tool.Executor
	// Paths checks file commands against the policy; nil uses Exec when it
	// implements agentsh.PathChecker (the sandbox manager does).
	Paths agentsh.PathChecker
	// Todos is the agent's list (nil: the tool gets its own).
	Todos *todo.Store
	// Handlers serve task:, skill:, command:search, mcp: and skill scripts.
	Handlers map[router.Family]command.Handler
	// Approver is asked about sandbox-blocked commands (the REPL's prompt).
	Approver tool.Approver
	// OutputDir receives the full output of cut commands: the agent's
	// private scratch directory (empty: files go straight into the temp dir).
	OutputDir string
	// Scratch is what the ask permission mode lets run without asking.
	Scratch writecheck.Checker
	// Jobs are the agent's background jobs (nil: job:* says there are none,
	// as for sub-agents).
	Jobs *jobs.Table
}

// Tool is one agent's Bash tool and what it is built from.
type Tool struct {
	*tool.Bash
	Agent *agentsh.Shell
	Exec  tool.Executor
}

// Close releases what the Tool itself holds: nothing today, since the shell
// belongs to Exec (shut the sandbox manager down to stop it). Kept so that
// owners can treat every part they built alike.
func (t *Tool) Close() error { return nil }

// NewTool builds the Bash tool with its Agent Shell over the executor's one
// shell session.
func (a *App) NewTool(_ context.Context, s ToolSetup) (*Tool, error) {
	if s.Exec == nil {
		return nil, errors.New("app: the Bash tool needs an executor: build the sandbox manager with NewSandbox and pass it as Exec")
	}
	t := &Tool{Exec: s.Exec}
	paths := s.Paths
	if paths == nil {
		paths, _ = t.Exec.(agentsh.PathChecker)
	}
	t.Agent = agentsh.New(agentsh.Options{
		Exec:           t.Exec,
		Paths:          paths,
		Todos:          s.Todos,
		Home:           a.Config.UserHome,
		ReadLimit:      a.Config.ReadDefaultLimit,
		TodoMaxItems:   a.Config.TodoMaxItems,
		TodoMaxContent: a.Config.TodoMaxContent,
		Jobs:           s.Jobs,
	})
	t.Bash = tool.New(tool.Options{
		Exec:      t.Exec,
		Agent:     t.Agent,
		Handlers:  s.Handlers,
		Approver:  s.Approver,
		OutputCap: a.Config.OutputCap,
		OutputDir: s.OutputDir,
		Home:      a.Config.UserHome,
		Scratch:   s.Scratch,
	})
	return t, nil
}
