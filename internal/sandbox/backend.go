package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
)

// ErrCrashed marks an execute that failed because the sandboxed shell died.
// The manager rebuilds the sandbox; it retries the command only when the
// shell was found dead before the command reached it (see crashError).
var ErrCrashed = errors.New("the sandboxed shell crashed")

// crashError is a backend's ErrCrashed. Delivered says whether the command
// reached the shell before it died: then it may have done part of its work,
// and running it again could do that part twice.
type crashError struct {
	delivered bool
	err       error
}

func (e *crashError) Error() string        { return ErrCrashed.Error() + ": " + e.err.Error() }
func (e *crashError) Unwrap() error        { return e.err }
func (e *crashError) Is(target error) bool { return target == ErrCrashed }

// crashed classifies a failed Execute of a shell that is no longer alive.
// A session error that says the command never reached the shell
// (NotDelivered, as *shell.Session's does) is not delivered.
func crashed(err error) error {
	var nd interface{ NotDelivered() bool }
	return &crashError{delivered: !(errors.As(err, &nd) && nd.NotDelivered()), err: err}
}

// Session is the persistent shell a backend runs commands in
// (*shell.Session satisfies it).
type Session interface {
	Execute(ctx context.Context, cmd string) (command.Result, error)
	Restart(ctx context.Context) error
	Close() error
	Cwd() string
	Alive() bool
}

// SessionOptions describe the shell to start: Argv is the exact command line
// (bwrap … /bin/bash when sandboxed).
type SessionOptions struct {
	Argv    []string
	Dir     string
	Env     []string
	Timeout time.Duration
	// OwnPIDNamespace: Argv[0] runs the shell in a PID namespace that
	// dies with it, so killing it ends every process of the session
	// (bubblewrap; see shell.Options).
	OwnPIDNamespace bool
}

// StartSession starts a persistent shell (app wires shell.Start).
type StartSession func(ctx context.Context, opts SessionOptions) (Session, error)

// Backend runs commands under one policy.
type Backend interface {
	Execute(ctx context.Context, cmd string) (command.Result, error)
	// Cwd is the shell's current directory.
	Cwd() string
	// Restart resets the shell (state is lost, the policy stays).
	Restart(ctx context.Context) error
	Policy() Policy
	// Sandboxed is false for the backend used when the sandbox is off.
	Sandboxed() bool
	// Dispose releases the shell and the platform's resources.
	Dispose() error
}

// LocalBackend runs a persistent shell wrapped by the platform adapter.
type LocalBackend struct {
	policy Policy
	rules  []rule
	plat   *platform // nil when unsandboxed
	sess   Session

	mu       sync.Mutex
	disposed bool

	// runMu is held while a command runs and while the checks run, so the
	// idle watcher never judges a command's half-done work (a rebase it
	// is running) and two checks never race.
	runMu   sync.Mutex
	running atomic.Bool   // a command runs (Settle does not wait for it)
	pending []string      // what the idle watcher disabled, for the next command's output
	wake    int           // eventfd that stops the idle watcher (-1: none)
	idleEnd chan struct{} // closed when the idle watcher has stopped

	sweeper, notices string // CreateOptions.Sweeper and Notices

	stable *stableDirs // the text check's, used under runMu (nil unsandboxed)
}

var _ Backend = (*LocalBackend)(nil)

// Policy is the policy the backend was created with.
func (b *LocalBackend) Policy() Policy { return b.policy }

// Sandboxed reports whether commands run under the platform adapter.
func (b *LocalBackend) Sandboxed() bool { return b.plat != nil }

// Cwd is the shell's current directory.
func (b *LocalBackend) Cwd() string { return b.sess.Cwd() }

// Restart resets the shell.
func (b *LocalBackend) Restart(ctx context.Context) error {
	if err := b.sess.Restart(ctx); err != nil {
		return fmt.Errorf("restart the sandboxed shell: %w", err)
	}
	return nil
}

