package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/jobs"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/proc"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/repl"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

type chatFlags struct {
	model, provider, resume, mode string
	cont, fork                    bool
}

const permissionModeHelp = "permission mode: default (sandboxed, asks about escapes), accept-edits (grants inside the project without asking), plan (read-only; the model proposes a plan) or ask (whatever may write outside the scratch list, the session's /tmp, asks first)"

func newChatCmd(stdio IO) *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Start the interactive agent (default)",
		Long: "Start the interactive agent: type a task, watch it work, Ctrl+C to interrupt it.\n" +
			"Type /help inside for the commands. With stdin not a terminal, prompts are read\n" +
			"one per line (plain output, no line editing).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runChat(cmd.Context(), stdio, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to use (default: SYNAPSE_MODEL or settings.json)")
	fl.StringVar(&f.provider, "provider", "", "provider: anthropic, openai, gemini, bedrock or vertex (default: SYNAPSE_PROVIDER or settings.json)")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id (or unique id prefix)")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of this project (the git repository you are in, else this directory)")
	fl.BoolVar(&f.fork, "fork-session", false, forkSessionHelp)
	fl.StringVar(&f.mode, "permission-mode", string(tool.ModeDefault), permissionModeHelp+"; Shift+Tab cycles in the REPL")
	return badUsageExits2(cmd)
}

func runChat(ctx context.Context, stdio IO, f chatFlags) error {
	resume, err := resumeID(f.cont, f.resume, f.fork)
	if err != nil {
		return err
	}
	mode, err := tool.ParseMode(f.mode)
	if err != nil {
		return exitCode(2, err)
	}
	getenv := getenvOr(stdio.Getenv)
	a, cwd, err := newApp(stdio)
	if err != nil {
		return err
	}
	if resume, err = inProject(a, cwd, resume, nil); err != nil {
		return err
	}
	busy := forkBusy(a, resume, f.cont && !f.fork)

	in, inTTY := stdio.In.(*os.File)
	inTTY = inTTY && term.IsTerminal(int(in.Fd()))
	outTTY := isTTY(stdio.Out)
	tty := inTTY && outTTY
	width, height := termSize(stdio.Out)

	if tty {
		// The project's MCP files start servers on the host: ask once per
		// file content, before anything starts (still in cooked mode).
		for _, p := range a.ProjectMCP(cwd) {
			fmt.Fprint(stdio.Out, p.Describe())
			ok, err := askYesNo(stdio.In, stdio.Out, "Approve this file for "+cwd+"? [y/N] ")
			if err != nil {
				return exitCode(1, err)
			}
			if ok {
				if err := a.ApproveProjectMCP(cwd, p); err != nil {
					return exitCode(1, err)
				}
			}
		}
	}

	if tty {
		// Restored at exit with the raw mode below (or here on failure).
		if state, err := term.GetState(int(in.Fd())); err == nil {
			defer func() { _ = term.Restore(int(in.Fd()), state) }()
		}
		keepEnterKey(int(in.Fd()))
	}

	// Everything that can fail (a missing key, a broken settings.json, an
	// unknown session) fails here, before the terminal changes mode.
	chat, err := newChat(ctx, a, chatSetup{
		Provider: f.provider, Model: f.model, ResumeID: resume, Fork: f.fork || busy != nil, Cwd: cwd,
		In: stdio.In, Out: stdio.Out, TTY: tty, RenderTTY: outTTY,
		Color: outTTY && getenv("NO_COLOR") == "", Width: width, Height: height,
		Version: Version, Mode: mode, InTmux: getenv("TMUX") != "",
		Size: liveSize(stdio.Out, outTTY),
	})
	if err != nil {
		return exitCode(1, lockedHint(err))
	}
	if busy != nil {
		forkNotice(stdio.Err, busy, chat.Runner.SessionID())
	}

	if tty {
		// Raw mode: keys arrive one by one and Ctrl+C is a byte the REPL
		// reads (cancel the turn, clear the line), not a signal.
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			_ = chat.Close()
			return exitCode(1, fmt.Errorf("cannot put the terminal in raw mode: %w; run with stdin from a pipe for plain mode", err))
		}
		defer func() { _ = term.Restore(int(in.Fd()), state) }()
	}
	if outTTY {
		stop := watchResize(stdio.Out.(*os.File), chat.REPL.SetSize)
		defer stop()
	}

	code := chat.REPL.Run(ctx)
	if err := chat.Close(); err != nil {
		chat.Renderer.Notice("warning: " + err.Error())
	}
	if code != 0 {
		return exitCode(code, nil)
	}
	return nil
}

// chatSetup is what an interactive session (synapse / synapse chat) is built from.
type chatSetup struct {
	Provider, Model string // --provider, --model ("" defers to env and settings)
	ResumeID        string // --resume ID, or "latest" for --continue
	Fork            bool   // continue ResumeID in a new session with a copy of its history
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
	Mode          tool.Mode // the permission mode to start in ("": default)
	InTmux        bool      // the terminal is a tmux pane ($TMUX is set)
	// Size reads the terminal's size now (nil: not a terminal).
	Size func() (cols, rows int, ok bool)
}

// liveSize reads out's terminal size when out is one: the renderer checks
// it before each redraw, so a redraw between a resize and its SIGWINCH
// is laid out for the size the terminal has.
func liveSize(out io.Writer, tty bool) func() (int, int, bool) {
	f, ok := out.(*os.File)
	if !tty || !ok {
		return nil
	}
	return func() (int, int, bool) {
		w, h, err := term.GetSize(int(f.Fd()))
		return w, h, err == nil
	}
}

