// Package jobs keeps one agent's background jobs: commands the model starts
// with job:start (each a `bash -c` of its own, wrapped in the agent's
// sandbox under the same policy) and commands the user moves out of the
// shell with Ctrl+B (they keep running as jobs of the agent's shell). Each
// job's output, stdout and stderr interleaved, goes to a capped log file in
// the agent's scratch directory; the model reads what is new since its last
// read, waits for a pattern or the end, lists jobs and stops them. Close
// ends every job with its process tree. A Table belongs to one agent:
// sub-agents get none.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/shell"
)

// Defaults for Options' zero fields.
const (
	DefaultMaxRead = 30000
	DefaultMaxLog  = 32 << 20
	// stopGrace is how long a job may take to end after SIGTERM before its
	// whole tree is killed.
	stopGrace = 2 * time.Second
	// pollEvery is how often a job moved from the shell (not our child, so
	// no Wait tells us) is checked for still running.
	pollEvery = 250 * time.Millisecond
)

// State is where a job is in its life.
type State string

// States.
const (
	Running State = "running"
	Exited  State = "exited"  // ended on its own
	Stopped State = "stopped" // ended by Stop or Close
)

// Options configure a Table.
type Options struct {
	// Dir receives the log files: the agent's private scratch directory.
	Dir string
	// Wrap wraps a job's argv in the agent's sandbox under its active
	// policy, starting in cwd (nil: run as is, the sandbox being off).
	Wrap func(argv []string, cwd string) ([]string, error)
	// Env is a job's environment (nil: the process's).
	Env func() []string
	// Cwd is where a job starts: the agent shell's current directory.
	Cwd func() string
	// Detach moves the command running in the agent's shell to the
	// background (sandbox.Manager.Detach); nil: Ctrl+B is unavailable.
	Detach func(note string, sink func([]byte)) ([]int, error)
	// Running is the command the agent's shell runs now, if known.
	Running func() string
	// MaxRead is the most bytes one read returns; beyond it the head and
	// tail are kept and the log file named (0: DefaultMaxRead).
	MaxRead int
	// MaxLog caps a log file: past it the file starts over and a read says
	// how much older output was dropped (0: DefaultMaxLog).
	MaxLog int64
}

// Info describes one job.
type Info struct {
	ID       int
	Command  string
	State    State
	ExitCode int  // when Exited: the status (-1 when unknown)
	Moved    bool // moved from the shell by the user (Ctrl+B)
	Log      string
	Started  time.Time
	Ended    time.Time
	Unread   int64 // bytes written since the last read
}

// Output is what a read returns: the new output and the job after it.
type Output struct {
	Text    string
	Dropped int64 // older unread bytes lost to the log's cap
	Omitted int64 // bytes cut from the middle of Text (still in the log)
	Info    Info
}

// ErrClosed is returned once the table is closed.
var ErrClosed = errors.New("the session is ending, so no job can start")

// Table is one agent's jobs. Its methods are safe for concurrent use.
type Table struct {
	o Options

	mu     sync.Mutex
	jobs   map[int]*job
	next   int
	closed bool
}

type job struct {
	id      int
	command string
	moved   bool
	log     string
	f       *os.File // the log, O_APPEND; reads use ReadAt
	started time.Time

	// Guarded by Table.mu.
	size     int64 // bytes written in all
	base     int64 // offset in the output of the log file's first byte
	readOff  int64 // offset of the next read
	state    State
	exit     int
	ended    time.Time
	stopping bool          // Stop was called: the end is a stop, whatever status it had
	changed  chan struct{} // closed and replaced when output or state change

	cmd    *exec.Cmd // started jobs
	done   chan struct{}
	groups []int // moved jobs: their process groups
}

// New returns an empty table.
func New(o Options) *Table {
	if o.MaxRead <= 0 {
		o.MaxRead = DefaultMaxRead
	}
	if o.MaxLog <= 0 {
		o.MaxLog = DefaultMaxLog
	}
	return &Table{o: o, jobs: map[int]*job{}}
}

