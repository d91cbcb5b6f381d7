package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// WrapOptions tunes WrapArgv.
type WrapOptions struct {
	// Cwd is the working directory inside the sandbox.
	Cwd string
	// AllowTTY keeps the caller's controlling terminal (no new session), so
	// that a program on a PTY the caller owns (web console engines) keeps job
	// control. Never set it for a terminal that belongs to the user.
	AllowTTY bool
	// Visible lists host paths under /tmp the process must see (read-only)
	// although the private temp directory is mounted over /tmp: an
	// extension's own executable or skill folder.
	Visible []string
	// ExtraEnv adds KEY=VALUE pairs to the sandboxed process's environment.
	ExtraEnv []string
	// Env is the environment the process will get; SSH_AUTH_SOCK and
	// XDG_RUNTIME_DIR found in it are hidden.
	Env []string
	// EmptyFile is an empty read-only file mounted over blacklisted files
	// (default /dev/null, which reads empty and swallows writes).
	EmptyFile string
	// LookPath finds bwrap or sandbox-exec (default exec.LookPath).
	LookPath func(string) (string, error)
	// GOOS selects the platform (default runtime.GOOS).
	GOOS string
	// Backend selects the Linux backend: BackendBwrap (the default) or
	// BackendLandlock, which runs argv through Launcher (the synapse binary).
	Backend  string
	Launcher string
}

// WrapArgv returns the command line that runs argv under the policy: the
// bubblewrap invocation on Linux, sandbox-exec on macOS. It fails closed: when
// the sandbox tool is missing the error says so ("bwrap is required") and
// nothing is returned to run.
func WrapArgv(p Policy, argv []string, opts WrapOptions) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: no command to wrap")
	}
	goos := opts.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	switch goos {
	case "linux":
		if opts.Backend == BackendLandlock {
			spec, err := planLandlock(p, planMounts(p, opts.Env), opts, "")
			if err != nil {
				return nil, err
			}
			return landlockArgv(opts.Launcher, spec, argv)
		}
		bwrap, err := lookBwrap(opts.LookPath)
		if err != nil {
			return nil, err
		}
		mp := planMounts(p, opts.Env)
		return append(bwrapArgs(bwrap, p, mp, opts, opts.EmptyFile), argv...), nil
	case "darwin":
		look := opts.LookPath
		if look == nil {
			look = exec.LookPath
		}
		se, err := look("sandbox-exec")
		if err != nil {
			return nil, fmt.Errorf("sandbox-exec is required to sandbox commands on macOS: %w", err)
		}
		out := []string{se, "-p", seatbeltProfile(p)}
		if len(opts.ExtraEnv) > 0 {
			out = append(append(append(out, "/usr/bin/env"), opts.ExtraEnv...), argv...)
			return out, nil
		}
		return append(out, argv...), nil
	default:
		return nil, fmt.Errorf("sandboxing is not supported on %s: set \"enabled\": false in sandbox.json to run unsandboxed", goos)
	}
}

// platform is the OS adapter a local backend uses: it wraps the shell's argv
// and owns the files the wrapping needs.
type platform struct {
	goos     string
	stateDir string // holds the empty file mounted over hidden files
	look     func(string) (string, error)
	lastPlan mountPlan
	// launcher is set for the Landlock backend (the synapse binary); guard
	// then restores the repositories' protected files after each command.
	launcher string
	guard    *repoguard.Guard
	// cacheDir keeps the scan's folder cache between sessions (scancache.go);
	// "" reads every folder.
	cacheDir string
	scan     *dirCache // begun by the manager; used once, if its roots match
	// cacheOut is the scan's cache, written to cachePath at cleanup.
	cacheOut  []byte
	cachePath string
	// started is closed when the watch of lastPlan is started (wrap
	// starts it while the shell starts); nil when it was started in wrap.
	started chan struct{}
	// confirm, set by wrap for a plan made from the cache before its
	// check, is what confirmPlan runs.
	confirm func() []string
}

