// Package shell runs commands in one persistent bash process, so `cd` and
// `export` carry over from one command to the next.
//
// Go talks to bash only through the inherited stdin/stdout/stderr pipes: a
// small driver (driver.bash) reads each command from stdin, runs it with
// stdin from /dev/null, and frames its stdout and stderr with markers that
// carry a fresh random id per command. That is all a sandbox wrapper such
// as `bwrap ... /bin/bash` has to pass through.
//
// Semantics worth knowing:
//   - Commands run in the shell itself (sourced, not in a subshell), so cd,
//     export, plain variables, `declare`, functions, aliases and set/shopt
//     options persist. Each command's stdin is empty (EOF).
//   - A command that ends the shell, by `exit N` or by an error that ends any
//     non-interactive bash (a failure under `set -e`, an unset variable
//     under `set -u`, `${x:?}`), gets its Result with that status; later
//     Execute calls return ErrNotReady until Restart. Nothing restarts
//     behind the caller's back, because the cwd and environment would be
//     lost silently.
//   - Cancelling ctx returns exit 130; Options.Timeout returns 124 (as
//     coreutils timeout does) with a note on stderr. Both kill the command's
//     processes, whole process groups included, but keep the shell, its cwd
//     and environment, and background jobs started by earlier commands.
//     Background jobs are in their own process groups (job control is on),
//     so `cmd &` outlives the command that started it until Close/Restart.
//   - The shell has no terminal, and its environment sets non-interactive
//     editors and pagers (GIT_EDITOR=true, PAGER=cat, …: nonInteractive).
//   - Errors are for the shell itself: ErrBusy, ErrNotReady, and errors
//     matching ErrCrashed when the process died on its own (when noticed
//     before a command starts, the error matches ErrNotReady too).
package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/synapse-agent/synapse/internal/command"
)

var (
	// ErrBusy is returned when Execute is called while another command runs.
	ErrBusy = errors.New("Another command is already executing") //nolint:staticcheck // exact text is a contract (seed 003)
	// ErrNotReady is returned when the shell has exited or the session is closed.
	ErrNotReady = errors.New("Bash session is not ready") //nolint:staticcheck // exact text is a contract (seed 003)
	// ErrCrashed is matched (errors.Is) by the error returned when the shell
	// process died on its own; a caller may Restart and retry once.
	ErrCrashed = errors.New("shell process exited")
	// ErrNoCommand is returned by Detach when no command is running.
	ErrNoCommand = errors.New("no command is running")
)

// TimedOut is the exit status reported when Options.Timeout stopped a command.
const TimedOut = 124

// DefaultShell is the program started when Options has no Command or Argv.
const DefaultShell = "/bin/bash"

// DefaultMaxOutput bounds how much of each stream one command keeps in
// memory; beyond it the head and tail are kept and the middle is counted.
const DefaultMaxOutput = 32 << 20

// shellFlags are appended to every program's arguments so bash reads no
// startup files (seed 003: "args 末尾自动追加 --norc --noprofile").
var shellFlags = []string{"--norc", "--noprofile"}

// Options configures a Session.
type Options struct {
	// Command is a custom shell command line such as
	// `sandbox-exec -f /tmp/test.sb /bin/bash`, split like a shell would
	// (quotes, escapes, $VAR from Env). Default DefaultShell.
	Command string
	// Argv is the exact program and arguments; it wins over Command.
	Argv []string
	// Dir is the initial working directory ("" = the current one).
	Dir string
	// Env is the shell's environment (nil = os.Environ()).
	Env []string
	// Timeout bounds each command; 0 means no limit.
	Timeout time.Duration
	// MaxOutputBytes bounds each captured stream per command (0 = DefaultMaxOutput).
	MaxOutputBytes int
	// OwnPIDNamespace says that the program of Argv runs the shell in a
	// PID namespace that dies with it (bubblewrap's --unshare-pid and
	// --die-with-parent): killing that program then ends every process of
	// the session, and closing it skips the scan of /proc for them (a few
	// ms at every session's end, more on a machine running many processes).
	OwnPIDNamespace bool
}

// parseCommand splits a custom shell command into the program to spawn and
// its arguments, with "--norc --noprofile" appended. $VAR and ~ expand from env.
func parseCommand(s string, env []string) (string, []string, error) {
	var words []*syntax.Word
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return "", nil, fmt.Errorf("parsing shell command %q: %w", s, err)
		}
		words = append(words, w)
	}
	cfg := &expand.Config{Env: expand.ListEnviron(env...)}
	fields, err := expand.Fields(cfg, words...)
	if err != nil {
		return "", nil, fmt.Errorf("expanding shell command %q: %w", s, err)
	}
	if len(fields) == 0 {
		return "", nil, fmt.Errorf("shell command %q is empty; give a program such as %s", s, DefaultShell)
	}
	return fields[0], append(fields[1:len(fields):len(fields)], shellFlags...), nil
}

// argv resolves the program and arguments to spawn.
func (o Options) argv() (string, []string, error) {
	if len(o.Argv) > 0 {
		return o.Argv[0], append(o.Argv[1:len(o.Argv):len(o.Argv)], shellFlags...), nil
	}
	if strings.TrimSpace(o.Command) == "" {
		return DefaultShell, append([]string(nil), shellFlags...), nil
	}
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	return parseCommand(o.Command, env)
}

// Session is one persistent shell. Its methods are safe for concurrent use;
// only one command runs at a time.
type Session struct {
	opts    Options
	program string
	args    []string

	busy      atomic.Bool
	restartMu sync.Mutex // one Restart at a time

	mu     sync.Mutex // guards the fields below
	p      *proc
	cwd    string
	closed bool
}