// newJob registers a job with a fresh log file (Table.mu held).
func (t *Table) newJob(command string, moved bool) (*job, error) {
	if t.closed {
		return nil, ErrClosed
	}
	t.next++
	id := t.next
	log := filepath.Join(t.o.Dir, "job-"+strconv.Itoa(id)+".log")
	// Our own file in our private directory: never through a planted link.
	f, err := os.OpenFile(log, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create the log of job %d: %w", id, err)
	}
	j := &job{id: id, command: command, moved: moved, log: log, f: f, started: time.Now(),
		state: Running, exit: -1, changed: make(chan struct{}), done: make(chan struct{})}
	t.jobs[id] = j
	return j, nil
}

// Start runs cmdline with `bash -c` in the sandbox, in the agent shell's
// directory, and returns at once.
func (t *Table) Start(cmdline string) (Info, error) {
	argv := []string{"/bin/bash", "-c", cmdline}
	cwd := ""
	if t.o.Cwd != nil {
		cwd = t.o.Cwd()
	}
	if t.o.Wrap != nil {
		w, err := t.o.Wrap(argv, cwd)
		if err != nil {
			return Info{}, fmt.Errorf("sandbox the job: %w", err)
		}
		argv = w
	}
	r, w, err := os.Pipe()
	if err != nil {
		return Info{}, fmt.Errorf("create the job's output pipe: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	if t.o.Env != nil {
		cmd.Env = t.o.Env()
	}
	cmd.Stdout, cmd.Stderr = w, w
	// A session of its own, like the agent's shell: no terminal, and every
	// process of the job can be found by its session when it is stopped.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}

	t.mu.Lock()
	j, err := t.newJob(cmdline, false)
	if err != nil {
		t.mu.Unlock()
		_, _ = r.Close(), w.Close()
		return Info{}, err
	}
	if err := cmd.Start(); err != nil {
		delete(t.jobs, j.id)
		t.mu.Unlock()
		_, _ = r.Close(), w.Close()
		_ = j.f.Close()
		_ = os.Remove(j.log)
		return Info{}, fmt.Errorf("start the job: %w", err)
	}
	j.cmd = cmd
	info := t.infoLocked(j)
	t.mu.Unlock()
	_ = w.Close()

	copied := make(chan struct{})
	go func() { // the output, until every process of the job let go of it
		defer close(copied)
		b := make([]byte, 32<<10)
		for {
			n, err := r.Read(b)
			if n > 0 {
				t.write(j, b[:n])
			}
			if err != nil {
				_ = r.Close()
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		}
		// What the job printed last is in the log before it reads as ended;
		// a grandchild still holding the pipe does not keep it running.
		select {
		case <-copied:
		case <-time.After(200 * time.Millisecond):
		}
		t.end(j, Exited, code)
	}()
	return info, nil
}

// Background moves the command running in the agent's shell to the
// background as a new job (the user's Ctrl+B); that command's result tells
// the model the job's id.
func (t *Table) Background() (Info, error) {
	if t.o.Detach == nil {
		return Info{}, errors.New("moving a command to the background is not available here")
	}
	command := "(moved from the shell)"
	if t.o.Running != nil {
		if c := t.o.Running(); c != "" {
			command = c
		}
	}
	t.mu.Lock()
	j, err := t.newJob(command, true)
	t.mu.Unlock()
	if err != nil {
		return Info{}, err
	}
	note := fmt.Sprintf("synapse: the user moved this command to the background as job %d; it keeps running. "+
		"Its output from now on: job:read %d (new output), job:wait %d --for REGEX (wait for a line), job:stop %d (end it).",
		j.id, j.id, j.id, j.id)
	groups, err := t.o.Detach(note, t.stray)
	t.mu.Lock()
	if err != nil {
		delete(t.jobs, j.id)
		t.mu.Unlock()
		_ = j.f.Close()
		_ = os.Remove(j.log)
		return Info{}, err
	}
	j.groups = groups
	info := t.infoLocked(j)
	t.mu.Unlock()
	go t.watchMoved(j)
	return info, nil
}

// stray takes what moved jobs write to the shell's pipes: it goes to the
// newest moved job still running (the pipes do not say which one wrote).
func (t *Table) stray(b []byte) {
	t.mu.Lock()
	var to *job
	for _, j := range t.jobs {
		if j.moved && j.state == Running && (to == nil || j.id > to.id) {
			to = j
		}
	}
	t.mu.Unlock()
	if to != nil {
		t.write(to, b)
	}
}

// watchMoved notices the end of a moved job, which is the shell's child,
// not ours.
func (t *Table) watchMoved(j *job) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-j.done:
			return
		case <-tick.C:
		}
		if !groupsAlive(j.groups) {
			t.end(j, Exited, -1)
			return
		}
	}
}

