package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/repl"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// HistoryFile is the REPL's prompt history inside $SYNAPSE_HOME.
const HistoryFile = "prompt_history.jsonl"

// ChatMCPStartTimeout bounds how long the REPL waits for MCP servers before
// its prompt: a slower server keeps connecting in the background, and its
// tools show in command:search and /tools once it answers.
const ChatMCPStartTimeout = 3 * time.Second

// ChatSetup is what an interactive session (synapse / synapse chat) is built from.
type ChatSetup struct {
	Provider, Model string // --provider, --model ("" defers to env and settings)
	ResumeID        string // --resume ID, or "latest" for --continue
	Cwd             string

	In  io.Reader
	Out io.Writer
	// TTY: In and Out are one terminal, already in raw mode (the caller
	// restores it). Otherwise input is read line by line, as from a pipe.
	TTY bool
	// RenderTTY: Out is a terminal (in-place status lines, markdown).
	RenderTTY bool
	// Color enables colours (false when NO_COLOR is set or Out is no terminal).
	Color         bool
	Width, Height int
	Version       string
}

// Chat is a ready interactive session. Run it with Chat.REPL.Run, then Close it.
type Chat struct {
	REPL     *repl.REPL
	Renderer *render.Renderer
	// Agent is the runner, its sandbox manager and extensions.
	*Agent
}

// NewChat builds the interactive agent: renderer and event sink, the agent
// (NewAgent: a missing key or a broken settings.json fails before anything
// starts) whose sandbox-blocked commands ask the user through the REPL, and
// the REPL, whose banner shows the sandbox warnings and the extensions'
// start-up report.
func (a *App) NewChat(ctx context.Context, s ChatSetup) (*Chat, error) {
	cwd := s.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("cannot find the working directory: %w", err)
		}
	}
	rend := render.New(render.Options{
		Out: s.Out, TTY: s.RenderTTY, Color: s.Color, Width: s.Width, Height: s.Height,
		MaxRecentTools: a.Config.MaxRecentTools,
	})
	sink := repl.NewSink(rend)
	warn := func(err error) {
		if err != nil {
			sink.Handle(agent.Event{Kind: agent.Warning, Err: err})
		}
	}

	// The REPL is built last (it needs the runner); blocked commands can only
	// happen during a turn, after it exists.
	asker := &permissionAsker{}
	g, err := a.NewAgent(ctx, AgentSetup{
		Provider: s.Provider, Model: s.Model, Cwd: cwd,
		Persist: true, ResumeID: s.ResumeID,
		OnEvent: sink.Handle, Warn: warn, Approver: asker,
		Extensions: ExtensionOptions{StartTimeout: ChatMCPStartTimeout, ClientVersion: s.Version},
	})
	if err != nil {
		return nil, err
	}
	mgr, ext := g.Sandbox, g.Extensions
	r, err := repl.New(repl.Options{
		In: s.In, Out: s.Out, TTY: s.TTY, Width: s.Width,
		Renderer:    rend,
		Sink:        sink,
		Agent:       g.Runner,
		Sessions:    a.SessionStore(warn),
		HistoryPath: filepath.Join(a.Config.Home, HistoryFile),
		Shell:       userShell(mgr.Cwd),
		SwitchModel: g.SwitchModel,
		Version:     s.Version,
		Cwd:         cwd,
		SandboxSummary: func() string {
			return sandboxSummary(mgr)
		},
		SandboxStatus: func() string {
			return strings.TrimPrefix(mgr.Status().String(), "Sandbox: ")
		},
		ToolsText:     func() string { return toolsText(mgr, ext, a.Config.MCPServersPath()) },
		ContextWindow: llm.ContextWindow,
		Notices:       g.Notices(),
	})
	if err != nil {
		_ = g.Close()
		return nil, err
	}
	asker.set(r)
	return &Chat{REPL: r, Renderer: rend, Agent: g}, nil
}

// permissionAsker is the Bash tool's Approver: it asks through the REPL's
// permission prompt. The tool itself grants exactly the blocked resource
// and retries, or tells the model the user denied it.
type permissionAsker struct {
	mu sync.Mutex
	r  *repl.REPL
}

func (p *permissionAsker) set(r *repl.REPL) {
	p.mu.Lock()
	p.r = r
	p.mu.Unlock()
}

