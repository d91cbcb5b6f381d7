package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/sandbox"
)

// Wrapper turns a command's argv into the argv that runs it inside the sandbox
// (for example a bubblewrap command line) with the session's policy. nil means
// no sandbox (unit tests only; the app always wires the real one).
type Wrapper func(argv []string, cwd string) ([]string, error)

// RunOptions control how a skill script runs.
type RunOptions struct {
	Wrap Wrapper
	// Env is the script's base environment: the app passes the sandbox
	// manager's Env(). nil means the process environment without the agent's
	// provider credentials (sandbox.ProviderCredentials).
	Env       []string
	Timeout   time.Duration // 0 means no limit beyond ctx
	MaxOutput int           // bytes kept per stream; 0 means 1 MiB
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
		argv, err = opts.Wrap(argv, cwd)
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
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = cwd
	env := opts.Env
	if env == nil {
		env = sandbox.ScrubEnv(os.Environ())
	}
	cmd.Env = append(append([]string(nil), env...), "SYNAPSE_SKILL_DIR="+skillDir)
	stdout, stderr := &capped{max: max}, &capped{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err = cmd.Run()
	res := command.Result{Stdout: stdout.String(), Stderr: stderr.String(), Cwd: cwd}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.ExitCode = TimedOut
		res.Stderr += fmt.Sprintf("\nskill script %s timed out after %s and was killed", sc.Name, opts.Timeout)
	case ctx.Err() != nil:
		res.ExitCode = command.Interrupted
		res.Stderr += "\nskill script interrupted"
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(exitErr.Sys().(syscall.WaitStatus).Signal())
		}
	default:
		res.ExitCode = 127
		res.Stderr += fmt.Sprintf("cannot start %s: %v (is the interpreter installed?)", argv[0], err)
	}
	return res
}

// capped keeps the first max bytes written and counts the rest.
type capped struct {
	buf     bytes.Buffer
	max     int
	dropped int
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room >= len(p) {
		return c.buf.Write(p)
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += len(p) - max(room, 0)
	return len(p), nil
}

func (c *capped) String() string {
	if c.dropped > 0 {
		return c.buf.String() + fmt.Sprintf("\n[… %d more bytes not shown]", c.dropped)
	}
	return c.buf.String()
}
