package proc

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// Terminal gives a child a terminal of its own: a pseudo-terminal of Cols ×
// Rows whose input is In (the person's keys, raw) and whose output goes to
// Out as it comes (and is kept, capped, as the result's Stdout). The child
// is the session leader of that terminal, so Ctrl+C and Ctrl+D typed in In
// reach it as on any terminal (SIGINT to its foreground group, end of
// input), and it sees a terminal (`ls --color=auto` is coloured).
type Terminal struct {
	Cols, Rows int
	In         io.Reader
	Out        io.Writer
}

// RunTerminal is Run with the child on a terminal (c.Stdin and Combined are
// ignored: one terminal carries everything). A cancel of ctx kills the
// child's session; Run's exit mapping applies.
func RunTerminal(ctx context.Context, c Cmd, t Terminal) Result {
	if len(c.Argv) == 0 {
		return Result{ExitCode: 127, StartErr: errors.New("no command given")}
	}
	max := c.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(max1(t.Cols)), Rows: uint16(max1(t.Rows))})
	if err != nil {
		return Result{ExitCode: 127, StartErr: err, Canceled: ctx.Err() != nil}
	}
	defer f.Close()
	out := &Capped{Max: max}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the child's output: to the person and kept
		defer wg.Done()
		w := io.Writer(out)
		if t.Out != nil {
			w = io.MultiWriter(t.Out, out)
		}
		_, _ = io.Copy(w, f) // ends with EIO once the child's side is closed
	}()
	if t.In != nil {
		go func() { _, _ = io.Copy(f, t.In) }() // ends when In does (the caller closes it)
	}
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	werr := cmd.Wait()
	stop()
	copied := make(chan struct{})
	go func() { wg.Wait(); close(copied) }()
	grace := c.WaitDelay
	if grace <= 0 {
		grace = DefaultWaitDelay
	}
	select {
	case <-copied:
	case <-time.After(grace): // a background job still holds the terminal: not ours to wait for
		_ = f.Close()
		<-copied
	}
	res := Result{Stdout: out.String()}
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.Canceled = true
		res.ExitCode = ExitStatus(cmd.ProcessState)
	case werr == nil:
	case errors.As(werr, &exitErr):
		res.ExitCode = ExitStatus(exitErr.ProcessState)
	default:
		res.ExitCode, res.StartErr = 127, werr
	}
	return res
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
