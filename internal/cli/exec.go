package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

func newExecCmd(stdio IO) *cobra.Command {
	var asJSON bool
	var cwd string
	var allowPaths []string
	cmd := &cobra.Command{
		Use:   "exec [--json] [--cwd DIR] [--allow-path DIR] '<command>' ['<command>' ...]",
		Short: "Run Bash-tool commands without a model",
		Long: `Run each command through the Bash tool, in order, in one shell session, and print
what the model would see. Commands are native shell commands ('ls -la', 'cd src'),
Agent Shell commands ('read main.go', 'write a.txt hello', 'edit a.txt old new',
'command:search pdf') or extension commands ('skill:<skill>:<script> ARGS',
'mcp:<server>:<tool> ARGS'). Quote each command as one argument. MCP servers
start only when a command needs them; a server that fails is reported on stderr.
There is no model, so task:* sub-agents are not available.

Commands run under the same sandbox as synapse run: the policy of sandbox.json,
with the workspace (--cwd, default the current directory) writable and a private
/tmp; 'synapse sandbox status' shows what is enforced.

The exit status is the last command's (1 for a tool error without an exit code).`,
		Example: `  synapse exec 'read --help'
  synapse exec 'cd /tmp' 'pwd' 'write notes.txt "hello"' 'read notes.txt'
  synapse exec --json 'ls /nonexistent'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exitCode(2, errors.New("give at least one command, e.g. synapse exec 'ls -la'"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := app.New(stdio.Getenv)
			if err != nil {
				return exitCode(1, err)
			}
			if cwd != "" {
				abs, err := filepath.Abs(cwd)
				if err != nil {
					return exitCode(2, fmt.Errorf("--cwd %s: %w", cwd, err))
				}
				if info, err := os.Stat(abs); err != nil || !info.IsDir() {
					return exitCode(2, fmt.Errorf("--cwd %s: not a directory", cwd))
				}
				cwd = abs
			} else if cwd, err = os.Getwd(); err != nil {
				return exitCode(1, fmt.Errorf("cannot find the working directory: %w", err))
			}
			ctx := cmd.Context()
			// The same agent as synapse run, without the model: sandbox.json's
			// policy with the workspace (--cwd) writable, skills and MCP tools.
			// MCP servers start only when a command needs their tool list
			// (command:search); an mcp: call connects its own server.
			g, err := a.NewAgent(ctx, app.AgentSetup{
				NoModel: true, Cwd: cwd, AllowPaths: allowPaths,
				// The commands are the user's own: a clone they ask for needs
				// no approval and may use their credentials.
				Extensions: app.ExtensionOptions{DeferMCP: true, ClientVersion: Version, Import: skills.ImportPolicy{UserTyped: true}},
			})
			if err != nil {
				return exitCode(1, err)
			}
			defer g.Close()
			for _, w := range g.Sandbox.Warnings() {
				fmt.Fprintln(stdio.Err, "synapse: warning:", textutil.Sanitize(w))
			}
			if needsMCPList(args) {
				g.Extensions.StartMCP(ctx)
			}
			// Quiet unless something is broken: no tool count, no skills.
			for _, p := range g.Extensions.MCPProblems() {
				fmt.Fprintln(stdio.Err, "synapse: warning:", textutil.Sanitize(p))
			}
			t := g.Tool
			// On a terminal, command output (and command:search's skill and
			// tool descriptions) is cleaned of escape sequences; piped, it
			// passes unchanged, as the model sees it.
			tty := isTTY(stdio.Out)
			enc := json.NewEncoder(stdio.Out)
			code := 0
			for _, line := range args {
				r := t.Run(ctx, tool.Input{Command: line})
				if asJSON {
					if err := enc.Encode(execRecord{Command: line, Result: r}); err != nil {
						return exitCode(1, fmt.Errorf("write the result: %w", err))
					}
				} else {
					out := r.Output
					if tty {
						out = textutil.Sanitize(out)
					}
					fmt.Fprintln(stdio.Out, out)
				}
				code = resultCode(r)
				if ctx.Err() != nil {
					return exitCode(command.Interrupted, nil)
				}
			}
			if code != 0 {
				return exitCode(code, nil)
			}
			return nil
		},
	}
	// Everything after the first command is a command, even if it starts with "-".
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per command: {command, output, isError, message, extras}")
	cmd.Flags().StringVar(&cwd, "cwd", "", "directory the shell starts in, writable in the sandbox (default: the current one)")
	cmd.Flags().StringArrayVar(&allowPaths, "allow-path", nil, "also allow the sandbox to write this path (repeatable)")
	return cmd
}

// needsMCPList reports whether a command searches the commands, which lists
// the MCP tools of connected servers only.
func needsMCPList(lines []string) bool {
	for _, l := range lines {
		if router.Classify(l).Family == router.FamilySearch {
			return true
		}
	}
	return false
}

// execRecord is one line of `synapse exec --json`.
type execRecord struct {
	Command string `json:"command"`
	tool.Result
}

// resultCode is the process exit status for one result.
func resultCode(r tool.Result) int {
	if c, ok := r.Facts.Exit(); ok {
		return c
	}
	if r.IsError {
		return 1
	}
	return 0
}