// Execute checks the command text against the blacklist, runs it in the
// shell, and reports a failure the policy caused as blocked.
func (b *LocalBackend) Execute(ctx context.Context, cmd string) (command.Result, error) {
	b.mu.Lock()
	disposed := b.disposed
	b.mu.Unlock()
	if disposed {
		return command.Result{}, &crashError{err: errors.New("the sandbox was disposed")}
	}
	if !b.sess.Alive() {
		return command.Result{}, &crashError{err: errors.New("the shell had exited before the command was sent")}
	}
	if b.plat == nil {
		res, err := b.sess.Execute(ctx, cmd)
		if err != nil && ctx.Err() == nil && !b.sess.Alive() {
			return res, crashed(err)
		}
		return res, err
	}
	b.runMu.Lock()
	defer b.runMu.Unlock()
	b.running.Store(true)
	defer b.running.Store(false)
	// What a job left running by an earlier command planted since: found
	// by the idle watcher, or now, before this command can use it. The
	// sweep's step (a few milliseconds of reads in a large tree) is the
	// idle watcher's (DeferSweep, below): it finds only what host git
	// would run, never what a command could use.
	b.plat.lastPlan.watch.HoldSweep()
	before := append(b.pending, b.settleLocked()...)
	b.pending = nil
	if res, blocked := checkCommandText(cmd, b.sess.Cwd(), b.policy.Home, b.rules, b.stable); blocked {
		res.Stderr += sandboxLines(before)
		return res, nil
	}
	res, err := b.sess.Execute(ctx, cmd)
	if err != nil {
		b.pending = append(before, b.pending...) // reported with the next result
		if ctx.Err() == nil && !b.sess.Alive() {
			return res, crashed(err)
		}
		return res, err
	}
	cwd := res.Cwd
	if cwd == "" {
		cwd = b.sess.Cwd()
	}
	res = detectViolation(res, cwd, b.policy, b.rules, b.plat.launcher != "")
	res.Stderr += sandboxLines(before)
	_ = b.plat.guard.Take() // what the checks before the command restored is in before
	b.plat.lastPlan.watch.DeferSweep()
	removed, lines := b.checkLocked()
	if len(removed) > 0 {
		res.Blocked, res.BlockedReason, res.BlockedResource = true, commondirReason, removed[0]
		res.Stderr += "sandbox: removed " + strings.Join(removed, ", ") + ": " + commondirReason + "\n"
	}
	if restored := b.plat.guard.Take(); len(restored) > 0 && !res.Blocked {
		// What Landlock let the command change in a repository, undone:
		// reported as bwrap's read-only mount would have refused it.
		res.Blocked, res.BlockedReason, res.BlockedResource = true, gitProtectedReason, restored[0]
	}
	res.Stderr += sandboxLines(lines)
	return res, nil
}

// checkLocked runs the checks (runMu held): the control files a command
// planted are removed (when anything in their directories changed) and
// their paths returned, with the lines of what else was disabled.
func (b *LocalBackend) checkLocked() (removed, lines []string) {
	lines = append(b.plat.guard.Check(), b.plat.lastPlan.watch.Check()...)
	if b.plat.guard != nil || b.plat.lastPlan.watch.ControlChanged() {
		removed = b.plat.lastPlan.revertGit()
	}
	return removed, lines
}

// sandboxLines formats the checks' findings for a command's stderr.
func sandboxLines(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("sandbox: " + l + "\n")
	}
	return b.String()
}

// settleLocked runs the checks that otherwise follow a command (runMu
// held): planted control files removed, new repositories and rebase state
// that would run something on the host disabled. It returns what it did.
func (b *LocalBackend) settleLocked() []string {
	removed, lines := b.checkLocked()
	if len(removed) > 0 {
		lines = append([]string{"removed " + strings.Join(removed, ", ") + ": " + commondirReason}, lines...)
	}
	return lines
}

// Settle runs the checks now, between commands, and returns what they and
// the idle watcher did since the last command. With take, the report is
// taken (it goes to the model, as a command's output would); without, the
// next command's output reports it too (the caller shows it to the user,
// and the model still learns what became of its repository). While a
// command runs it does nothing: that command's own check follows it, and
// a hook or a sub-agent must not wait for a long build to end.
func (b *LocalBackend) Settle(take bool) []string {
	if b.plat == nil {
		return nil
	}
	b.mu.Lock()
	disposed := b.disposed
	b.mu.Unlock()
	if disposed || b.running.Load() {
		return nil
	}
	b.runMu.Lock() // the idle watcher's check, if one runs, is short
	defer b.runMu.Unlock()
	b.pending = append(b.pending, b.settleLocked()...)
	out := slices.Clone(b.pending)
	if take {
		b.pending = nil
	}
	return out
}