// newPlatform prepares the adapter; stateParent receives a private directory
// that cleanup removes.
func newPlatform(goos, stateParent string, look func(string) (string, error)) (*platform, error) {
	if goos == "" {
		goos = runtime.GOOS
	}
	pl := &platform{goos: goos, look: look}
	if goos != "linux" {
		return pl, nil
	}
	if _, err := lookBwrap(look); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(stateParent, "synapse-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot create its state directory in %s: %w", stateParent, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), nil, 0o444); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: cannot create its state directory in %s: %w", stateParent, err)
	}
	pl.stateDir = dir
	return pl, nil
}

// newLandlockPlatform prepares the Landlock adapter: its state directory
// holds the scratch temp directory of a read-only sandbox.
func newLandlockPlatform(stateParent, launcher string) (*platform, error) {
	if launcher == "" {
		return nil, errNoLauncher
	}
	dir, err := os.MkdirTemp(stateParent, "synapse-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot create its state directory in %s: %w", stateParent, err)
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: cannot create its state directory in %s: %w", stateParent, err)
	}
	return &platform{goos: "linux", stateDir: dir, launcher: launcher}, nil
}

// ownPIDNamespace reports whether wrap's command line runs the shell in a
// PID namespace that dies with its first process: bubblewrap's, by
// bwrapArgs (--unshare-all, --die-with-parent). The Landlock launcher's
// shell shares the host's, and sandbox-exec has none.
func (pl *platform) ownPIDNamespace() bool { return pl.launcher == "" && pl.goos == "linux" }

// wrap builds the sandboxed argv for the shell.
func (pl *platform) wrap(p Policy, argv []string, opts WrapOptions) ([]string, error) {
	opts.GOOS, opts.LookPath = pl.goos, pl.look
	if pl.launcher != "" {
		mp := pl.plan(p, opts.Env)
		mp.watch.Start()
		mp.watch.ControlFiles(mp.gitWatch)
		pl.lastPlan = mp
		scratch := ""
		if p.ReadOnly {
			scratch = filepath.Join(pl.stateDir, "tmp")
		}
		spec, err := planLandlock(p, mp, opts, scratch)
		if err != nil {
			return nil, err
		}
		// The agent's own configuration is read-only by Landlock itself.
		pl.guard = repoguard.NewGuard(mp.watch, mp.protect, mp.pin, normalizeDirs(p.Protect, p.Home))
		return landlockArgv(pl.launcher, spec, argv)
	}
	if pl.goos != "linux" {
		return WrapArgv(p, argv, opts)
	}
	bwrap, err := lookBwrap(pl.look)
	if err != nil {
		return nil, err
	}
	cache := pl.takeCache(p)
	if cache == nil {
		return pl.bwrapPlan(bwrap, p, argv, opts, planMounts(p, opts.Env)), nil
	}
	// The plan comes from the cache unchecked (made ahead by the manager,
	// or now): the check (a stat each, 2 300 in a 100 000-folder tree)
	// runs while bubblewrap starts the shell, and LocalProvider.Create
	// asks confirmPlan before the backend exists. When a folder the plan
	// took has changed, the plan is made again from the checked cache,
	// and the shell started again when its mounts differ: no command
	// ever runs under the speculative plan unless the checked one is the
	// same.
	mp, ok := cache.takeAhead(p, opts.Env)
	if !ok {
		mp = planMountsRead(p, opts.Env, cache.speculate)
	}
	out := pl.bwrapPlan(bwrap, p, argv, opts, mp)
	cache.startCheck()
	pl.confirm = func() []string {
		defer pl.keepCache(cache)
		if cache.confirm() {
			return nil
		}
		pl.watchReady()
		pl.lastPlan.watch.Close()
		again := pl.bwrapPlan(bwrap, p, argv, opts, planMountsRead(p, opts.Env, cache.readDir))
		if slices.Equal(again, out) {
			return nil // the same mounts: the shell started stands
		}
		return again
	}
	return out, nil
}

