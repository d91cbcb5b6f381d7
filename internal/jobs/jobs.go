// Package jobs keeps one agent's background jobs: commands the model starts
// with job:start and commands the user moves out of the shell with Ctrl+B.
// Both are jobs of the agent's one shell, so they run in its sandbox under
// its policy, see its directory and environment, and end with it. Each
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
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
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
	// Exec runs a command line in the agent's shell (the sandbox manager's
	// Execute in the shell's directory): jobs are started through it.
	Exec func(ctx context.Context, cmd string) (command.Result, error)
	// FifoDir names, when a job starts, where its pipes are made for a
	// moment: a directory at the same path for the host and the sandbox
	// that the sandbox may open a FIFO in for writing (nil or "": Dir).
	FifoDir func() string
	// Detach moves the command running in the agent's shell to the
	// background (sandbox.Manager.Detach); nil: Ctrl+B is unavailable.
	Detach func(note string, sink func([]byte)) ([]int, error)
	// Running is the command the agent's shell runs now, if known.
	Running func() string
	// MaxRead is the most bytes one read returns; beyond it the head and
	// tail are kept and the log file named (0: DefaultMaxRead).
	MaxRead int
	// MaxLog caps a log file: past it only its newest half is kept and a
	// read says how much older output was dropped (0: DefaultMaxLog).
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

	pgid   int // started jobs: the process group as the shell sees it
	done   chan struct{}
	groups []int // moved jobs: their process groups (host pids)
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

// Start runs cmdline in the background of the agent's shell, as `( cmdline
// ) &` would, and returns at once: the job is in the same sandbox (its
// network namespace and /tmp too, so a server it starts answers the next
// command), starts in the shell's directory with the shell's environment,
// and is a job of the shell (a later command's interrupt spares it; the
// shell's end kills it). Its output comes back through a FIFO the shell
// opens before it forks the job.
func (t *Table) Start(ctx context.Context, cmdline string) (Info, error) {
	if t.o.Exec == nil {
		return Info{}, errors.New("no shell to run jobs in")
	}
	t.mu.Lock()
	j, err := t.newJob(cmdline, false)
	t.mu.Unlock()
	if err != nil {
		return Info{}, err
	}
	fail := func(err error) (Info, error) {
		t.mu.Lock()
		delete(t.jobs, j.id)
		t.mu.Unlock()
		_ = j.f.Close()
		_ = os.Remove(j.log)
		return Info{}, err
	}
	dir := t.o.Dir
	if t.o.FifoDir != nil {
		if d := t.o.FifoDir(); d != "" {
			dir = d
		}
	}
	base := filepath.Join(dir, fmt.Sprintf(".job-%d-%d", j.id, time.Now().UnixNano()))
	r, err := openFifo(base + ".fifo")
	if err != nil {
		return fail(fmt.Errorf("the job's output pipe: %w", err))
	}
	// The exit status comes through a pipe too: the shell may not be able
	// to write a file at a path the host reads (a read-only mount).
	st, err := openFifo(base + ".status")
	if err != nil {
		_ = r.Close()
		_ = os.Remove(base + ".fifo")
		return fail(fmt.Errorf("the job's status pipe: %w", err))
	}
	// The names go once the shell has opened them; the open ends keep the
	// pipes working.
	defer os.Remove(base + ".fifo")
	defer os.Remove(base + ".status")
	// The shell opens the FIFOs itself (a reader exists, so it does not
	// block) and the forked job inherits them: by the time Exec returns
	// the pipes have their writers, and the output's end-of-file means the
	// job let go of it. The command itself does not keep the status pipe.
	// PYTHONUNBUFFERED: a Python program's prints reach the log as they
	// happen, not when a block of them filled up (the pipe is no terminal).
	line := "if exec {__syn_job}>" + quote(base+".fifo") + " {__syn_st}>" + quote(base+".status") +
		"; then { (\nexec {__syn_st}>&-\nexport PYTHONUNBUFFERED=1\n" + strings.TrimRight(cmdline, "\n") +
		"\n); echo $? >&$__syn_st; } </dev/null >&$__syn_job 2>&1 & echo $!; exec {__syn_job}>&- {__syn_st}>&-; fi; unset __syn_job __syn_st"
	res, err := t.o.Exec(ctx, line)
	pid, perr := strconv.Atoi(strings.TrimSpace(lastLine(res.Stdout)))
	if err != nil || res.ExitCode != 0 || perr != nil {
		_ = r.Close()
		_ = st.Close()
		why := strings.TrimSpace(res.Stderr)
		if err != nil {
			why = err.Error()
		}
		if why == "" {
			why = fmt.Sprintf("the shell answered %q (exit %d)", res.Stdout, res.ExitCode)
		}
		return fail(fmt.Errorf("start the job in the shell: %s", why))
	}
	t.mu.Lock()
	j.pgid = pid
	info := t.infoLocked(j)
	t.mu.Unlock()

	go func() { // the output, until every process of the job let go of it
		defer r.Close()
		b := make([]byte, 32<<10)
		for {
			n, err := r.Read(b)
			if n > 0 {
				t.write(j, b[:n])
			}
			if err != nil {
				break
			}
		}
		code := -1
		if b, err := readFifo(st); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				code = n
			}
		}
		t.end(j, Exited, code)
	}()
	return info, nil
}