// freshRepos lists the repositories commands created that the checks
// still follow (harmless at the last check).
func (b *LocalBackend) freshRepos() []string {
	if b.plat == nil || b.plat.lastPlan.watch == nil {
		return nil
	}
	return b.plat.lastPlan.watch.Fresh()
}

// commondirReason explains a removed control file.
const commondirReason = "git and Mercurial control files (commondir, config.worktree, objects/info/alternates; .hg/hgrc, hgrc-not-shared, sharedpath) would make git or hg on the host run programs or take hooks, config or objects from elsewhere, so the sandbox removed the new one; ask the user to make this change"

// Dispose closes the shell and removes the platform's files. It is safe to
// call more than once.
func (b *LocalBackend) Dispose() error {
	b.mu.Lock()
	if b.disposed {
		b.mu.Unlock()
		return nil
	}
	b.disposed = true
	b.mu.Unlock()
	var errs []error
	if err := b.sess.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close the sandboxed shell: %w", err))
	}
	if b.plat != nil {
		// The shell and every process it started (background jobs too) are
		// killed: nothing can plant one after this last check.
		b.stopIdle()
		b.runMu.Lock()
		// What a command planted where no watch looks must not outlive
		// the session armed: the rest of the sweep's pass runs in the
		// background, or here when it cannot. The background pass reads
		// every folder from the roots, so this last check leaves its
		// sweep step to it.
		w := b.plat.lastPlan.watch
		if b.sweeper != "" {
			w.HoldSweep()
		}
		b.settleLocked()
		if h, ok := w.Handoff(); ok {
			if b.sweeper == "" || handOff(b.sweeper, b.notices, h, w.DupDescriptor()) != nil {
				w.Exhaust()
				b.settleLocked()
			}
		}
		b.runMu.Unlock()
		b.plat.lastPlan.watch.Close()
		if err := b.plat.cleanup(); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox files: %w", err))
		}
	}
	return errors.Join(errs...)
}

// CreateOptions is what a provider needs to create a backend.
type CreateOptions struct {
	Policy       Policy
	Cwd          string
	Env          []string
	Timeout      time.Duration
	StartSession StartSession
	// StateDir receives the platform's private files (default: Policy.TempDir).
	StateDir string
	// GOOS and LookPath select and find the platform tool (tests).
	GOOS     string
	LookPath func(string) (string, error)
	// Shell is the shell to run inside (default /bin/bash).
	Shell string
	// Fresh lists repositories commands created under an earlier backend
	// of the same manager: checked again like new ones, not trusted.
	Fresh []string
	// Sweeper is the launcher binary that runs the repository guard's
	// last pass in the background (handoff.go); "" runs it before Dispose
	// returns. Notices is where that pass records what it disabled.
	Sweeper, Notices string
	// ScanCache is the folder where the mount plan's scan keeps its cache
	// between sessions ("" none).
	ScanCache string
	scan      *dirCache // the manager's, begun early (may be for other roots)
}

// Provider creates and destroys backends.
type Provider interface {
	Name() string
	Create(ctx context.Context, opts CreateOptions) (Backend, error)
	Destroy(b Backend) error
}

// Registry maps provider names to constructors.
type Registry map[string]func() Provider

// DefaultRegistry holds the built-in providers.
func DefaultRegistry() Registry {
	return Registry{
		"local":         func() Provider { return LocalProvider{} },
		BackendBwrap:    func() Provider { return LocalProvider{Backend: BackendBwrap} },
		BackendLandlock: func() Provider { return LocalProvider{Backend: BackendLandlock} },
	}
}

// Names lists the registered providers, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the named provider or an error listing the available ones.
func (r Registry) New(name string) (Provider, error) {
	f, ok := r[name]
	if !ok {
		return nil, fmt.Errorf("unknown sandbox provider %q: available providers: %s (set \"provider\" in sandbox.json)", name, strings.Join(r.Names(), ", "))
	}
	return f(), nil
}

// LocalProvider runs the shell on this machine under the OS adapter. On
// Linux, Backend picks bubblewrap (BackendBwrap, also when empty) or
// Landlock (BackendLandlock, run through Launcher); the manager chooses
// for the "local" provider by probing.
type LocalProvider struct {
	Backend  string
	Launcher string
}

// Name is "local", or the backend it was asked for.
func (p LocalProvider) Name() string {
	if p.Backend != "" {
		return p.Backend
	}
	return "local"
}