// Approve implements tool.Approver.
func (p *permissionAsker) Approve(ctx context.Context, req tool.ApprovalRequest) tool.Decision {
	p.mu.Lock()
	r := p.r
	p.mu.Unlock()
	if r == nil {
		return tool.Deny
	}
	d := r.AskPermission(ctx, repl.PermissionRequest{Command: req.Command, Resource: req.Resource, Reason: req.Reason})
	return toolDecision(d)
}

// toolDecision maps the REPL's answer onto the tool's.
func toolDecision(d repl.Decision) tool.Decision {
	switch d {
	case repl.AllowOnce:
		return tool.Once
	case repl.AllowSession:
		return tool.Session
	case repl.AllowPermanent:
		return tool.Permanent
	}
	return tool.Deny
}

// sandboxSummary is the banner's one-line sandbox state.
func sandboxSummary(m *sandbox.Manager) string {
	if !m.Enabled() {
		if len(m.Warnings()) > 0 {
			return "OFF (see the warning below; /sandbox explains)"
		}
		return "OFF (/sandbox explains)"
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
	b.WriteString("             skill:load|list|info|import|rollback|delete\n")
	var kinds []string
	for _, k := range subagent.Kinds() {
		kinds = append(kinds, "task:"+k.Name)
	}
	sort.Strings(kinds)
	fmt.Fprintf(&b, "Sub-agents:  %s\n", strings.Join(kinds, ", "))

	row := func(cmd, desc string) {
		if desc = skills.OneLine(desc, 72); desc != "" {
			fmt.Fprintf(&b, "    %-32s %s\n", cmd, desc)
		} else {
			fmt.Fprintf(&b, "    %s\n", cmd)
		}
	}
	all := ext.Index.Skills()
	fmt.Fprintf(&b, "\nExtensions: skills (%d installed; skill:load <name> shows a skill's instructions)\n", len(all))
	for _, s := range all {
		fmt.Fprintf(&b, "  %s", s.Name)
		if d := skills.OneLine(s.Description, 72); d != "" {
			fmt.Fprintf(&b, ": %s", d)
		}
		b.WriteString("\n")
		for _, sc := range s.Scripts {
			row("skill:"+s.Name+":"+sc.Name, sc.Doc())
		}
	}

	status := ext.MCP.Status()
	fmt.Fprintf(&b, "\nExtensions: MCP servers (%d configured)\n", len(status))
	tools := ext.MCP.Tools()
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

// userShell runs a `!` command for the user: bash -c in the agent shell's
// current directory, stdin from /dev/null (the REPL owns the terminal), the
// whole process group killed on Ctrl+C. It is the user's own command, so it
// is not sandboxed and never enters the conversation.
func userShell(cwd func() string) func(ctx context.Context, cmd string) (command.Result, error) {
	return func(ctx context.Context, line string) (command.Result, error) {
		c := exec.Command("/bin/bash", "-c", line)
		c.Dir = cwd()
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		// A background job (`!server &`) keeps the output pipes open after
		// bash exits; the command is done then, not when the job is.
		c.WaitDelay = userShellPipeGrace
		stdout, stderr := &capped{max: userShellOutputCap}, &capped{max: userShellOutputCap}
		c.Stdout, c.Stderr = stdout, stderr
		if err := c.Start(); err != nil {
			return command.Result{}, fmt.Errorf("start bash: %w", err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			err = <-done
		}
		res := command.Result{Stdout: stdout.String(), Stderr: stderr.String()}
		var ee *exec.ExitError
		switch {
		case ctx.Err() != nil:
			res.ExitCode = command.Interrupted
		case err == nil, errors.Is(err, exec.ErrWaitDelay):
		case errors.As(err, &ee):
			res.ExitCode = ee.ExitCode()
			if res.ExitCode < 0 {
				res.ExitCode = 128 + int(syscall.SIGKILL)
			}
		default:
			return res, err
		}
		return res, nil
	}
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	switch {
	case room >= len(p):
		c.buf.Write(p)
	case room > 0:
		c.buf.Write(p[:room])
		c.dropped += len(p) - room
	default:
		c.dropped += len(p)
	}
	return len(p), nil
}

func (c *capped) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return fmt.Sprintf("%s\n… (%d more bytes not shown)\n", c.buf.String(), c.dropped)
}
