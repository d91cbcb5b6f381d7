package app

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/proc"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// HistoryFile is the REPL's prompt history inside $SYNAPSE_HOME.
const HistoryFile = "prompt_history.jsonl"

// ChatMCPStartTimeout bounds how long the REPL waits for MCP servers before
// its prompt: a slower server keeps connecting in the background, and its
// tools show in command:search and /tools once it answers.
const ChatMCPStartTimeout = 3 * time.Second

// SandboxSummary is the REPL banner's one-line sandbox state.
func (g *Agent) SandboxSummary() string { return sandboxSummary(g.Sandbox) }

// ToolsText answers the REPL's /tools for g (see toolsText).
func (a *App) ToolsText(g *Agent) string {
	return toolsText(g.Sandbox, g.Extensions, a.Config.MCPServersPath())
}

// sandboxSummary is the banner's one-line sandbox state.
func sandboxSummary(m *sandbox.Manager) string {
	if !m.Enabled() {
		if len(m.Warnings()) > 0 {
			return "OFF (see the warning below; /sandbox explains)"
		}
		return "OFF (/sandbox explains)"
	}
	switch m.Backend() {
	case "":
		return "UNAVAILABLE: every command is refused (/sandbox explains)"
	case sandbox.BackendLandlock:
		return "ON (landlock + seccomp; /sandbox lists what it cannot enforce)"
	}
	switch runtime.GOOS {
	case "linux":
		return "ON (bubblewrap)"
	case "darwin":
		return "ON (sandbox-exec)"
	}
	return "ON"
}

// toolsText answers /tools: what the agent can call, by layer, with the
// installed skills' scripts and the connected MCP servers' tools.
func toolsText(m *sandbox.Manager, ext *Extensions, mcpFile string) string {
	var b strings.Builder
	b.WriteString("The model has one tool, Bash(command, restart); every capability is a command (each takes -h).\n\n")
	state := "without an OS sandbox"
	if m.Enabled() {
		state = "inside the OS sandbox"
	}
	fmt.Fprintf(&b, "Native:      any shell command (ls, git, go test, pipelines) in one persistent bash, %s\n", state)
	b.WriteString("Agent Shell: read, write, edit, bash <cmd>, TodoWrite, command:search <words>\n")
	b.WriteString("             job:start|read|wait|list|stop (background jobs)\n")
	b.WriteString("             skill:load|list|info|import|rollback|delete\n")
	var kinds []string
	for _, k := range subagent.Kinds() {
		kinds = append(kinds, "task:"+k.Name)
	}
	sort.Strings(kinds)
	fmt.Fprintf(&b, "Sub-agents:  %s\n", strings.Join(kinds, ", "))

	row := func(cmd, desc string) {
		if desc = textutil.OneLine(desc, 72); desc != "" {
			fmt.Fprintf(&b, "    %-32s %s\n", cmd, desc)
		} else {
			fmt.Fprintf(&b, "    %s\n", cmd)
		}
	}
	all := ext.Index.Skills()
	fmt.Fprintf(&b, "\nExtensions: skills (%d installed; skill:load <name> shows a skill's instructions)\n", len(all))
	for _, s := range all {
		fmt.Fprintf(&b, "  %s", s.Name)
		if d := textutil.OneLine(s.Description, 72); d != "" {
			fmt.Fprintf(&b, ": %s", d)
		}
		b.WriteString("\n")
		for _, sc := range s.Scripts {
			row("skill:"+s.Name+":"+sc.Name, sc.Doc())
		}
	}

	status := ext.MCP.Status()
	fmt.Fprintf(&b, "\nExtensions: MCP servers (%d configured)\n", len(status))
	tools, extras := ext.MCP.Tools(), ext.MCP.ExtraCommands()
	for _, st := range status {
		switch {
		case st.Connected:
			fmt.Fprintf(&b, "  %s (%s, %d tools)\n", st.Name, st.Kind, st.Tools)
		case st.Err != "":
			fmt.Fprintf(&b, "  %s (%s): not connected: %s\n", st.Name, st.Kind, st.Err)
		default:
			fmt.Fprintf(&b, "  %s (%s): not connected yet\n", st.Name, st.Kind)
		}
		for _, t := range tools {
			if t.Server == st.Name {
				row(t.Command(), t.Description)
			}
		}
		for _, c := range extras {
			if c.Server == st.Name {
				row(c.Command, c.Description)
			}
		}
	}
	if len(status) == 0 {
		fmt.Fprintf(&b, "  none: add servers to %s or ./mcp_servers.json\n", mcpFile)
	}
	// Descriptions, docs and server errors come from skills and servers.
	return textutil.Sanitize(b.String())
}