// Create wraps a new shell with the platform adapter. Any failure is returned:
// the provider never falls back to an unsandboxed shell.
func (lp LocalProvider) Create(ctx context.Context, opts CreateOptions) (Backend, error) {
	if opts.StartSession == nil {
		return nil, errors.New("sandbox: no shell starter configured")
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		stateDir = opts.Policy.TempDir
	}
	var (
		plat *platform
		err  error
	)
	if lp.Backend == BackendLandlock && (opts.GOOS == "linux" || opts.GOOS == "") {
		plat, err = newLandlockPlatform(stateDir, lp.Launcher)
	} else {
		plat, err = newPlatform(opts.GOOS, stateDir, opts.LookPath)
	}
	if err != nil {
		return nil, err
	}
	plat.cacheDir, plat.scan = opts.ScanCache, opts.scan
	shellPath := opts.Shell
	if shellPath == "" {
		shellPath = "/bin/bash"
	}
	argv, err := plat.wrap(opts.Policy, []string{shellPath}, WrapOptions{Cwd: opts.Cwd, Env: opts.Env})
	if err != nil {
		_ = plat.cleanup()
		return nil, err
	}
	sess, err := opts.StartSession(ctx, SessionOptions{Argv: argv, Dir: opts.Cwd, Env: opts.Env, Timeout: opts.Timeout, OwnPIDNamespace: plat.ownPIDNamespace()})
	// Before the backend exists, nothing can send the shell a command:
	// the plan, made from the scan cache before its check (wrap), is
	// confirmed first, and the shell started again under the checked
	// plan when its mounts differ (a bind of a folder that is gone can
	// also have failed the first start).
	if again := plat.confirmPlan(); again != nil {
		if sess != nil {
			_ = sess.Close()
		}
		sess, err = opts.StartSession(ctx, SessionOptions{Argv: again, Dir: opts.Cwd, Env: opts.Env, Timeout: opts.Timeout, OwnPIDNamespace: plat.ownPIDNamespace()})
	}
	if err != nil {
		_ = plat.cleanup()
		return nil, fmt.Errorf("start the sandboxed shell: %w", err)
	}
	// Every watch is in place first, too.
	plat.watchReady()
	b := &LocalBackend{policy: opts.Policy, rules: compileRules(opts.Policy.Blacklist, opts.Policy.Home), plat: plat, sess: sess,
		sweeper: opts.Sweeper, notices: opts.Notices, stable: plat.stableDirs(opts.Policy)}
	plat.lastPlan.watch.Adopt(opts.Fresh)
	if plat.guard != nil {
		plat.guard.Forget(opts.Fresh)
	}
	b.startIdle()
	return b, nil
}

// Destroy disposes the backend.
func (LocalProvider) Destroy(b Backend) error { return b.Dispose() }

// bindsOnlyExisting: bubblewrap makes a path writable by bind-mounting it,
// and Landlock by a rule on an open file, which needs the path to exist; a
// Seatbelt profile names paths as rules.
func (LocalProvider) bindsOnlyExisting(goos string) bool { return goos == "linux" }

// existingPathBinder is implemented by providers that can only make a path
// writable once it exists (see Manager.createGrantedFileLocked).
type existingPathBinder interface {
	bindsOnlyExisting(goos string) bool
}

// newUnsandboxed runs the shell directly (sandbox disabled).
func newUnsandboxed(ctx context.Context, opts CreateOptions) (Backend, error) {
	if opts.StartSession == nil {
		return nil, errors.New("sandbox: no shell starter configured")
	}
	shellPath := opts.Shell
	if shellPath == "" {
		shellPath = "/bin/bash"
	}
	sess, err := opts.StartSession(ctx, SessionOptions{Argv: []string{shellPath}, Dir: opts.Cwd, Env: opts.Env, Timeout: opts.Timeout})
	if err != nil {
		return nil, fmt.Errorf("start the shell: %w", err)
	}
	return &LocalBackend{policy: opts.Policy, sess: sess, wake: -1}, nil
}

// Detach moves the command running in the shell to the background (see
// shell.Session.Detach); it does not wait for the command's lock.
func (b *LocalBackend) Detach(note string, sink func([]byte)) ([]int, error) {
	d, ok := b.sess.(interface {
		Detach(string, func([]byte)) ([]int, error)
	})
	if !ok {
		return nil, errors.New("this shell cannot move a command to the background")
	}
	return d.Detach(note, sink)
}
