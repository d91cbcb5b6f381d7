package shell

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/command"
)

//go:embed driver.bash
var driverScript string

// driverCode is driverScript without its comment and blank lines: bash
// reads a script from a pipe one byte per system call (it must not read
// past the script into the requests that follow), so each byte of comment
// cost a system call at every shell start, two thirds of the file.
var driverCode = sync.OnceValue(func() string { return stripComments(driverScript) })

// stripComments drops the lines of a bash script that hold only a comment
// or nothing. The driver has no here-document or multi-line string where
// such a line would be data (TestDriverCodeIsTheScript).
// driverInput is what starts the driver on bash's stdin. bash reads a
// script from a pipe a byte per system call (it must not take input a
// command of the script may read): 2,800 reads for the driver, at every
// shell start. So a one-line loader comes first: it moves the pipe to the
// requests' fd 60 (fd 0 becomes /dev/null, and bash's own input moves off
// it: bash 5.2 crashes when an eval redirects the fd it reads its script
// from), reads the driver with read -N, which takes what it asks for in
// one read, and runs it. -N counts characters: the driver is ASCII
// (TestDriverCodeIsTheScript).
func driverInput(id string) []byte {
	code := strings.ReplaceAll(driverCode(), "@ID@", id)
	return fmt.Appendf(nil, "exec 60<&0 0</dev/null; IFS= builtin read -r -N %d -u 60 __syn_drv && builtin eval \"$__syn_drv\"\n%s", len(code), code)
}