// nonInteractive are the variables every shell gets on top of its
// environment: it has no terminal, so an editor or pager a command starts
// (git commit, git rebase -i, git log, man) would wait until the timeout.
// `true` as the editor accepts the file as it is; cat pages by printing.
var nonInteractive = []string{
	"GIT_EDITOR=true", "EDITOR=true", "VISUAL=true",
	"PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat",
	"GIT_TERMINAL_PROMPT=0", // git fails at once instead of asking for a password
}

// withNonInteractive is env with the nonInteractive settings replacing any
// the user had (an EDITOR=vim from the user's shell would block every turn).
func withNonInteractive(env []string) []string {
	out := make([]string, 0, len(env)+len(nonInteractive))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(nonInteractive, func(s string) bool { return strings.HasPrefix(s, name+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, nonInteractive...)
}

// Start spawns the shell and waits until it is ready for commands.
func Start(ctx context.Context, opts Options) (*Session, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	opts.Env = withNonInteractive(opts.Env)
	program, args, err := opts.argv()
	if err != nil {
		return nil, err
	}
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = DefaultMaxOutput
	}
	s := &Session{opts: opts, program: program, args: args}
	p, cwd, err := startProc(ctx, program, args, opts)
	if err != nil {
		return nil, err
	}
	s.p, s.cwd = p, cwd
	return s, nil
}

// Program returns the program the session spawns and its arguments
// (with "--norc --noprofile" appended).
func (s *Session) Program() (string, []string) {
	return s.program, append([]string(nil), s.args...)
}

// Execute runs cmd in the shell and returns its output, exit status and the
// working directory afterwards.
func (s *Session) Execute(ctx context.Context, cmd string) (command.Result, error) {
	if !s.busy.CompareAndSwap(false, true) {
		return command.Result{}, ErrBusy
	}
	defer s.busy.Store(false)
	s.mu.Lock()
	p, closed := s.p, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return command.Result{}, fmt.Errorf("%w: the session is closed", ErrNotReady)
	case p == nil:
		return command.Result{}, fmt.Errorf("%w: the shell is not running (never started, or restarting)", ErrNotReady)
	case !p.alive():
		return command.Result{}, p.deadErr()
	case strings.IndexByte(cmd, 0) >= 0:
		return command.Fail("bash: the command contains a NUL byte, which bash cannot run; remove it"), nil
	}
	res, err := p.run(ctx, cmd, s.opts.Timeout)
	if res.Cwd != "" {
		s.mu.Lock()
		if s.p == p {
			s.cwd = res.Cwd
		}
		s.mu.Unlock()
	}
	return res, err
}

// Restart kills the shell and everything it started and starts a fresh one:
// environment and working directory are back to Options.
func (s *Session) Restart(ctx context.Context) error {
	s.restartMu.Lock()
	defer s.restartMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fmt.Errorf("%w: the session is closed; start a new one", ErrNotReady)
	}
	old := s.p
	s.p = nil
	s.mu.Unlock()
	if old != nil {
		old.kill()
	}
	p, cwd, err := startProc(ctx, s.program, s.args, s.opts)
	if err != nil {
		return fmt.Errorf("restarting the shell: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		p.kill()
		return fmt.Errorf("%w: the session was closed during restart", ErrNotReady)
	}
	s.p, s.cwd = p, cwd
	return nil
}

// Detach moves the running command to the background, as Ctrl+Z then `bg`
// would in a terminal: its process groups are stopped, the shell drops what
// is left of the command line, and resumes them as a job of its own, so the
// shell is free for the next command and keeps its state. Execute returns at
// once with the output so far, exit status 0 and note on stderr. What the
// job writes from then on goes to sink (from a reader goroutine; it must
// copy what it keeps), since it still writes to the shell's pipes; output
// it writes while a later command runs is part of that command's output.
// It returns the job's process groups (host pids). A command with no
// process of its own (a loop of builtins) cannot be moved.
func (s *Session) Detach(note string, sink func([]byte)) ([]int, error) {
	s.mu.Lock()
	p := s.p
	s.mu.Unlock()
	if p == nil || !s.busy.Load() {
		return nil, ErrNoCommand
	}
	// Between two commands of a list (`make && ./server`) nothing may run
	// for a moment: ask again a few times before saying so.
	for try := 0; ; try++ {
		req := detachReq{note: note, sink: sink, reply: make(chan detachReply, 1)}
		select {
		case p.detachReq <- req:
		default:
			return nil, errors.New("a move to the background is already under way")
		}
		select {
		case r := <-req.reply:
			if errors.Is(r.err, errNothingToMove) && try < 10 && s.busy.Load() {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			return r.groups, r.err
		case <-p.waitDone:
			return nil, errors.New("the shell exited while the command was being moved to the background")
		case <-time.After(interruptGrace + 2*time.Second):
			return nil, errors.New("the shell did not answer the move to the background")
		}
	}
}

// Close kills the shell and every process it started and releases the
// pipes. It is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	p := s.p
	s.closed, s.p = true, nil
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
	return nil
}

// Cwd is the shell's working directory after the last command.
func (s *Session) Cwd() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cwd
}

// Alive reports whether the shell can take a command now.
func (s *Session) Alive() bool {
	s.mu.Lock()
	p, closed := s.p, s.closed
	s.mu.Unlock()
	return !closed && p != nil && p.alive()
}
