package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Session statuses.
const (
	StatusRunning = "running"
	StatusEnded   = "ended"
)

// Why a session ended.
const (
	EndExited   = "exited"          // the program exited by itself
	EndStopped  = "stopped"         // the user pressed Stop
	EndHardTTL  = "hard_ttl"        // UI_SHELL_HARD_TTL_SECONDS elapsed
	EndIdle     = "idle"            // no input for UI_SHELL_IDLE_TTL_SECONDS
	EndShutdown = "server_shutdown" // synapse serve is stopping
)

// Buffer sizes: the ring is all the output memory a session has; the window
// is how much a client may hold unacknowledged.
const (
	ringSize   = 512 << 10
	sendWindow = 256 << 10
	frameMax   = 32 << 10
	// drainWait bounds how long the end of a session waits for the last
	// output to reach the ring when the attached client is not reading.
	drainWait = 5 * time.Second
)

// SessionState is the session as clients see it (the state frame, the API).
type SessionState struct {
	ID             string     `json:"id"`
	Engine         string     `json:"engine"`
	Label          string     `json:"label"`
	Command        string     `json:"command"`
	Status         string     `json:"status"`
	SandboxStatus  string     `json:"sandbox_status"`
	SandboxMessage string     `json:"sandbox_message"`
	SessionDir     string     `json:"session_dir"`
	Cols           int        `json:"cols"`
	Rows           int        `json:"rows"`
	StartedAt      time.Time  `json:"started_at"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
	ExitCode       *int       `json:"exit_code,omitempty"`
	EndReason      string     `json:"end_reason,omitempty"`
	// EndSummary says in words how it ended ("stopped by you"), for people;
	// EndReason and ExitCode are for programs.
	EndSummary string `json:"end_summary,omitempty"`
}

// Session is one engine program running in a PTY.
type Session struct {
	id      string
	engine  Engine
	dir     string
	sandbox ProbeResult
	started time.Time
	grace   time.Duration
	limits  Limits

	cmd      *exec.Cmd
	ptmx     *os.File
	nonblock bool // ptmx is on Go's poller (see pollable)
	pgid     int
	out      *outBuf

	ctx    context.Context // ends when the session has ended
	cancel context.CancelFunc
	done   chan struct{} // closed once the state is ended
	onEnd  func(*Session)

	inputMu sync.Mutex // serialises writes to the PTY

	mu        sync.Mutex
	cols      int
	rows      int
	endReason string // set by the first stop request or at exit
	endedAt   time.Time
	exitCode  *int
	summary   string // EndSummary, set at exit
	lastInput time.Time
	hardTimer *time.Timer
	idleTimer *time.Timer
}

// sessionSpec is everything needed to start a session.
type sessionSpec struct {
	id       string
	engine   Engine
	dir      string
	argv     []string
	env      []string
	cols     int
	rows     int
	sandbox  ProbeResult
	limits   Limits
	onEnd    func(*Session)
	now      time.Time
	announce string // the handshake line written before any program output
}

func startSession(spec sessionSpec) (*Session, error) {
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: uint16(spec.rows), Cols: uint16(spec.cols)})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.engine.Command, err)
	}
	nonblock := false
	if p, err := pollable(ptmx); err == nil {
		ptmx, nonblock = p, true
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Session{
		id:        spec.id,
		engine:    spec.engine,
		dir:       spec.dir,
		sandbox:   spec.sandbox,
		started:   spec.now,
		grace:     spec.limits.StopGrace,
		limits:    spec.limits,
		cmd:       cmd,
		ptmx:      ptmx,
		nonblock:  nonblock,
		pgid:      cmd.Process.Pid, // pty.Start makes it a session (and group) leader
		out:       newOutBuf(ringSize, sendWindow),
		ctx:       ctx,
		cancel:    cancel,
		done:      make(chan struct{}),
		onEnd:     spec.onEnd,
		cols:      spec.cols,
		rows:      spec.rows,
		lastInput: spec.now,
	}
	// The handshake goes into the stream first, so every client (and every
	// replay) shows a non-blank line even before the program draws anything.
	_ = s.out.Write(ctx, []byte(spec.announce))
	pumpDone := make(chan struct{})
	go s.pump(pumpDone)
	go s.reap(pumpDone)
	if spec.limits.HardTTL > 0 {
		s.hardTimer = time.AfterFunc(spec.limits.HardTTL, func() {
			s.Stop(context.Background(), EndHardTTL)
		})
	}
	if spec.limits.IdleTTL > 0 {
		s.armIdle(spec.limits.IdleTTL)
	}
	return s, nil
}

// pollable returns a non-blocking copy of the PTY master registered with Go's
// poller, and closes f. creack/pty leaves the master in blocking mode, where
// a Read blocked in the kernel survives Close; on the poller, Close ends it.
// Ioctls on the copy go through SyscallConn (File.Fd would make it blocking again).
func pollable(f *os.File) (*os.File, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := raw.Control(func(fd uintptr) { nfd, derr = unix.Dup(int(fd)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	unix.CloseOnExec(nfd)
	if err := unix.SetNonblock(nfd, true); err != nil {
		_ = unix.Close(nfd)
		return nil, err
	}
	_ = f.Close()
	return os.NewFile(uintptr(nfd), "/dev/ptmx"), nil
}

// pump copies PTY output into the ring until the PTY closes.
func (s *Session) pump(done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, frameMax)
	for {
		n, err := s.readPTY(buf)
		if n > 0 {
			if werr := s.out.Write(s.ctx, buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EIO once every holder of the terminal is gone
		}
	}
}

// readPTY reads what the PTY has, waiting only when it has nothing. The
// kernel hands out PTY output about 4 KiB at a time; draining it in one go
// turns a flood into few large frames instead of many small ones.
func (s *Session) readPTY(buf []byte) (int, error) {
	if !s.nonblock {
		return s.ptmx.Read(buf)
	}
	raw, err := s.ptmx.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		for n < len(buf) {
			m, e := unix.Read(int(fd), buf[n:])
			switch {
			case m > 0:
				n += m
			case e == unix.EINTR:
			case e == unix.EAGAIN:
				return n > 0 // nothing yet: let the poller wait
			case e == nil:
				rerr = io.EOF
				return true
			default:
				rerr = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return n, err
	}
	return n, rerr
}

// reap waits for the program, cleans up its process group and ends the session.
func (s *Session) reap(pumpDone <-chan struct{}) {
	_ = s.cmd.Wait()
	// Children the program left behind in its group go with it.
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	select {
	case <-pumpDone:
	case <-time.After(drainWait):
	}
	_ = s.ptmx.Close() // also ends a pump still blocked in Read
	code := exitStatus(s.cmd.ProcessState)
	s.mu.Lock()
	if s.endReason == "" {
		s.endReason = EndExited
	}
	s.exitCode = &code
	s.summary = endSummary(s.endReason, s.cmd.ProcessState, s.limits)
	s.endedAt = time.Now()
	if s.hardTimer != nil {
		s.hardTimer.Stop()
	}
	if s.idleTimer != nil {
		s.idleTimer.Stop()
	}
	summary := s.summary
	s.mu.Unlock()
	// Bookkeeping (the manager frees the slot, applies retention) happens
	// before the page hears of the end and before Done fires: a page that
	// starts the next session as soon as it sees the exit frame must not
	// find the slot still taken.
	if s.onEnd != nil {
		s.onEnd(s)
	}
	s.notice("ended: " + summary)
	s.out.Close()
	close(s.done)
	s.cancel()
}

// endSummary says in words why a session ended, for the page and the
// terminal's last line: no enum names, no 128+signal arithmetic.
func endSummary(reason string, ps *os.ProcessState, l Limits) string {
	switch reason {
	case EndStopped:
		return "stopped by you"
	case EndHardTTL:
		return "stopped after reaching the session time limit (" + humanDuration(l.HardTTL) + ")"
	case EndIdle:
		return "stopped after " + humanDuration(l.IdleTTL) + " with no input"
	case EndShutdown:
		return "stopped because the Synapse server shut down"
	}
	if ps == nil {
		return "the program ended"
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("signal %d", int(ws.Signal()))
		}
		return "the program was killed (" + name + ")"
	}
	if c := ps.ExitCode(); c != 0 {
		return fmt.Sprintf("the program exited with an error (status %d)", c)
	}
	return "the program exited normally"
}

// humanDuration writes d in the largest whole unit: "30 minutes", "1 hour", "90 seconds".
func humanDuration(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d >= time.Second && d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return d.String()
}

// exitStatus is the shell convention: the exit code, or 128+signal.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// Stop ends the program and all its children: hang-up and terminate the
// process group, wait the grace period, then kill it. It returns once the
// session has ended or ctx is done.
func (s *Session) Stop(ctx context.Context, reason string) {
	s.mu.Lock()
	if s.endReason == "" {
		s.endReason = reason
	}
	s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.pgid, syscall.SIGHUP)
	_ = syscall.Kill(-s.pgid, syscall.SIGTERM)
	t := time.NewTimer(s.grace)
	defer t.Stop()
	select {
	case <-s.done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	select {
	case <-s.done:
	case <-ctx.Done():
	}
}

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// State returns a snapshot for clients.
func (s *Session) State() SessionState {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := SessionState{
		ID:             s.id,
		Engine:         s.engine.ID,
		Label:          s.engine.Label,
		Command:        s.engine.Command,
		Status:         StatusRunning,
		SandboxStatus:  s.sandbox.Status,
		SandboxMessage: s.sandbox.Message,
		SessionDir:     s.dir,
		Cols:           s.cols,
		Rows:           s.rows,
		StartedAt:      s.started,
	}
	if s.exitCode != nil {
		st.Status = StatusEnded
		code := *s.exitCode
		st.ExitCode = &code
		ended := s.endedAt
		st.EndedAt = &ended
		st.EndReason = s.endReason
		st.EndSummary = s.summary
	}
	return st
}

// inputPoll is how often a write to a PTY that takes no input looks
// whether its caller has gone.
const inputPoll = 100 * time.Millisecond

// Input writes keystrokes to the program, waiting while the PTY takes no
// more, until ctx ends: a program that reads no input must not pin the
// writer (and the input queued behind it) once the connection that sent it
// is gone.
func (s *Session) Input(ctx context.Context, p []byte) error {
	s.touch()
	s.inputMu.Lock()
	defer s.inputMu.Unlock()
	select {
	case <-s.done:
		return errors.New("the session has ended")
	default:
	}
	if !s.nonblock {
		_, err := s.ptmx.Write(p) // a blocking descriptor: only the end of the session ends this
		return err
	}
	// Only Input writes through the poller (tryInput writes the descriptor
	// directly), so the deadline is ours while inputMu is held.
	defer func() { _ = s.ptmx.SetWriteDeadline(time.Time{}) }()
	for len(p) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.ptmx.SetWriteDeadline(time.Now().Add(inputPoll)); err != nil {
			return err
		}
		n, err := s.ptmx.Write(p)
		p = p[n:]
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
	}
	return nil
}

// tryInput writes what of p the PTY takes without waiting and returns the
// rest (all of p when another write is under way or the PTY is not on the
// poller).
func (s *Session) tryInput(p []byte) []byte {
	if !s.nonblock || !s.inputMu.TryLock() {
		return p
	}
	defer s.inputMu.Unlock()
	select {
	case <-s.done:
		return p // Input reports the end
	default:
	}
	s.touch()
	raw, err := s.ptmx.SyscallConn()
	if err != nil {
		return p
	}
	_ = raw.Control(func(fd uintptr) {
		for len(p) > 0 {
			n, err := unix.Write(int(fd), p)
			if n > 0 {
				p = p[n:]
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				return
			}
		}
	})
	return p
}

// Resize sets the PTY size (the program gets SIGWINCH when it changes). With
// redraw it also nudges the program to repaint when the size did not change,
// so a reattached client gets a full screen rather than a partial replay.
func (s *Session) Resize(cols, rows int, redraw bool) error {
	cols, rows = clampSize(cols, rows)
	s.touch()
	s.mu.Lock()
	changed := cols != s.cols || rows != s.rows
	s.cols, s.rows = cols, rows
	s.mu.Unlock()
	raw, err := s.ptmx.SyscallConn()
	if err != nil {
		return nil // closed: the session has ended
	}
	var serr error
	cerr := raw.Control(func(fd uintptr) {
		serr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
		if serr == nil && !changed && redraw {
			if fg, err := unix.IoctlGetInt(int(fd), unix.TIOCGPGRP); err == nil && fg > 0 {
				_ = syscall.Kill(-fg, syscall.SIGWINCH)
			}
		}
	})
	if cerr != nil {
		return nil // closed: the session has ended
	}
	if serr != nil {
		return fmt.Errorf("resize the terminal: %w", serr)
	}
	return nil
}

func clampSize(cols, rows int) (int, int) {
	return min(max(cols, 2), 1000), min(max(rows, 1), 500)
}

// notice writes a line of Synapse's own into the terminal stream.
func (s *Session) notice(msg string) {
	ctx, cancel := context.WithTimeout(s.ctx, time.Second)
	defer cancel()
	_ = s.out.Write(ctx, []byte(fmt.Sprintf("\r\n\x1b[0m[session %s] %s\r\n", s.id, msg)))
}

func (s *Session) touch() {
	s.mu.Lock()
	s.lastInput = time.Now()
	s.mu.Unlock()
}

// armIdle ends the session after idle without input; activity re-arms it.
func (s *Session) armIdle(idle time.Duration) {
	var check func()
	check = func() {
		select {
		case <-s.done:
			return
		default:
		}
		s.mu.Lock()
		left := idle - time.Since(s.lastInput)
		if left > 0 {
			s.idleTimer = time.AfterFunc(left, check)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		s.Stop(context.Background(), EndIdle)
	}
	s.mu.Lock()
	s.idleTimer = time.AfterFunc(idle, check)
	s.mu.Unlock()
}

// Output gives attach access for the terminal protocol.
func (s *Session) attach() *cursor { return s.out.Attach() }