// bwrapPlan starts the watch of mp, a plan of p, and returns the
// bubblewrap command line running argv.
func (pl *platform) bwrapPlan(bwrap string, p Policy, argv []string, opts WrapOptions, mp mountPlan) []string {
	mp.read = nil
	// The state directory sits in the host temp dir: when a writable root
	// holds it, keep it read-only inside so the empty file stays empty.
	if !p.ReadOnly && slices.ContainsFunc(mp.writable, func(w string) bool { return within(pl.stateDir, w) }) {
		mp.protect = append(mp.protect, pl.stateDir)
	}
	// The watches (two thousand inotify_add_watch calls in a large tree)
	// are set while bubblewrap starts the shell, which runs nothing in
	// the tree: LocalProvider.Create waits for them (watchReady) before
	// the backend, and so any command, exists.
	ready := make(chan struct{})
	go func(w *repoguard.Watch, gitWatch []string) {
		defer close(ready)
		w.Start()
		w.ControlFiles(gitWatch)
	}(mp.watch, mp.gitWatch)
	pl.started = ready
	pl.lastPlan = mp
	return append(bwrapArgs(bwrap, p, mp, opts, filepath.Join(pl.stateDir, "empty")), argv...)
}

// confirmPlan waits for the check of a speculative plan (wrap): it
// returns the command line to start the shell again with when the
// checked plan's mounts differ (nil when they are the same).
func (pl *platform) confirmPlan() (again []string) {
	if pl.confirm == nil {
		return nil
	}
	confirm := pl.confirm
	pl.confirm = nil
	return confirm()
}

// watchReady waits for the watch that wrap started to be in place.
func (pl *platform) watchReady() {
	if pl.started != nil {
		<-pl.started
	}
}

// stableDirs is an empty stableDirs for the sandbox wrap last planned:
// its roots are every place a command of it may write (more is only
// less kept).
func (pl *platform) stableDirs(p Policy) *stableDirs {
	if pl == nil {
		return nil
	}
	roots := slices.Concat(pl.lastPlan.writable, normalizeDirs(p.Whitelist, p.Home))
	for _, d := range []string{p.TempDir, pl.stateDir} {
		if d != "" {
			roots = append(roots, filepath.Clean(d))
		}
	}
	return &stableDirs{roots: roots}
}

// plan is planMounts with the folder cache of the scan: the plan made
// ahead when no folder it took has changed since, checked first.
func (pl *platform) plan(p Policy, env []string) mountPlan {
	cache := pl.takeCache(p)
	if cache == nil {
		return planMounts(p, env)
	}
	mp, ok := cache.takeAhead(p, env)
	if ok {
		cache.startCheck()
		if !cache.confirm() {
			mp.watch.Close()
			ok = false
		}
	}
	if !ok {
		mp = planMountsRead(p, env, cache.readDir)
	}
	pl.keepCache(cache)
	mp.read = nil
	return mp
}

// takeCache is the folder cache of p's scan: the manager's, begun early,
// when it is for the same roots, else one loaded now (nil without a
// cache folder).
func (pl *platform) takeCache(p Policy) *dirCache {
	cache := pl.scan
	pl.scan = nil
	if key := scanKey(p); !cache.matches(key) {
		cache = openDirCache(pl.cacheDir, key, nil)
	}
	return cache
}

// keepCache keeps what the scan read for the file written at cleanup.
func (pl *platform) keepCache(cache *dirCache) {
	if data := cache.encode(); data != nil {
		pl.cacheOut, pl.cachePath = data, cache.path
	}
}

// cleanup removes the adapter's files and stops watching for repositories.
func (pl *platform) cleanup() error {
	pl.confirmPlan() // joins the check
	pl.watchReady()
	pl.lastPlan.watch.Close()
	_ = writeCache(pl.cachePath, pl.cacheOut) // unwritten, it only costs the next scan time
	pl.cacheOut = nil
	if pl.stateDir == "" {
		return nil
	}
	err := removeTree(pl.stateDir)
	pl.stateDir = ""
	return err
}
