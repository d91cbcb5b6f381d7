package skills

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/proc"
	"github.com/synapse-agent/synapse/internal/sandbox"
)

// Wrapper turns a command's argv into the argv that runs it inside the sandbox
// (for example a bubblewrap command line) with the session's policy; skillDir
// is the script's skill folder, which the process must be able to read. nil
// means no sandbox (unit tests only; the app always wires the real one).
type Wrapper func(argv []string, cwd, skillDir string) ([]string, error)

// RunOptions control how a skill script runs.
type RunOptions struct {
	Wrap Wrapper
	// Env is the script's base environment: the app passes the sandbox
	// manager's Env(). nil means the process environment without the agent's
	// provider credentials (sandbox.ProviderCredentials).
	Env       []string
	Timeout   time.Duration // 0 means no limit beyond ctx
	MaxOutput int           // bytes kept per stream; 0 means 1 MiB
	// After, when set, runs once the script has ended and returns lines
	// for its stderr: the app runs the sandbox's checks (a repository the
	// script created that host git would run code from is disabled).
	After func() []string
}

// TimedOut is the exit status of a script killed by its timeout (as timeout(1)).
const TimedOut = 124

// Run executes the script with args in cwd: the interpreter and every argument
// are separate argv elements, stdin is empty, and the whole process group is
// killed on timeout or cancellation.
func (sc Script) Run(ctx context.Context, skillDir string, args []string, cwd string, opts RunOptions) command.Result {
	argv, err := sc.Argv(args)
	if err != nil {
		return command.Fail(err.Error())
	}
	if opts.Wrap != nil {
		argv, err = opts.Wrap(argv, cwd, skillDir)
		if err != nil {
			return command.Result{Stderr: fmt.Sprintf("cannot run %s in the sandbox: %v", sc.Name, err), ExitCode: 1, Blocked: true, BlockedReason: err.Error()}
		}
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	max := opts.MaxOutput
	if max <= 0 {
		max = 1 << 20
	}
	env := opts.Env
	if env == nil {
		env = sandbox.ScrubEnv(os.Environ())
	}
	r := proc.Run(ctx, proc.Cmd{Argv: argv, Dir: cwd, Env: append(append([]string(nil), env...), "SYNAPSE_SKILL_DIR="+skillDir),
		MaxOutput: max})
	res := command.Result{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, Cwd: cwd}
	switch {
	case r.Canceled && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.ExitCode = TimedOut
		res.Stderr += fmt.Sprintf("\nskill script %s timed out after %s and was killed", sc.Name, opts.Timeout)
	case r.Canceled:
		res.ExitCode = command.Interrupted
		res.Stderr += "\nskill script interrupted"
	case r.StartErr != nil:
		res.ExitCode = 127
		res.Stderr += fmt.Sprintf("cannot start %s: %v (is the interpreter installed?)", argv[0], r.StartErr)
	}
	if opts.After != nil {
		for _, l := range opts.After() {
			res.Stderr += "sandbox: " + l + "\n"
		}
	}
	return res
}