func groupsAlive(groups []int) bool {
	for _, g := range groups {
		if syscall.Kill(-g, 0) == nil {
			return true
		}
	}
	return false
}

// write appends output to a job's log, starting the file over past the cap.
func (t *Table) write(j *job, b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j.f == nil {
		return
	}
	if j.size-j.base+int64(len(b)) > t.o.MaxLog {
		if err := j.f.Truncate(0); err == nil {
			j.base = j.size
		}
	}
	n, _ := j.f.Write(b) // a full disk loses output, not the job
	j.size += int64(n)
	j.notifyLocked()
}

func (j *job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// end records how a job ended, once.
func (t *Table) end(j *job, s State, code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if j.state != Running {
		return
	}
	if j.stopping {
		s = Stopped
	}
	j.state, j.exit, j.ended = s, code, time.Now()
	close(j.done)
	j.notifyLocked()
}

func (t *Table) infoLocked(j *job) Info {
	return Info{ID: j.id, Command: j.command, State: j.state, ExitCode: j.exit, Moved: j.moved,
		Log: j.log, Started: j.started, Ended: j.ended, Unread: j.size - j.readOff}
}

func (t *Table) get(id int) (*job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, ok := t.jobs[id]
	if !ok {
		return nil, fmt.Errorf("no job %d: job:list shows the jobs of this session", id)
	}
	return j, nil
}

// Read returns the output written since the last read of job id.
func (t *Table) Read(id int) (Output, error) {
	j, err := t.get(id)
	if err != nil {
		return Output{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.readLocked(j)
}

func (t *Table) readLocked(j *job) (Output, error) {
	var out Output
	if j.f == nil { // closed with the session
		return Output{Info: t.infoLocked(j)}, nil
	}
	from := j.readOff
	if from < j.base {
		out.Dropped = j.base - from
		from = j.base
	}
	n := j.size - from
	maxRead := int64(t.o.MaxRead)
	var text []byte
	if n <= maxRead {
		text = make([]byte, n)
		if _, err := j.f.ReadAt(text, from-j.base); err != nil && !errors.Is(err, io.EOF) {
			return Output{}, fmt.Errorf("read the log of job %d: %w", j.id, err)
		}
	} else {
		head, tail := make([]byte, maxRead/2), make([]byte, maxRead-maxRead/2)
		if _, err := j.f.ReadAt(head, from-j.base); err != nil && !errors.Is(err, io.EOF) {
			return Output{}, fmt.Errorf("read the log of job %d: %w", j.id, err)
		}
		if _, err := j.f.ReadAt(tail, j.size-int64(len(tail))-j.base); err != nil && !errors.Is(err, io.EOF) {
			return Output{}, fmt.Errorf("read the log of job %d: %w", j.id, err)
		}
		out.Omitted = n - maxRead
		text = slices.Concat(head, []byte(fmt.Sprintf("\n[... %d bytes omitted; the whole log is %s ...]\n", out.Omitted, j.log)), tail)
	}
	j.readOff = j.size
	out.Text = string(text)
	out.Info = t.infoLocked(j)
	return out, nil
}

// Why a Wait returned.
const (
	WaitMatched  = "matched"
	WaitEnded    = "ended"
	WaitTimedOut = "timeout"
)

// Wait waits until the job's new output matches pattern (nil: only for its
// end), the job ends, or timeout passes, then reads the new output. It
// returns early with ctx's error when ctx ends.
func (t *Table) Wait(ctx context.Context, id int, pattern *regexp.Regexp, timeout time.Duration) (Output, string, error) {
	j, err := t.get(id)
	if err != nil {
		return Output{}, "", err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	t.mu.Lock()
	scan := j.readOff // where the unmatched part of the new output begins
	t.mu.Unlock()
	for {
		t.mu.Lock()
		why := ""
		if pattern != nil {
			var ok bool
			if ok, scan = t.matchLocked(j, pattern, scan); ok {
				why = WaitMatched
			}
		}
		if why == "" && j.state != Running {
			why = WaitEnded
		}
		if why != "" {
			out, err := t.readLocked(j)
			t.mu.Unlock()
			return out, why, err
		}
		changed := j.changed
		t.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			t.mu.Lock()
			out, err := t.readLocked(j)
			t.mu.Unlock()
			return out, WaitTimedOut, err
		case <-ctx.Done():
			return Output{}, "", ctx.Err()
		}
	}
}

// matchLocked looks for pattern in the log from scan on; it returns where
// the next look starts (the last line, which may grow, is looked at again).
func (t *Table) matchLocked(j *job, pattern *regexp.Regexp, scan int64) (bool, int64) {
	scan = max(scan, j.base)
	n := j.size - scan
	if n <= 0 {
		return false, scan
	}
	// A window of the newest output bounds the work on a chatty job.
	if limit := int64(4 << 20); n > limit {
		scan, n = j.size-limit, limit
	}
	b := make([]byte, n)
	if _, err := j.f.ReadAt(b, scan-j.base); err != nil && !errors.Is(err, io.EOF) {
		return false, scan
	}
	if pattern.Match(b) {
		return true, j.size
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return false, scan + int64(i) + 1
		}
	}
	return false, scan
}

// List returns every job of the session, oldest first.
func (t *Table) List() []Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Info, 0, len(t.jobs))
	for _, j := range t.jobs {
		out = append(out, t.infoLocked(j))
	}
	slices.SortFunc(out, func(a, b Info) int { return a.ID - b.ID })
	return out
}

