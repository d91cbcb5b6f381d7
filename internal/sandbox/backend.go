package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
)

// ErrCrashed marks an execute that failed because the sandboxed shell died;
// the manager rebuilds the sandbox and retries the command once.
var ErrCrashed = errors.New("the sandboxed shell crashed")

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
		return command.Result{}, fmt.Errorf("%w: the sandbox was disposed", ErrCrashed)
	}
	if b.plat != nil {
		if res, blocked := checkCommandText(cmd, b.sess.Cwd(), b.policy.Home, b.rules); blocked {
			return res, nil
		}
	}
	res, err := b.sess.Execute(ctx, cmd)
	if err != nil {
		if ctx.Err() == nil && !b.sess.Alive() {
			return res, fmt.Errorf("%w: %w", ErrCrashed, err)
		}
		return res, err
	}
	if b.plat != nil {
		cwd := res.Cwd
		if cwd == "" {
			cwd = b.sess.Cwd()
		}
		res = detectViolation(res, cwd, b.policy, b.rules)
		if removed := b.plat.lastPlan.revertGit(); len(removed) > 0 {
			res.Blocked, res.BlockedReason, res.BlockedResource = true, commondirReason, removed[0]
			res.Stderr += "sandbox: removed " + strings.Join(removed, ", ") + ": " + commondirReason + "\n"
		}
		for _, line := range b.plat.lastPlan.watch.check() {
			res.Stderr += "sandbox: disabled a new git repository at " + line + "\n"
		}
	}
	return res, nil
}

// commondirReason explains a removed git control file.
const commondirReason = "git control files (commondir, config.worktree, objects/info/alternates) would make git on the host take hooks, config or objects from elsewhere, so the sandbox removed the new one; ask the user to make this change"

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
		// The shell and its jobs are gone: nothing can plant one after this.
		b.plat.lastPlan.revertGit()
		b.plat.lastPlan.watch.check()
		b.plat.lastPlan.watch.close()
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
	return Registry{"local": func() Provider { return LocalProvider{} }}
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

// LocalProvider runs the shell on this machine under the OS adapter.
type LocalProvider struct{}

// Name is "local".
func (LocalProvider) Name() string { return "local" }

// Create wraps a new shell with the platform adapter. Any failure is returned:
// the provider never falls back to an unsandboxed shell.
func (LocalProvider) Create(ctx context.Context, opts CreateOptions) (Backend, error) {
	if opts.StartSession == nil {
		return nil, errors.New("sandbox: no shell starter configured")
	}
	stateDir := opts.StateDir
	if stateDir == "" {
		stateDir = opts.Policy.TempDir
	}
	plat, err := newPlatform(opts.GOOS, stateDir, opts.LookPath)
	if err != nil {
		return nil, err
	}
	shellPath := opts.Shell
	if shellPath == "" {
		shellPath = "/bin/bash"
	}
	argv, err := plat.wrap(opts.Policy, []string{shellPath}, WrapOptions{Cwd: opts.Cwd, Env: opts.Env})
	if err != nil {
		_ = plat.cleanup()
		return nil, err
	}
	sess, err := opts.StartSession(ctx, SessionOptions{Argv: argv, Dir: opts.Cwd, Env: opts.Env, Timeout: opts.Timeout})
	if err != nil {
		_ = plat.cleanup()
		return nil, fmt.Errorf("start the sandboxed shell: %w", err)
	}
	return &LocalBackend{policy: opts.Policy, rules: compileRules(opts.Policy.Blacklist, opts.Policy.Home), plat: plat, sess: sess}, nil
}

// Destroy disposes the backend.
func (LocalProvider) Destroy(b Backend) error { return b.Dispose() }

// bindsOnlyExisting: bubblewrap makes a path writable by bind-mounting it,
// which needs the path to exist; a Seatbelt profile names paths as rules.
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
	return &LocalBackend{policy: opts.Policy, sess: sess}, nil
}