// userShellOutputCap bounds what a `!` command keeps of each stream.
const userShellOutputCap = 1 << 20

// userShellPipeGrace is how long a `!` command's output is still read after
// bash exits, while background jobs it started hold the pipes.
const userShellPipeGrace = 500 * time.Millisecond

// UserShell runs a `!` command for the user: bash -c in the agent shell's
// current directory, stdin from /dev/null (the REPL owns the terminal), the
// whole process group killed on Ctrl+C (proc.Run). It is the user's own
// command, so it is not sandboxed (the REPL adds it and its output to the
// next turn's context: agent.ShellNote). settle
// (the sandbox's checks, may be nil) runs first: `!git status` must not run
// what a job a command left in the background planted; what it disabled is
// shown before the command's output.
func UserShell(cwd func() string, settle func() []string) func(ctx context.Context, cmd string) (command.Result, error) {
	return func(ctx context.Context, line string) (command.Result, error) {
		var notes string
		if settle != nil {
			for _, l := range settle() {
				notes += "sandbox: " + textutil.Sanitize(l) + "\n" // paths a command chose
			}
		}
		// A background job (`!server &`) keeps the output pipes open after
		// bash exits; the command is done then, not when the job is.
		r := proc.Run(ctx, proc.Cmd{Argv: []string{"/bin/bash", "-c", line}, Dir: cwd(),
			MaxOutput: userShellOutputCap, WaitDelay: userShellPipeGrace,
			// One pipe for both streams: the person sees an error where
			// the command wrote it, not after all of its stdout.
			Combined: true})
		return userShellResult(r, notes+r.Stdout)
	}
}

// userShellResult is the result of a person's `!` command: interrupted
// when cancelled, an error when bash could not start.
func userShellResult(r proc.Result, stdout string) (command.Result, error) {
	res := command.Result{Stdout: stdout, Stderr: r.Stderr, ExitCode: r.ExitCode}
	switch {
	case r.Canceled:
		res.ExitCode = command.Interrupted
	case r.StartErr != nil:
		return res, fmt.Errorf("start bash: %w", r.StartErr)
	}
	return res, nil
}

// UserTerminal is UserShell on a terminal of its own (the REPL's bash mode
// on a terminal): the command reads t.In as its keys and writes to t.Out as
// it goes (proc.RunTerminal); the result's Stdout is what it wrote
// (capped), for the next turn's context. The sandbox's notes from settle are
// written to t.Out first.
func UserTerminal(cwd func() string, settle func() []string) func(ctx context.Context, cmd string, t proc.Terminal) (command.Result, error) {
	return func(ctx context.Context, line string, t proc.Terminal) (command.Result, error) {
		if settle != nil && t.Out != nil {
			for _, l := range settle() {
				_, _ = io.WriteString(t.Out, "sandbox: "+textutil.Sanitize(l)+"\r\n")
			}
		}
		r := proc.RunTerminal(ctx, proc.Cmd{Argv: []string{"/bin/bash", "-c", line}, Dir: cwd(),
			MaxOutput: userShellOutputCap, WaitDelay: userShellPipeGrace}, t)
		return userShellResult(r, r.Stdout)
	}
}