// Running counts the jobs still running.
func (t *Table) Running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, j := range t.jobs {
		if j.state == Running {
			n++
		}
	}
	return n
}

// Stop ends job id with its whole process tree: SIGTERM first, SIGKILL to
// everything left after a short grace. A job that already ended is left as
// it is.
func (t *Table) Stop(id int) (Info, error) {
	j, err := t.get(id)
	if err != nil {
		return Info{}, err
	}
	t.stop(j)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.infoLocked(j), nil
}

func (t *Table) stop(j *job) {
	t.mu.Lock()
	running := j.state == Running
	j.stopping = j.stopping || running
	t.mu.Unlock()
	if !running {
		return
	}
	if j.cmd != nil {
		root := j.cmd.Process.Pid
		_ = syscall.Kill(-root, syscall.SIGTERM)
		select {
		case <-j.done:
		case <-time.After(stopGrace):
		}
		// Also what left the group or outlived the job's main process.
		shell.KillTree(root)
	} else {
		for _, g := range j.groups {
			_ = syscall.Kill(-g, syscall.SIGTERM)
			_ = syscall.Kill(-g, syscall.SIGCONT) // a stopped job must run to end
		}
		deadline := time.After(stopGrace)
	wait:
		for groupsAlive(j.groups) {
			select {
			case <-deadline:
				break wait
			case <-time.After(20 * time.Millisecond):
			}
		}
		for _, g := range j.groups {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
	}
	t.end(j, Stopped, -1)
}

// Close stops every running job with its process tree and closes the
// logs; Start and Background refuse afterwards. The log files stay (the
// scratch directory's owner removes them).
func (t *Table) Close() error {
	t.mu.Lock()
	t.closed = true
	var all []*job
	for _, j := range t.jobs {
		all = append(all, j)
	}
	t.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range all {
		wg.Go(func() { t.stop(j) })
	}
	wg.Wait()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, j := range all {
		if j.f != nil {
			_ = j.f.Close()
			j.f = nil
		}
	}
	return nil
}