func stripComments(script string) string {
	var b strings.Builder
	for line := range strings.Lines(script) {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

const (
	// startTimeout bounds waiting for the shell's ready line when ctx has no deadline.
	startTimeout = 30 * time.Second
	// interruptEvery is how often a cancel re-signals the shell and kills new
	// processes until the command gives up: each USR1 unwinds one level of
	// the user's functions, and a loop may keep spawning children.
	interruptEvery = 20 * time.Millisecond
	// interruptGrace is how long an interrupted command may take to stop
	// before the whole shell is killed instead.
	interruptGrace = 3 * time.Second
	// exitDrain is how long to keep reading the pipes after the shell exited
	// (a background job may hold them open forever).
	exitDrain = 200 * time.Millisecond
)

// How a proc ended.
const (
	endNone    int32 = iota
	endExit          // a command ran `exit` (or failed under `set -e`)
	endKilled        // we killed it (Close or Restart)
	endCrashed       // it died on its own
)

// proc is one running shell process.
type proc struct {
	cmd      *exec.Cmd
	stdin    *os.File
	stdinRC  syscall.RawConn // stdin's, for send
	out, err *stream         // stdout and stderr, read by pump
	pump     *pump
	root     int // pid we started; it leads its own session
	// pidns: root's death ends every process of the session
	// (Options.OwnPIDNamespace), and inits are pidfds of its namespace's
	// first process, which ends last: closing waits on them.
	pidns     bool
	inits     []int
	shell     int          // pid of bash as we can signal it; 0 if unknown
	nsShell   int          // pid of bash as it sees itself ($$); differs inside a PID namespace
	protected map[int]bool // process groups of background jobs from earlier commands
	limit     int

	waitDone chan struct{}
	waitErr  error // valid after waitDone is closed

	detachReq chan detachReq // Session.Detach asks the running command's loop

	end        atomic.Int32
	exitStatus atomic.Int32
	killOnce   sync.Once
}

// request is what the driver reads for a command (driver.bash): a header
// of fixed width and the text, padded with newlines to requestMin bytes,
// so the driver takes a small request in one read (a read costs bash four
// system calls) and a larger one in two. bash's `read -N` counts
// characters, which are bytes only in ASCII, so a text with other bytes
// goes escaped for printf %b ("\xHH", and "\\" for a backslash), marked by
// "~" in place of the header's space.
func request(id, text string) string {
	sep := " "
	if !isASCII(text) {
		var b strings.Builder
		for i := 0; i < len(text); i++ {
			switch c := text[i]; {
			case c >= utf8.RuneSelf:
				fmt.Fprintf(&b, `\x%02x`, c)
			case c == '\\':
				b.WriteString(`\\`)
			default:
				b.WriteByte(c)
			}
		}
		text, sep = b.String(), "~"
	}
	req := fmt.Sprintf("%s%s%010d\n", id, sep, len(text)) + text
	if len(req) < requestMin {
		req += strings.Repeat("\n", requestMin-len(req))
	}
	return req
}

// requestMin is the driver's first read of a request (driver.bash).
const requestMin = 256

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// newID is a command's random id; its length (19) is part of the driver's
// request header.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails on supported platforms
	return "syn" + hex.EncodeToString(b[:])
}

// startProc spawns program with args and waits until the driver reports ready.
func startProc(ctx context.Context, program string, args []string, opts Options) (*proc, string, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, "", fmt.Errorf("creating shell pipes: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, "", fmt.Errorf("creating shell pipes: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, "", fmt.Errorf("creating shell pipes: %w", err)
	}
	cmd := exec.Command(program, args...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// A session of its own: no controlling terminal (a command opening
	// /dev/tty fails fast instead of fighting the REPL for the keyboard), the
	// terminal's Ctrl+C does not reach it, and every process it starts can be
	// found by its session id when the shell is torn down.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, "", fmt.Errorf("starting shell %q in %q: %w (check the shell command and the working directory)", program, opts.Dir, err)
	}
	closeAll(inR, outW, errW)
	stdinRC, err := inW.SyscallConn()
	var pu *pump
	if err == nil {
		pu, err = newPump(outR, errR)
	}
	if err != nil {
		killRoot(cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		closeAll(inW, outR, errR)
		return nil, "", err
	}
	p := &proc{
		cmd:       cmd,
		stdin:     inW,
		stdinRC:   stdinRC,
		out:       pu.out,
		err:       pu.err,
		pump:      pu,
		root:      cmd.Process.Pid,
		limit:     opts.MaxOutputBytes,
		waitDone:  make(chan struct{}),
		detachReq: make(chan detachReq, 1),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.waitDone)
	}()

	cwd, err := p.handshake(ctx)
	if err != nil {
		p.kill()
		return nil, "", err
	}
	if opts.OwnPIDNamespace {
		p.watchNamespace()
	}
	return p, cwd, nil
}

// send writes a request to the shell (see writeNB); the raw connection
// keeps the descriptor from being closed under the write, and waits through
// the runtime's poller while the pipe is full (a large command).
func (p *proc) send(b []byte) error {
	var werr error
	err := p.stdinRC.Write(func(fd uintptr) bool {
		for len(b) > 0 {
			n, err := writeNB(int(fd), b)
			switch {
			case err == nil:
				b = b[n:]
			case errors.Is(err, syscall.EINTR):
			case errors.Is(err, syscall.EAGAIN):
				return false
			default:
				werr = err
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// handshake sends the driver and reads "<id>:ready:<pid>\n<cwd>\n<id>:fin\n".
func (p *proc) handshake(ctx context.Context) (string, error) {
	id := newID()
	p.out.setActive(true, nil, true)
	p.err.setActive(true, nil, true)
	defer p.out.setActive(false, nil, false)
	defer p.err.setActive(false, nil, false)
	// An error here means the shell is already gone; the wait below reports it.
	_, _ = p.stdin.Write(driverInput(id))

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	ready, fin := []byte(id+":ready:"), []byte(id+":fin\n")
	var out, errOut capped
	out.limit, errOut.limit = 1<<20, 64<<10
	var seen []byte
	waitDone := p.waitDone
	var drained <-chan time.Time
	fail := func(what string) error {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		if msg != "" {
			what += ": " + msg
		}
		return fmt.Errorf("starting shell %q: %s (check the shell command and that it runs bash)", p.cmd.Path, what)
	}
	for {
		b, oeof := p.out.take()
		out.write(b)
		seen = append(seen, b...)
		e, eeof := p.err.take()
		errOut.write(e)
		if i := indexOf(seen, ready); i >= 0 {
			rest := seen[i+len(ready):]
			if j := indexOf(rest, fin); j >= 0 {
				pidStr, cwd, _ := strings.Cut(string(rest[:j]), "\n")
				cwd = strings.TrimSuffix(cwd, "\n")
				nsPid, err := strconv.Atoi(pidStr)
				if err != nil {
					return "", fail("malformed ready line")
				}
				p.shell, p.nsShell = hostPid(p.root, nsPid), nsPid
				return cwd, nil
			}
		}
		if len(seen) > 1<<20 {
			seen = keepTail(seen, 64<<10)
		}
		if oeof && eeof {
			return "", fail("the shell exited before it was ready")
		}
		select {
		case <-p.pump.notify:
		case <-waitDone:
			waitDone = nil
			drained = time.After(exitDrain)
		case <-drained:
			return "", fail("the shell exited before it was ready (" + p.exitDescription() + ")")
		case <-timer.C:
			return "", fail("no ready signal after " + startTimeout.String())
		case <-ctx.Done():
			return "", fmt.Errorf("starting shell: %w", ctx.Err())
		}
	}
}

func indexOf(b, sub []byte) int { return strings.Index(string(b), string(sub)) }

// exitDescription says how the process ended; only after waitDone.
func (p *proc) exitDescription() string {
	select {
	case <-p.waitDone:
		if p.waitErr == nil {
			return "exit status 0"
		}
		return p.waitErr.Error()
	default:
		return "still running"
	}
}

// alive reports whether the shell can take a command.
func (p *proc) alive() bool {
	if p.end.Load() != endNone {
		return false
	}
	select {
	case <-p.waitDone:
		p.end.CompareAndSwap(endNone, endCrashed)
		return false
	default:
		return true
	}
}

// deadErr explains why a proc that is not alive cannot run a command.
func (p *proc) deadErr() error {
	switch p.end.Load() {
	case endExit:
		return fmt.Errorf("%w: the shell exited with status %d; restart the session to get a new one",
			ErrNotReady, p.exitStatus.Load())
	case endKilled:
		return fmt.Errorf("%w: the session was closed or restarted", ErrNotReady)
	default:
		return &crashError{notReady: true, detail: p.exitDescription()}
	}
}

// crashError is returned when the shell process died on its own. It matches
// ErrCrashed, and also ErrNotReady when it is noticed before a command starts.
type crashError struct {
	notReady bool
	detail   string
}

func (e *crashError) Error() string {
	msg := ErrCrashed.Error() + " (" + e.detail + "); restart the session"
	if e.notReady {
		return ErrNotReady.Error() + ": " + msg
	}
	return msg
}

// NotDelivered reports that the command never reached the shell, so it
// did not run at all and may be retried on a new one.
func (e *crashError) NotDelivered() bool { return e.notReady }

// Detail says how the shell ended, without advice.
func (e *crashError) Detail() string { return e.detail }

func (e *crashError) Is(target error) bool {
	return target == ErrCrashed || (e.notReady && target == ErrNotReady)
}

// run executes one command. Cancellation and timeout are results (exit 130
// and 124), not errors; errors mean the shell itself is gone.
func (p *proc) run(ctx context.Context, text string, timeout time.Duration) (command.Result, error) {
	if ctx.Err() != nil {
		return command.Result{Stderr: interruptedNote, ExitCode: command.Interrupted}, nil
	}
	p.refuseDetach() // a request left from a command that had already ended
	id := newID()
	payload := text
	if !strings.HasSuffix(payload, "\n") {
		payload += "\n"
	}
	fo, fe := newFrame(id, true, p.limit), newFrame(id, false, p.limit)
	fo.out.spill = command.SpillOf(ctx)
	// stderr's live output passes a filter that, once the command is being
	// stopped, drops bash's report of the job we killed, as applyReason
	// drops it from the result: a front end showing the output of a
	// cancelled command shows the command's own lines.
	var noise jobNoise
	// Without a live view the loop needs the streams only at their ends.
	live := false
	if fn := command.OutputOf(ctx); fn != nil {
		fo.onOut = func(b []byte) { fn(string(b)) }
		noise.emit = fo.onOut
		fe.onOut = noise.write
		defer noise.flush()
		live = true
	}
	p.out.setActive(true, fo.fin, live)
	p.err.setActive(true, nil, live)
	defer p.out.setActive(false, nil, false)
	defer p.err.setActive(false, nil, false)
	if err := p.send([]byte(request(id, payload))); err != nil {
		return command.Result{}, p.lostErr(fmt.Sprintf("writing the command: %v", err))
	}

	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var (
		reason   string // "", "cancel" or "timeout"
		tick     <-chan time.Time
		giveUp   <-chan time.Time
		drained  <-chan time.Time
		ctxDone  = ctx.Done()
		waitDone = p.waitDone
	)
	var ticker *time.Ticker
	var detaching *detachReq // a move to the background under way
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
		if detaching != nil {
			detaching.reply <- detachReply{err: errors.New("the command ended or was interrupted before it could be moved to the background")}
		}
		p.refuseDetach()
	}()
	stop := func(why string) {
		if reason != "" {
			return
		}
		reason = why
		noise.on = true
		p.interrupt()
		ticker = time.NewTicker(interruptEvery)
		tick = ticker.C
		giveUp = time.After(interruptGrace)
	}
	feed := func() (eof bool) {
		b, oeof := p.out.take()
		fo.feed(b)
		b, eeof := p.err.take()
		fe.feed(b)
		return oeof && eeof
	}
	partial := func() command.Result {
		feed() // what arrived since the loop last woke
		out, file := fo.out.result()
		return command.Result{Stdout: out, Stderr: fixStderr(fe.out.String()), StdoutFile: file}
	}
	for {
		// Sealed before the feed: stderr's buffer then holds the rest of
		// what the command wrote to it, which this feed takes.
		sealed := p.err.isSealed()
		eof := feed()
		if fo.complete() && sealed {
			fe.seal()
			break
		}
		if eof {
			return finishLost(partial(), reason, timeout, p.lostErr("the shell exited while running the command"))
		}
		select {
		case <-p.pump.notify:
		case <-ctxDone:
			ctxDone = nil
			stop("cancel")
		case <-timer:
			timer = nil
			stop("timeout")
		case <-tick:
			p.interrupt()
		case req := <-p.detachReq:
			if reason != "" || detaching != nil {
				req.reply <- detachReply{err: errors.New("the command is already stopping")}
				break
			}
			groups := p.foregroundGroups()
			if len(groups) == 0 {
				req.reply <- detachReply{err: errNothingToMove}
				break
			}
			// Like Ctrl+Z then bg: the trap makes the shell drop the rest of
			// the command line once its wait returns for the stopped job;
			// the "D" first tells it from a cancel (driver.bash).
			_ = p.send([]byte("D"))
			_ = syscall.Kill(p.shell, syscall.SIGUSR1)
			for _, g := range groups {
				_ = syscall.Kill(-g, syscall.SIGSTOP)
			}
			req.groups = groups
			detaching = &req
			giveUp = time.After(interruptGrace)
		case <-giveUp:
			if d := detaching; d != nil && reason == "" {
				// The shell still waits on something we did not stop (a
				// command substitution): give up moving, interrupt instead.
				for _, g := range d.groups {
					_ = syscall.Kill(-g, syscall.SIGCONT)
				}
				d.reply <- detachReply{err: fmt.Errorf("the shell did not let go of the command within %s (it waits on a part running in the shell itself), so the command was interrupted instead", interruptGrace)}
				detaching = nil
				stop("cancel")
				break
			}
			p.kill()
			return finishLost(partial(), reason, timeout, &crashError{
				detail: "it did not stop the command within " + interruptGrace.String() + " and was killed"})
		case <-waitDone:
			waitDone = nil
			drained = time.After(exitDrain)
		case <-drained:
			return finishLost(partial(), reason, timeout, p.lostErr("the shell exited while running the command"))
		}
	}
	tr, err := parseTrailer(fo.trailer, id)
	if err != nil {
		p.kill()
		return partial(), fmt.Errorf("%w: %v", ErrCrashed, err)
	}
	res := partial()
	res.ExitCode, res.Cwd = tr.status, tr.cwd
	p.protected = make(map[int]bool, len(tr.jobs))
	for _, j := range tr.jobs {
		p.protected[j] = true
	}
	if tr.exited {
		p.exitStatus.Store(int32(tr.status))
		p.end.CompareAndSwap(endNone, endExit)
	}
	applyReason(&res, reason, timeout)
	if d := detaching; d != nil && reason == "" {
		detaching = nil
		p.out.setStray(d.sink)
		p.err.setStray(d.sink)
		var alive []int
		for _, g := range d.groups {
			if syscall.Kill(-g, 0) == nil {
				alive = append(alive, g)
			}
		}
		res.ExitCode = 0 // the 130 of the unwinding, not the command's
		res.Stderr = addNote(res.Stderr, d.note)
		d.reply <- detachReply{groups: alive}
	}
	return res, nil
}

// detachReq asks the loop of the running command to move it to the
// background (Session.Detach).
type detachReq struct {
	note   string       // appended to the command's result
	sink   func([]byte) // receives what the moved command writes later
	groups []int        // the process groups stopped (host pids)
	reply  chan detachReply
}

type detachReply struct {
	groups []int // the process groups left running (host pids)
	err    error
}

// errNothingToMove: no process of the command runs now.
var errNothingToMove = errors.New("the command runs in the shell itself (no process of its own), so it cannot be moved to the background")

// refuseDetach answers a request no running command will take.
func (p *proc) refuseDetach() {
	select {
	case req := <-p.detachReq:
		req.reply <- detachReply{err: ErrNoCommand}
	default:
	}
}

// foregroundGroups are the process groups of the running command: every
// group below the shell but the shell's own and those of earlier jobs.
func (p *proc) foregroundGroups() []int {
	if p.shell <= 0 {
		return nil
	}
	t, err := readPtable()
	if err != nil {
		return nil
	}
	sh, ok := t[p.shell]
	if !ok {
		return nil
	}
	seen := map[int]bool{}
	var out []int
	for pid := range t.descendants(p.shell) {
		pi := t[pid]
		jobID := pi.pgid
		if p.nsShell != p.shell {
			jobID = innerPgid(pid, pi.pgid)
		}
		if p.protected[jobID] || pi.pgid == sh.pgid || pi.pgid <= 1 || seen[pi.pgid] {
			continue
		}
		seen[pi.pgid] = true
		out = append(out, pi.pgid)
	}
	slices.Sort(out)
	return out
}

// addNote puts note on a line of its own after s.
func addNote(s, note string) string {
	if note == "" {
		return s
	}
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + note
}

const interruptedNote = "Command interrupted."

// killedJobRe matches bash's report of a foreground job ended by a signal,
// with the continuation lines of a pipeline's other members ("   1235  | cat").
// It and the two below serve only a stopped command: compiled on first use,
// not at every start.
var killedJobRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:[^\s:]+: )?(?:line \d+: )? *\d+ +(?:Killed|Terminated|Interrupt|Hangup)(?:[ \t].*)?(?:\n|$)(?:[ \t]+\d+[ \t]+\|.*(?:\n|$))*`)
})

// jobNoise passes stderr's live output on; once on (the command is being
// stopped) it passes whole lines only, without bash's report of the killed
// job and the pipeline members' lines that follow it (which may come in a
// later read), holding a line back until its end arrives.
type jobNoise struct {
	emit   func([]byte)
	on     bool
	held   []byte
	report bool // the last line passed judgement was a job report
}

// killedLineRe and memberLineRe are killedJobRe's two kinds of line.
var (
	killedLineRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[^\s:]+: )?(?:line \d+: )? *\d+ +(?:Killed|Terminated|Interrupt|Hangup)(?:[ \t].*)?$`)
	})
	memberLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]+\d+[ \t]+\|.*$`) })
)

func (j *jobNoise) write(b []byte) {
	if !j.on {
		j.emit(b)
		return
	}
	j.held = append(j.held, b...)
	i := bytes.LastIndexByte(j.held, '\n')
	if i < 0 {
		return
	}
	out := j.filter(j.held[:i+1])
	j.held = append(j.held[:0:0], j.held[i+1:]...)
	if len(out) > 0 {
		j.emit(out)
	}
}

// filter drops the report's lines from whole lines b.
func (j *jobNoise) filter(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		line := b
		if k := bytes.IndexByte(b, '\n'); k >= 0 {
			line = b[:k+1]
		}
		b = b[len(line):]
		text := bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case killedLineRe().Match(text):
			j.report = true
		case j.report && memberLineRe().Match(text):
		default:
			j.report = false
			out = append(out, line...)
		}
	}
	return out
}

// flush passes on a last line held back without its end.
func (j *jobNoise) flush() {
	if j.emit == nil || len(j.held) == 0 {
		return
	}
	out := j.filter(j.held)
	j.held = nil
	if len(out) > 0 {
		j.emit(out)
	}
}

func applyReason(res *command.Result, reason string, timeout time.Duration) {
	note := ""
	switch reason {
	case "cancel":
		res.ExitCode, note = command.Interrupted, interruptedNote
	case "timeout":
		res.ExitCode, res.TimedOut = TimedOut, true
		note = fmt.Sprintf("Command timed out after %s and was stopped; run long jobs in the background or split them up.", timeout)
	default:
		return
	}
	// bash reports the job we killed ("bash: line 1: 1234 Killed  sleep 30");
	// that is our doing, not the command's output, and the note says it.
	res.Stderr = killedJobRe().ReplaceAllString(res.Stderr, "")
	if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
		res.Stderr += "\n"
	}
	res.Stderr += note
}

// finishLost ends a command whose shell died or was killed under it.
func finishLost(res command.Result, reason string, timeout time.Duration, err error) (command.Result, error) {
	res.ExitCode = -1
	applyReason(&res, reason, timeout)
	return res, err
}

// lostErr is the error for a shell that went away during a command.
func (p *proc) lostErr(what string) error {
	if p.end.Load() == endKilled {
		return fmt.Errorf("%w: the session was closed or restarted while the command ran", ErrNotReady)
	}
	p.end.CompareAndSwap(endNone, endCrashed)
	select {
	case <-p.waitDone:
		what += ", " + p.exitDescription()
	case <-time.After(exitDrain):
	}
	return &crashError{detail: what}
}

// fixStderr makes bash's messages about the sourced command read as they
// would in a terminal ("bash: line 1: nope: command not found").
func fixStderr(s string) string {
	const src = "/dev/fd/63: "
	if !strings.Contains(s, src) {
		return s
	}
	s = strings.ReplaceAll(s, "\n"+src, "\nbash: ")
	if rest, ok := strings.CutPrefix(s, src); ok {
		s = "bash: " + rest
	}
	return s
}

// interrupt stops the running command: it asks the shell (USR1, whose trap
// returns from the sourced command) and kills every process the command
// started, whole process groups included, but neither the shell, the
// wrapper around it, nor background jobs left by earlier commands.
func (p *proc) interrupt() {
	if p.shell <= 0 {
		return
	}
	// Signal first: bash runs the trap right after its foreground job dies,
	// before it can start the next command of a list.
	_ = syscall.Kill(p.shell, syscall.SIGUSR1)
	t, err := readPtable()
	if err != nil {
		return
	}
	sh, ok := t[p.shell]
	if !ok {
		return
	}
	groups := map[int]bool{}
	for pid := range t.descendants(p.shell) {
		pi := t[pid]
		jobID := pi.pgid
		if p.nsShell != p.shell {
			jobID = innerPgid(pid, pi.pgid)
		}
		if p.protected[jobID] {
			continue
		}
		if pi.pgid != sh.pgid && pi.pgid > 1 {
			groups[pi.pgid] = true
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	// Whole groups: this reaches members that were orphaned and re-parented
	// away from the shell (`bash -c 'sleep 100 & ...'` after bash -c died).
	for g := range groups {
		_ = syscall.Kill(-g, syscall.SIGKILL)
	}
}

// kill ends the shell and everything it started, then releases the pipes and
// goroutines. Safe to call more than once and concurrently.
func (p *proc) kill() {
	p.killOnce.Do(func() {
		p.end.Store(endKilled)
		inits := p.killTree()
		_ = p.stdin.Close()
		deadline := time.Now().Add(5 * time.Second)
		select {
		case <-p.waitDone:
		case <-time.After(time.Until(deadline)):
		}
		waitPidfds(inits, deadline)
		// Background jobs outside our reach (another session) may still hold
		// the pipes; stopping the pump releases them regardless.
		p.pump.stop()
	})
}

// watchNamespace opens, once the shell is ready (root is ours then, not
// reaped), pidfds of the first process of root's PID namespace; without
// them (no CONFIG_PROC_CHILDREN), closing scans /proc as elsewhere.
func (p *proc) watchNamespace() {
	select {
	case <-p.waitDone:
		return // root has ended: its pid may be another process's
	default:
	}
	if fds, ok := childPidfds(p.root); ok && len(fds) > 0 {
		p.pidns, p.inits = true, fds
	} else {
		closePidfds(fds)
	}
}

// killTree kills the process we started and every process of its session or
// below it. In a PID namespace that dies with root, the kernel kills them:
// it returns pidfds of the namespace's first process, which ends last, for
// the caller to wait on (so that nothing of the session runs on once kill
// returns), rather than scan /proc for the session's processes.
func (p *proc) killTree() (inits []int) {
	if !p.pidns {
		killRoot(p.root)
		_ = p.cmd.Process.Kill()
		return nil
	}
	select {
	case <-p.waitDone: // reaped: its process group may be another's by now
	default:
		_ = syscall.Kill(-p.root, syscall.SIGKILL)
	}
	_ = p.cmd.Process.Kill()
	inits, p.inits = p.inits, nil
	return inits
}

// killRoot sends SIGKILL to root, a process started as the leader of a
// session of its own, and to every process of that session or below root
// (with their process groups), but never to the caller or its group.
func killRoot(root int) {
	self, selfGroup := os.Getpid(), syscall.Getpgrp()
	if root <= 1 || root == self {
		return
	}
	_ = syscall.Kill(-root, syscall.SIGKILL)
	t, err := readPtable()
	if err != nil {
		_ = syscall.Kill(root, syscall.SIGKILL)
		return
	}
	victims := t.descendants(root)
	for pid, pi := range t {
		if pi.sid == root {
			victims[pid] = true
		}
	}
	for pid := range victims {
		if pid == self {
			continue
		}
		if g := t[pid].pgid; g > 1 && g != selfGroup {
			_ = syscall.Kill(-g, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(root, syscall.SIGKILL)
}