// expandKey is the key the fold lines name: Ctrl+O, read by the REPL's
// editor on a terminal only.
func expandKey(tty bool) string {
	if tty {
		return "ctrl+o"
	}
	return ""
}

// chat is a ready interactive session. Run it with chat.REPL.Run, then Close it.
type chat struct {
	REPL     *repl.REPL
	Renderer *render.Renderer
	// Agent is the runner, its sandbox manager and extensions.
	*app.Agent
}

// newChat wires the UI to an agent: renderer and view, the agent (app's
// NewAgent: a missing key or a broken settings.json fails before anything
// starts) whose sandbox-blocked commands ask the user through the REPL, and
// the REPL, whose banner shows the sandbox warnings and the extensions'
// start-up report.
func newChat(ctx context.Context, a *app.App, s chatSetup) (*chat, error) {
	cwd := s.Cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("cannot find the working directory: %w", err)
		}
	}
	rend := render.New(render.Options{
		Out: s.Out, TTY: s.RenderTTY, Color: s.Color, Width: s.Width, Height: s.Height,
		MaxRecentTools: a.Config.MaxRecentTools, ShowThinking: a.Config.ShowThinking,
		Animate: liveInterval(s.RenderTTY), ExpandKey: expandKey(s.TTY), Size: s.Size,
	})
	v := view.New(rend)
	warn := func(err error) {
		if err != nil {
			v.Handle(agent.Event{Kind: agent.Warning, Err: err})
		}
	}

	// The permission gate and its prompt come first: the agent takes the
	// gate as its approver and the REPL, built last (it needs the runner),
	// feeds the prompt the keys.
	asker := repl.NewAsker(rend)
	perm := tool.NewPermissions(asker, tool.ModeDefault, tool.ProjectRoot(cwd))
	g, err := a.NewAgent(ctx, app.AgentSetup{
		Provider: s.Provider, Model: s.Model, Cwd: cwd,
		Persist: true, ResumeID: s.ResumeID, Fork: s.Fork,
		OnEvent: v.Handle, Warn: warn, Approver: perm,
		Extensions: app.ExtensionOptions{StartTimeout: app.ChatMCPStartTimeout, ClientVersion: s.Version,
			Import: app.AskImports(perm)},
	})
	if err != nil {
		return nil, err
	}
	mgr := g.Sandbox
	perm.SetSwitch(g.ModeSwitch())
	if err := perm.SetMode(cmp.Or(s.Mode, tool.ModeDefault)); err != nil {
		_ = g.Close()
		return nil, fmt.Errorf("--permission-mode %s: %w", s.Mode, err)
	}
	r, err := repl.New(repl.Options{
		Gate: perm, Asker: asker,
		In: s.In, Out: s.Out, TTY: s.TTY, Width: s.Width, Height: s.Height, Color: s.Color,
		InTmux:         s.InTmux,
		Renderer:       rend,
		View:           v,
		Agent:          g.Runner,
		Sessions:       a.SessionStore(warn),
		HistoryPath:    filepath.Join(a.Config.Home, app.HistoryFile),
		Shell:          app.UserShell(mgr.Cwd, mgr.Settle),
		ShellTerminal:  userTerminal(app.UserTerminal(mgr.Cwd, mgr.Settle)),
		SwitchModel:    g.SwitchModel,
		Version:        s.Version,
		Cwd:            cwd,
		SandboxSummary: g.SandboxSummary,
		SandboxStatus: func() string {
			return strings.TrimPrefix(mgr.Status().String(), "Sandbox: ")
		},
		ToolsText: func() string { return a.ToolsText(g) },
		Jobs:      replJobs{g.Jobs},
		// /skill:… is typed by the user: a clone it asks for needs no
		// approval and may use the user's credentials.
		SkillCommand: func(ctx context.Context, line string) command.Result {
			return g.Extensions.Skills.Run(skills.UserTyped(ctx), line)
		},
		AutoEnhance:    g.AutoEnhance,
		SetAutoEnhance: g.SetAutoEnhance,
		ContextWindow:  llm.ContextWindow,
		Notices:        g.Notices(),
	})
	if err != nil {
		_ = g.Close()
		return nil, err
	}
	return &chat{REPL: r, Renderer: rend, Agent: g}, nil
}

// watchResize passes the terminal's new size to set on every SIGWINCH.
func watchResize(out *os.File, set func(width, height int)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				if w, h, err := term.GetSize(int(out.Fd())); err == nil {
					set(w, h)
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// liveInterval is how often a terminal's live area (spinners, timers) is
// redrawn: every 100 ms on a TTY, never otherwise.
func liveInterval(tty bool) time.Duration {
	if !tty {
		return 0
	}
	return 100 * time.Millisecond
}

// replJobs shows the agent's job table to the REPL.
type replJobs struct{ t *jobs.Table }

func (j replJobs) Background() (int, error) {
	info, err := j.t.Background()
	return info.ID, err
}

func (j replJobs) Text() string { return agentsh.JobsText(j.t.List()) }

func (j replJobs) Running() int { return j.t.Running() }

// userTerminal adapts app's terminal runner to the REPL's bash mode.
func userTerminal(run func(context.Context, string, proc.Terminal) (command.Result, error)) func(context.Context, string, repl.Terminal) (command.Result, error) {
	return func(ctx context.Context, cmd string, t repl.Terminal) (command.Result, error) {
		return run(ctx, cmd, proc.Terminal{Cols: t.Cols, Rows: t.Rows, In: t.In, Out: t.Out})
	}
}
