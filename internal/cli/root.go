// Package cli holds the cobra commands. Each command resolves configuration
// through internal/app and renders what the core emits; no logic lives here.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=…".
var Version = "0.1.0-dev"

// IO is the process's standard streams, injectable for tests.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
}

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode returns an error that makes Main exit with code; err (may be nil) is printed.
func exitCode(code int, err error) error { return &exitError{code: code, err: err} }

// Main runs the CLI with args (args[0] is the program name) and returns the exit code.
func Main(args []string) int {
	// The Landlock launcher re-executes this binary: restrict, then exec the
	// sandboxed program, before anything else starts.
	if len(args) > 1 && args[1] == sandbox.LauncherCommand {
		return sandbox.Launch(args[2:])
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Before anything starts a process.
	if err := sealInheritedFDs(); err != nil {
		fmt.Fprintf(os.Stderr, "synapse: cannot mark inherited file descriptors close-on-exec (%v); refusing to run, since sandboxed commands could use them\n", err)
		return 1
	}
	// The first signal cancels the work; after it the default action is
	// restored, so a second Ctrl+C ends the process even if shutdown hangs.
	go func() { <-ctx.Done(); stop() }()
	return Run(ctx, args[1:], IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv})
}

// Run executes the command line and returns the exit code.
func Run(ctx context.Context, args []string, stdio IO) int {
	root := newRootCmd(stdio)
	if headlessArgs(args) {
		// Claude Code's headless command lines: a flag synapse does not
		// know is noted and skipped, never bad usage (its set grows).
		if target, _, err := root.Find(args); err == nil && (target == root || target.Name() == "run") {
			target.FParseErrWhitelist.UnknownFlags = true
			noteFlags(stdio.Err, target.Flags(), args)
		}
	}
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitCode(2, fmt.Errorf("%w; run '%s --help' for usage", err, c.CommandPath()))
	})
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if strings.HasPrefix(err.Error(), "unknown command") {
		// Cobra has no typed error for this; it is bad usage all the same.
		fmt.Fprintf(stdio.Err, "synapse: %s; run 'synapse --help' for the commands\n", textutil.Sanitize(err.Error()))
		return 2
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			// Errors carry text from outside (a provider's message, a
			// server's reply): it must not drive the user's terminal.
			fmt.Fprintln(stdio.Err, "synapse:", textutil.Sanitize(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintln(stdio.Err, "synapse:", textutil.Sanitize(err.Error()))
	return 1
}

func newRootCmd(stdio IO) *cobra.Command {
	var f runFlags
	root := &cobra.Command{
		Use:   "synapse",
		Short: "A terminal AI agent whose one tool is a shell",
		Long: "A terminal AI agent whose one tool is a shell.\n\n" +
			"With no command it starts the REPL (synapse chat). With -p/--print, --output-format\n" +
			"or --input-format it runs headless, as synapse run does, and reads Claude Code's\n" +
			"headless flags: the Claude Agent SDK can start synapse as its executable\n" +
			"(docs/headless.md).",
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			if f.claude.print || fl.Changed("output-format") || fl.Changed("input-format") {
				return runTask(cmd, stdio, f, args)
			}
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			var headlessOnly []string
			fl.Visit(func(fl *pflag.Flag) {
				switch fl.Name {
				case "model", "provider", "resume", "continue", "fork-session", "permission-mode":
				default:
					headlessOnly = append(headlessOnly, "--"+fl.Name)
				}
			})
			if len(headlessOnly) > 0 {
				return exitCode(2, fmt.Errorf("%s: only in headless mode (add -p, or use synapse run)", strings.Join(headlessOnly, ", ")))
			}
			return runChat(cmd.Context(), stdio, chatFlags{model: f.model, provider: f.provider, resume: f.resume,
				mode: f.permissionMode, cont: f.cont, fork: f.fork})
		},
	}
	addRunFlags(root.Flags(), &f)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exitCode(2, fmt.Errorf("%w; run '%s --help' for usage", err, c.CommandPath()))
	})
	root.AddCommand(
		newChatCmd(stdio),
		newRunCmd(stdio),
		newACPCmd(stdio),
		newExecCmd(stdio),
		newServeCmd(stdio),
		newSandboxCmd(stdio),
		newMCPCmd(stdio),
		newSessionsCmd(stdio),
		newDoctorCmd(stdio),
		newVersionCmd(stdio),
	)
	return root
}

func newVersionCmd(stdio IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(stdio.Out, "synapse", Version)
			return nil
		},
	}
}

// forkSessionHelp is the --fork-session flag's help.
const forkSessionHelp = "with --resume or --continue: continue in a new session with a copy of that session's history, leaving it as it is"

// resumeID turns --continue/--resume into the session to resume ("" for a
// new one, "latest" for --continue).
func resumeID(cont bool, id string, fork bool) (string, error) {
	switch {
	case cont && id != "":
		return "", exitCode(2, errors.New("--continue and --resume cannot be used together: pick one"))
	case fork && !cont && id == "":
		return "", exitCode(2, errors.New("--fork-session forks the session of --resume ID or --continue: add one"))
	case cont:
		return "latest", nil
	}
	return id, nil
}

// forkBusy says whether --continue forks: when the session it would
// continue is open in another process, it returns that *LockedError and
// the caller forks (the user asked for "the latest", not that one). An
// explicit --resume ID is refused instead (lockedHint), as is a session
// another process takes between this check and the open.
func forkBusy(a *app.App, id string, cont bool) error {
	var locked *session.LockedError
	if cont && errors.As(a.SessionStore(nil).InUse(id), &locked) {
		return locked
	}
	return nil
}

// lockedHint adds what to do to the error of a session open elsewhere.
func lockedHint(err error) error {
	var locked *session.LockedError
	if errors.As(err, &locked) {
		return fmt.Errorf("%w; close it there, or add --fork-session to continue in a new session with a copy of its history", err)
	}
	return err
}

// forkNotice tells stderr that --continue forked, and into which session.
func forkNotice(w io.Writer, busy error, newID string) {
	fmt.Fprintf(w, "synapse: %s; continuing in new session %s with a copy of its history\n", textutil.Sanitize(busy.Error()), newID)
}

// inProject turns "latest" (--continue) into the most recent session of
// the project in cwd: continuing another directory's conversation would run
// its commands in the wrong place. Other ids pass through (an explicit id
// may name any project's session).
func inProject(a *app.App, cwd, id string, warn func(error)) (string, error) {
	if id != session.Latest {
		return id, nil
	}
	entries, err := a.SessionStore(warn).ListProject(cwd)
	if err != nil {
		return "", exitCode(1, err)
	}
	// An empty session (its history file gone) has nothing to continue.
	for _, e := range entries {
		if !e.Empty() {
			return e.ID, nil
		}
	}
	return "", exitCode(1, fmt.Errorf("no saved session in project %s to continue: `synapse sessions --all` lists every project's sessions, `--resume ID` resumes one of them", textutil.Sanitize(fsutil.ProjectRoot(cwd))))
}

// newApp resolves the configuration and the working directory once, for the
// commands that start an agent.
func newApp(stdio IO) (*app.App, string, error) {
	a, err := app.New(stdio.Getenv)
	if err != nil {
		return nil, "", exitCode(1, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "", exitCode(1, fmt.Errorf("cannot find the working directory: %w", err))
	}
	return a, cwd, nil
}
