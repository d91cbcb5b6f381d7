package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/shell"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// ToolSetup is what one agent's Bash tool is built from.
type ToolSetup struct {
	// Cwd is where the shell starts (default: the process's directory).
	Cwd string
	// Exec runs native commands: the agent's sandbox manager. Nil starts a
	// plain persistent shell (no OS sandbox) owned by the returned Tool.
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
}

// Tool is one agent's Bash tool and what it is built from.
type Tool struct {
	*tool.Bash
	Agent *agentsh.Shell
	Exec  tool.Executor
	close func() error
}

// Close stops the shell the Tool started (not an Exec passed in).
func (t *Tool) Close() error {
	if t.close == nil {
		return nil
	}
	return t.close()
}

// NewTool builds the Bash tool with its Agent Shell over one shell session.
func (a *App) NewTool(ctx context.Context, s ToolSetup) (*Tool, error) {
	t := &Tool{Exec: s.Exec}
	if t.Exec == nil {
		sess, err := shell.Start(ctx, shell.Options{Dir: s.Cwd, Env: os.Environ(), Timeout: a.Config.CommandTimeout})
		if err != nil {
			return nil, fmt.Errorf("start the shell: %w", err)
		}
		t.Exec, t.close = sessionExecutor{sess}, sess.Close
	}
	paths := s.Paths
	if paths == nil {
		paths, _ = t.Exec.(agentsh.PathChecker)
	}
	t.Agent = agentsh.New(agentsh.Options{
		Exec:         t.Exec,
		Paths:        paths,
		Todos:        s.Todos,
		Home:         a.Config.UserHome,
		ReadLimit:    a.Config.ReadDefaultLimit,
		TodoMaxItems: a.Config.TodoMaxItems,
	})
	t.Bash = tool.New(tool.Options{
		Exec:      t.Exec,
		Agent:     t.Agent,
		Handlers:  s.Handlers,
		Approver:  s.Approver,
		OutputCap: a.Config.OutputCap,
		OutputDir: outputDir(),
		Home:      a.Config.UserHome,
	})
	return t, nil
}

// outputDir receives command outputs and sub-agent answers too long to
// return whole.
func outputDir() string { return filepath.Join(os.TempDir(), "synapse-output") }

// sessionExecutor runs native commands straight in a persistent shell, for
// contexts without a sandbox manager.
type sessionExecutor struct{ s *shell.Session }

func (e sessionExecutor) Execute(ctx context.Context, cmd, cwd string) (command.Result, error) {
	if cwd != "" && cwd != e.s.Cwd() {
		res, err := e.s.Execute(ctx, "cd -- '"+strings.ReplaceAll(cwd, "'", `'\''`)+"'")
		if err != nil || res.ExitCode != 0 {
			return res, err
		}
	}
	return e.s.Execute(ctx, cmd)
}

func (e sessionExecutor) Cwd() string                       { return e.s.Cwd() }
func (e sessionExecutor) Restart(ctx context.Context) error { return e.s.Restart(ctx) }
