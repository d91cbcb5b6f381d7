// Package proc is the one way Synapse runs a short-lived child process on
// the host: in its own process group (a cancel or timeout kills the whole
// group, grandchildren included), with a bound on how long its pipes may
// outlive it (a background job holding stdout does not hang the caller),
// each output stream capped with one truncation note, and one mapping of
// how it ended to an exit status. It is a leaf: it imports nothing of ours.
//
// Long-lived children with their own protocol (the persistent shell, stdio
// MCP servers driven by the SDK's transport, PTY engines) are started by
// their packages, which own their lifecycle.
package proc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// Defaults for Cmd's zero fields.
const (
	DefaultMaxOutput = 1 << 20
	DefaultWaitDelay = 2 * time.Second
)

// Cmd describes one child process.
type Cmd struct {
	Argv  []string
	Dir   string
	Env   []string  // nil: the parent's environment (os/exec's default)
	Stdin io.Reader // nil: /dev/null
	// MaxOutput is how many bytes of each stream are kept (0: DefaultMaxOutput).
	MaxOutput int
	// WaitDelay bounds how long the pipes are still read after the process
	// exits or is killed (0: DefaultWaitDelay).
	WaitDelay time.Duration
	// Combined sends stderr into the same pipe as stdout, so Result.Stdout
	// holds both in the order they were written (Stderr stays empty): for
	// output shown to a person, where the order matters more than which
	// stream a line came from.
	Combined bool
}

// Result is how a child ended.
type Result struct {
	// Stdout and Stderr are what it wrote, each cut at MaxOutput bytes with
	// a note saying how much more there was.
	Stdout, Stderr string
	// ExitCode is its exit status; 128+N when signal N ended it.
	ExitCode int
	// Canceled: ctx ended before the process did, and its group was killed
	// (ctx.Err() says whether by deadline or cancel).
	Canceled bool
	// StartErr is why it could not start (program not found, bad directory).
	StartErr error
}

// Run starts c and waits for it. A cancel or deadline of ctx kills its
// process group.
func Run(ctx context.Context, c Cmd) Result {
	if len(c.Argv) == 0 {
		return Result{ExitCode: 127, StartErr: errors.New("no command given")}
	}
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = c.Dir, c.Env, c.Stdin
	stdout, stderr := &Capped{Max: max}, &Capped{Max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if c.Combined {
		// The same writer for both makes os/exec give the child one pipe.
		cmd.Stderr = stdout
	}
	// Its own session, and so its own process group for the kill below,
	// without the terminal: a sandbox launcher it runs (Landlock's) starts a
	// session of its own, which a process-group leader may not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil && cmd.ProcessState != nil:
		res.Canceled = true
		res.ExitCode = ExitStatus(cmd.ProcessState)
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		// Exited (a background job may still hold the pipes: not ours to wait for).
	case errors.As(err, &exitErr):
		res.ExitCode = ExitStatus(exitErr.ProcessState)
	default:
		res.ExitCode, res.StartErr = 127, err
		res.Canceled = ctx.Err() != nil
	}
	return res
}

// ExitStatus maps how a process ended to one exit status: its exit code,
// or 128+N when signal N killed it (as a shell reports it).
func ExitStatus(ps interface{ Sys() any }) int {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return 1
	case ws.Signaled():
		return 128 + int(ws.Signal())
	default:
		return ws.ExitStatus()
	}
}

// Capped is an io.Writer that keeps the first Max bytes written and counts
// the rest; String adds one note for what was dropped.
type Capped struct {
	Max     int
	buf     bytes.Buffer
	dropped int
}

// Write keeps what fits and never fails, so the child never blocks on a
// full pipe.
func (c *Capped) Write(p []byte) (int, error) {
	room := c.Max - c.buf.Len()
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

// String is what was kept, followed by the truncation note when anything
// was dropped.
func (c *Capped) String() string {
	if c.dropped == 0 {
		return c.buf.String()
	}
	return c.buf.String() + "\n" + textutil.CutNote(int64(c.dropped))
}