// openFifo makes a FIFO at path and opens its reading end without
// blocking (no writer yet) and without following a planted link.
func openFifo(path string) (*os.File, error) {
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		_ = os.Remove(path)
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if st, err := r.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		_ = r.Close()
		return nil, fmt.Errorf("%s was replaced", path)
	}
	return r, nil
}

// readFifo reads a status pipe to its end (a few bytes) and closes it.
func readFifo(f *os.File) ([]byte, error) {
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64))
}

// killTree is a shell command that sends sig to process group pgid and to
// every process below its members (a child that made a group of its own
// included), as the sandbox sees them (its /proc is the shell's), plus the
// pids in also; it prints the pids it found. It runs in a subshell,
// leaving nothing defined in the user's shell.
func killTree(pgid int, sig, also string) string {
	return `(g=` + strconv.Itoa(pgid) + `; declare -A up in; all=(` + also + `)
for f in /proc/[0-9]*/stat; do
	read -r l 2>/dev/null <"$f" || continue
	p=${f#/proc/}; p=${p%/stat}; set -- ${l##*) }
	up[$p]=$2; [[ $3 == "$g" ]] && all+=("$p")
done
for p in "${all[@]}"; do in[$p]=1; done
for ((n = 0; n < ${#all[@]}; n++)); do
	for p in "${!up[@]}"; do [[ ${up[$p]} == "${all[n]}" && -z ${in[$p]} ]] && in[$p]=1 && all+=("$p"); done
done
kill -` + sig + ` -- -"$g" "${all[@]}" 2>/dev/null; echo "${all[*]}")`
}

// quote single-quotes s for bash.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
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
	n, _ := j.f.Write(b) // a full disk loses output, not the job
	j.size += int64(n)
	if j.size-j.base > t.o.MaxLog {
		// Keep the newest half: copying it to the front now and then costs
		// less per byte than the output itself.
		keep := make([]byte, t.o.MaxLog/2)
		if _, err := j.f.ReadAt(keep, j.size-j.base-int64(len(keep))); err == nil && j.f.Truncate(0) == nil {
			j.base = j.size // all dropped, unless the newest half is back
			if _, err := j.f.Write(keep); err == nil {
				j.base = j.size - int64(len(keep))
			}
		}
	}
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
	if j.groups == nil {
		// The shell's own job: the shell signals it, since its pids are the
		// sandbox's (a PID namespace). After the grace, whatever is left.
		ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		defer cancel()
		// The tree is taken before SIGTERM breaks it (orphans move to init);
		// SIGKILL gets those pids again.
		res, _ := t.o.Exec(ctx, killTree(j.pgid, "TERM", "")+"; kill -CONT -- -"+strconv.Itoa(j.pgid)+" 2>/dev/null; :")
		var seen []string
		for _, f := range strings.Fields(res.Stdout) {
			if _, err := strconv.Atoi(f); err == nil {
				seen = append(seen, f)
			}
		}
		select {
		case <-j.done:
		case <-time.After(stopGrace):
		}
		kctx, kcancel := context.WithTimeout(context.Background(), stopGrace)
		_, _ = t.o.Exec(kctx, killTree(j.pgid, "KILL", strings.Join(seen, " "))+" >/dev/null; :")
		kcancel()
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
		if j.groups != nil {
			wg.Go(func() { t.stop(j) })
		} else {
			t.stop(j) // through the shell, which runs one command at a time
		}
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
