package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/fsutil"
)

// ManagerOptions configure a Manager.
type ManagerOptions struct {
	// ConfigPath is sandbox.json: loaded when Config is the zero value, and
	// written by AddPermanentWhitelist. The directory holding it is the
	// agent's own configuration ($SYNAPSE_HOME): commands may read it but
	// never change it, even inside a writable root, and its credential
	// files (AgentSecrets) are hidden from them.
	ConfigPath string
	// Config, when set, is used as given (its Enabled is taken literally).
	Config Config
	// Cwd is the workspace (default: the process's working directory):
	// writable to commands, and where every (re)started shell begins. It
	// is fixed for the manager's life; a `cd` in the shell never changes
	// what is writable.
	Cwd string
	// Env is the environment of the shell (default: the process's). The
	// agent's provider credentials and the HideEnv names are removed from it.
	Env []string
	// HideEnv names more variables the shell must not see (the names in
	// settings.json "env"); ProviderCredentials are always hidden.
	HideEnv []string
	// CommandTimeout is the shell's per-command timeout.
	CommandTimeout time.Duration
	// ReadOnly gives a sandbox without a writable workspace (explore agents).
	ReadOnly bool
	// TempDir is the host temp directory (default os.TempDir()). On Linux
	// the session's private temp directory is created in it and mounted as
	// /tmp (TMPDIR=/tmp) inside the sandbox; the host's own temp directory
	// is not writable to commands. Elsewhere (Seatbelt cannot remap a path)
	// it is added to the whitelist. The platform's private files go below
	// it too.
	TempDir string
	// Visible lists host directories under the host /tmp that commands
	// may read at their own path (the agent's scratch directory of cut
	// outputs, which the model is told to read): bound read-only over the
	// private /tmp.
	Visible []string
	// PrivateTmp, when set, is the private temp directory to mount as /tmp
	// (a sub-agent shares its parent's): it must be a directory of this
	// user with mode 0700, and the manager does not remove it.
	PrivateTmp string
	// SubAgent marks a sub-agent's manager: it leaves the notices of the
	// repository guard's background passes to the session's own manager,
	// which shows its warnings.
	SubAgent bool
	// Home expands `~` in policy entries (default: HOME from Env).
	Home string
	// StartSession starts the persistent shell (app wires shell.Start).
	StartSession StartSession
	// Registry lists the providers (default DefaultRegistry()).
	Registry Registry
	// Probe checks that the platform can sandbox (default: a real bwrap run
	// on Linux; sandbox-exec on PATH on macOS).
	Probe func(ctx context.Context) error
	// ProbeLandlock checks the Landlock backend where bwrap cannot run and
	// returns its ABI (default: a real launch of Launcher).
	ProbeLandlock func(ctx context.Context) (int, error)
	// Launcher is the synapse binary, which runs itself as the Landlock
	// launcher (LauncherCommand); "" leaves the Landlock backend out.
	Launcher string
	// Backend, when set (BackendBwrap or BackendLandlock), is taken without
	// probing: a sub-agent's manager uses its parent's.
	Backend string
	// GOOS, LookPath and Shell are for tests and unusual systems.
	GOOS     string
	LookPath func(string) (string, error)
	Shell    string
}

// Manager owns one sandboxed shell and the policy it runs under. Its methods
// are safe for concurrent use; commands on the one shell run one at a time.
type Manager struct {
	opts     ManagerOptions
	cfg      Config
	warnings []string
	provider Provider // nil when the sandbox is off
	enabled  bool
	reason   string // why it is on or off
	abi      int    // the Landlock ABI, under the Landlock backend
	note     string // why this backend was chosen, when not the first one
	// remembered: the backend was chosen on the word of earlier probes
	// (choiceMemoName), forgotten when it then fails to start (getLocked).
	remembered bool

	mu      sync.Mutex
	backend Backend
	// reset says why the shell was last replaced by a fresh one (a grant,
	// a mode switch, a crash), until a command's result has told the
	// model: its directory and exported variables are gone.
	reset string
	// jobs counts the background jobs running in the shell (the agent's
	// job table), so a rebuild that ends them says so; nil: none kept.
	jobs     func() int
	runtimeW []string
	privTmp  string // the private temp directory mounted as /tmp ("" until made)
	ownTmp   bool   // privTmp was made by this manager, which removes it
	// fresh are the repositories a command created under an earlier
	// backend (harmless then): the next one keeps checking them rather
	// than trusting them as its scan's own, since an extension process
	// started before it is not held by its read-only mounts.
	fresh []string
	// scan is the mount plan's folder cache, loaded in the background
	// from NewManager on (while the platform is probed), for the first
	// sandbox, which has it checked while its shell starts; nil once taken.
	scan *dirCache
	// preparing: Prepare's creation is under way; prepared: the error it
	// ended with, for the next command to report.
	preparing bool
	prepared  error
	// cancelPrep cancels Prepare's creation while it runs: a command
	// waiting for it cannot leave the lock it holds, so a cancelled one
	// (Ctrl+C) ends the creation instead, and so does Shutdown, after
	// which it must not happen at all (cancelPrepare).
	cancelPrep atomic.Pointer[context.CancelFunc]
	// untouched: the backend is Prepare's and has run no command, so a
	// rebuild of it (a grant, a mode switch) resets nothing the model
	// knows of and is not told.
	untouched bool
}

// NewManager loads the configuration and decides whether commands will be
// sandboxed (see the package comment for the default).
func NewManager(opts ManagerOptions) (*Manager, error) {
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	// The one place the shell's environment is built: commands chosen by
	// the model never see the agent's own credentials.
	opts.Env = scrubEnv(opts.Env, append(ProviderCredentials(), opts.HideEnv...))
	if opts.Home == "" {
		opts.Home = envValue(opts.Env, "HOME")
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot find the working directory: %w", err)
		}
		opts.Cwd = wd
	}
	if opts.Registry == nil {
		opts.Registry = DefaultRegistry()
	}
	if opts.GOOS == "" {
		opts.GOOS = runtime.GOOS
	}
	m := &Manager{opts: opts}
	if isZeroConfig(opts.Config) && opts.ConfigPath != "" {
		cfg, warns, err := LoadConfig(opts.ConfigPath)
		if err != nil {
			return nil, err
		}
		m.cfg, m.warnings = cfg, warns
	} else {
		m.cfg = opts.Config
		m.cfg.EnabledSet = true
		if m.cfg.Provider == "" {
			m.cfg.Provider = "local"
		}
		for _, e := range defaultBlacklist {
			if !slices.Contains(m.cfg.Policy.Blacklist, e) {
				m.cfg.Policy.Blacklist = append(m.cfg.Policy.Blacklist, e)
			}
		}
	}
	var warns []string
	m.cfg, warns = resolveEntries(m.cfg, opts.Env, opts.Home, m.configName())
	m.warnings = append(m.warnings, warns...)
	if isRoot(opts.Cwd) {
		m.warnings = append(m.warnings, "the working directory is /, which stays read-only in the sandbox (a writable / would leave no sandbox); start Synapse in a project directory to let commands change files")
	}
	if p := m.noticesPath(); p != "" && !opts.SubAgent {
		m.warnings = append(m.warnings, takeNotices(p)...)
	}
	if dir := m.agentHome(); dir != "" {
		for _, name := range agentSecrets {
			if p := filepath.Join(dir, name); !slices.Contains(m.cfg.Policy.Blacklist, p) {
				m.cfg.Policy.Blacklist = append(m.cfg.Policy.Blacklist, p)
			}
		}
	}
	switch {
	case !m.cfg.Enabled:
		m.reason = "the sandbox is turned off (\"enabled\": false in " + m.configName() + "): commands run without OS restrictions"
		return m, nil
	}
	if opts.GOOS == "linux" {
		m.planAheadLocked()
	}
	prov, err := opts.Registry.New(m.cfg.Provider)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.configName(), err)
	}
	if lp, ok := prov.(LocalProvider); ok && opts.GOOS == "linux" {
		chosen, err := m.chooseLocal(lp)
		if err != nil {
			// Fail-closed: enabled, and every command refused with why.
			m.provider, m.enabled = unavailableProvider{why: err}, true
			m.reason = err.Error()
			m.warnings = append(m.warnings, m.reason)
			return m, nil
		}
		prov = chosen
	} else if !m.cfg.EnabledSet {
		probe := opts.Probe
		if probe == nil {
			probe = func(ctx context.Context) error { return probePlatform(ctx, opts.GOOS, opts.LookPath) }
		}
		if err := probe(context.Background()); err != nil {
			err = fmt.Errorf("the sandbox cannot run on this machine, so every command is refused: %w; to run commands without it, set \"enabled\": false in %s", err, m.configName())
			m.provider, m.enabled, m.reason = unavailableProvider{why: err}, true, err.Error()
			m.warnings = append(m.warnings, m.reason)
			return m, nil
		}
	}
	m.provider, m.enabled = prov, true
	if m.cfg.EnabledSet {
		m.reason = "enabled in " + m.configName() + " (fail-closed: if the sandbox cannot start, commands are refused)"
	} else {
		m.reason = "on by default: the platform sandbox works on this machine"
	}
	if m.note != "" {
		m.reason += "; " + m.note
	}
	return m, nil
}

// agentSecrets are the files of the agent home that hold credentials:
// settings.json "env" (provider keys) and the MCP servers' env and headers.
var agentSecrets = []string{"settings.json", filepath.Join("mcp", "mcp_servers.json")}

// AgentSecrets names the credential files of the agent home (relative to
// it), which sandboxed commands can neither read nor write.
func AgentSecrets() []string { return slices.Clone(agentSecrets) }

// noticesPath is where background passes of the repository guard record
// what they disabled ("" without an agent home).
func (m *Manager) noticesPath() string {
	if dir := m.agentHome(); dir != "" {
		return filepath.Join(dir, noticesName)
	}
	return ""
}

// scanCachePath is the folder of the mount plan's scan caches ("" without
// an agent home).
func (m *Manager) scanCachePath() string {
	if dir := m.agentHome(); dir != "" {
		return filepath.Join(dir, "cache")
	}
	return ""
}

// agentHome is the directory of sandbox.json, resolved ("" without one).
func (m *Manager) agentHome() string {
	if m.opts.ConfigPath == "" {
		return ""
	}
	return resolvePath(filepath.Dir(m.opts.ConfigPath), "/", m.opts.Home)
}

func isZeroConfig(c Config) bool {
	return !c.Enabled && !c.EnabledSet && c.Provider == "" && c.Policy.Whitelist == nil && c.Policy.Blacklist == nil && !c.Policy.AllowNetwork
}

func (m *Manager) configName() string {
	if m.opts.ConfigPath == "" {
		return "sandbox.json"
	}
	return m.opts.ConfigPath
}

// bwrapCause names the likely cause of a bwrap failure from its message,
// only where the message points at one: a /proc that cannot be mounted (a
// container that masks it) is not a user-namespace setting.
func bwrapCause(out string) string {
	switch {
	case strings.Contains(out, "uid map"), strings.Contains(out, "new namespace"), strings.Contains(out, "setting up uid"):
		return "; unprivileged user namespaces are refused (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or AppArmor's apparmor_restrict_unprivileged_userns)"
	case strings.Contains(out, "proc"):
		return "; /proc cannot be mounted in a new namespace here (a container that masks /proc, or runs without its own PID namespace)"
	case strings.Contains(out, "RTM_NEWADDR"), strings.Contains(out, "loopback"):
		return "; the loopback device cannot be set up in a new network namespace (AppArmor's userns restriction on Ubuntu 24.04 does this)"
	}
	return ""
}

// probePlatform checks that the OS sandbox works here: on Linux it runs
// bwrap once with the namespaces the sandbox needs.
func probePlatform(ctx context.Context, goos string, look func(string) (string, error)) error {
	switch goos {
	case "linux":
		bwrap, err := lookBwrap(look)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bwrap, "--die-with-parent", "--unshare-all", "--new-session", "--cap-drop", "ALL",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true").CombinedOutput()
		if err != nil {
			return fmt.Errorf("bwrap is installed but cannot create a sandbox (%v: %s)%s", err, firstLine(string(out)), bwrapCause(string(out)))
		}
		return nil
	case "darwin":
		if look == nil {
			look = exec.LookPath
		}
		if _, err := look("sandbox-exec"); err != nil {
			return fmt.Errorf("sandbox-exec is missing: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("no sandbox is available for %s", goos)
	}
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}

// providerCredentials are the agent's own model credentials. (AWS keys and
// Google key files are the user's for every AWS or Google tool, not the
// agent's own: commands keep them; a Bedrock API key serves only Bedrock.)
var providerCredentials = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AWS_BEARER_TOKEN_BEDROCK"}

// ProviderCredentials names the variables holding the agent's own model
// credentials, which no sandboxed command sees.
func ProviderCredentials() []string { return slices.Clone(providerCredentials) }

// ScrubEnv returns env without the agent's provider credentials and the
// variables named in hide: the environment for a process the agent starts
// on the model's behalf when no manager's Env() is at hand.
func ScrubEnv(env []string, hide ...string) []string {
	return scrubEnv(env, append(ProviderCredentials(), hide...))
}

// scrubEnv returns env without the variables named in hide.
func scrubEnv(env, hide []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(hide, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Env is the environment commands get (the shell's, and `synapse sandbox
// exec`'s): the configured one without the hidden variables.
func (m *Manager) Env() []string { return slices.Clone(m.opts.Env) }

// ReadOnly reports whether this sandbox allows no writes (explore agents).
func (m *Manager) ReadOnly() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.opts.ReadOnly
}

// SetReadOnly switches the sandbox to read-only (plan mode) or back; the
// next command gets a sandbox built from the new policy (shell state is
// reset). With the sandbox off nothing could be enforced, so it refuses.
func (m *Manager) SetReadOnly(on bool) error {
	if !m.enabled {
		return fmt.Errorf("the sandbox is off (%s), so a read-only mode cannot be enforced; enable it in sandbox.json", m.reason)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opts.ReadOnly == on {
		return nil
	}
	m.opts.ReadOnly = on
	if on {
		return m.rebuildLocked("the sandbox became read-only")
	}
	return m.rebuildLocked("the sandbox became writable again")
}

// Enabled reports whether commands run under the OS sandbox.
func (m *Manager) Enabled() bool { return m.enabled }

// Warnings are the configuration problems found when loading sandbox.json.
func (m *Manager) Warnings() []string { return slices.Clone(m.warnings) }

// BuildPolicy merges the workspace, the configured whitelist, the user's
// grants and the scratch directory, with the blacklist and network setting.
// It takes no directory on purpose: where the shell stands never widens
// what commands may write.
func (m *Manager) BuildPolicy() Policy {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.buildPolicyLocked()
}

func (m *Manager) buildPolicyLocked() Policy {
	var w []string
	if ws := m.opts.Cwd; !isRoot(ws) {
		w = append(w, ws)
	}
	w = append(w, m.cfg.Policy.Whitelist...)
	w = append(w, m.runtimeW...)
	tmp := ""
	if m.opts.GOOS == "linux" {
		tmp = m.privTmp // made by the first sandbox or in-process /tmp access (ensureTmpLocked)
	} else {
		w = append(w, m.opts.TempDir)
		tmp = resolvePath(m.opts.TempDir, "/", m.opts.Home)
	}
	return Policy{
		Whitelist:    normalizeDirs(w, m.opts.Home),
		Blacklist:    slices.Clone(m.cfg.Policy.Blacklist),
		AllowNetwork: m.cfg.Policy.AllowNetwork,
		ReadOnly:     m.opts.ReadOnly,
		TempDir:      tmp,
		Visible:      normalizeDirs(m.opts.Visible, m.opts.Home),
		Home:         m.opts.Home,
		Protect:      normalizeDirs([]string{m.agentHome()}, m.opts.Home),
	}
}

// ensureTmpLocked makes the session's private temp directory (Linux, a
// writable sandbox): created exclusively with mode 0700 in the host temp
// directory, then checked with Lstat, so no other user's directory or
// planted symlink can stand in for it. Nothing in the host temp directory
// is then within a command's reach, nor scanned when a sandbox starts.
func (m *Manager) ensureTmpLocked() error {
	if m.privTmp != "" || !m.enabled || m.opts.ReadOnly || m.opts.GOOS != "linux" {
		return nil
	}
	dir, own := m.opts.PrivateTmp, false
	if dir == "" {
		// Named like the agent's scratch directories (prefix and pid), so
		// that fsutil.RemoveStale also removes those of crashed processes.
		d, err := os.MkdirTemp(m.opts.TempDir, fsutil.ScratchPrefix+strconv.Itoa(os.Getpid())+"-tmp-*")
		if err != nil {
			return fmt.Errorf("sandbox: cannot create the private temp directory in %s: %w", m.opts.TempDir, err)
		}
		dir, own = d, true
	}
	if err := checkPrivateDir(dir); err != nil {
		if own {
			_ = os.Remove(dir)
		}
		return err
	}
	real, err := filepath.EvalSymlinks(dir) // the temp dir itself may sit behind a link (macOS /tmp, /var/folders)
	if err != nil {
		return fmt.Errorf("sandbox: private temp directory %s: %w", dir, err)
	}
	m.privTmp, m.ownTmp = real, own
	return nil
}

// PrivateTmp is the session's private temp directory on the host (mounted
// as /tmp inside the sandbox), or "" when there is none (sandbox off,
// read-only, not Linux, or not made yet).
func (m *Manager) PrivateTmp() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = m.ensureTmpLocked()
	return m.privTmp
}

// HostPath maps a path as commands see it to the file it is on the host:
// /tmp/… inside the sandbox is the private temp directory (except where a
// writable root under the host's /tmp is bound over it at its own path).
// read, write and edit act on the host and use it for every path.
func (m *Manager) HostPath(path string) string {
	if !m.enabled || m.landlock() {
		return path // Landlock maps nothing: /tmp is the host's, TMPDIR the private one
	}
	m.mu.Lock()
	_ = m.ensureTmpLocked() // a failure leaves /tmp unmapped: writes there are then refused
	m.mu.Unlock()
	p, _ := m.activePolicy()
	return p.HostPath(path)
}

// GetSandbox returns the current backend, creating it on first use (its
// shell starts in the workspace). A creation failure is returned: nothing
// falls back to running unsandboxed.
func (m *Manager) GetSandbox(ctx context.Context) (Backend, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.getLocked(ctx)
}

func (m *Manager) getLocked(ctx context.Context) (Backend, error) {
	if m.backend != nil {
		return m.backend, nil
	}
	if err := m.prepared; err != nil {
		// Prepare's creation failed moments ago: this command reports why
		// (the next one tries again).
		m.prepared = nil
		return nil, err
	}
	if err := m.ensureTmpLocked(); err != nil {
		return nil, fmt.Errorf("cannot create the sandbox, so the command was not run: %w", err)
	}
	opts := CreateOptions{
		Policy:       m.buildPolicyLocked(),
		Cwd:          m.opts.Cwd,
		Env:          m.opts.Env,
		Timeout:      m.opts.CommandTimeout,
		StartSession: m.opts.StartSession,
		StateDir:     m.opts.TempDir,
		GOOS:         m.opts.GOOS,
		LookPath:     m.opts.LookPath,
		Shell:        m.opts.Shell,
		Fresh:        m.fresh,
		Sweeper:      m.opts.Launcher,
		Notices:      m.noticesPath(),
		ScanCache:    m.scanCachePath(),
		scan:         m.scan,
	}
	m.scan = nil
	var (
		b   Backend
		err error
	)
	if !m.enabled {
		b, err = newUnsandboxed(ctx, opts)
	} else {
		b, err = m.provider.Create(ctx, opts)
		if err != nil && m.remembered {
			// The backend passed its probe here before and fails now (an
			// AppArmor profile or a limit changed since): the memo goes,
			// so the next start probes and chooses the backend afresh.
			// The command stays refused: the sandbox never degrades.
			m.remembered = false
			m.forgetChoice()
			err = fmt.Errorf("%w (the %s backend passed its probe on this machine before; start Synapse again to probe afresh and choose the backend that works)", err, m.Backend())
		}
		if err != nil {
			err = fmt.Errorf("cannot create the sandbox, so the command was not run: %w", err)
		}
	}
	if err != nil {
		return nil, err
	}
	m.backend = b
	return b, nil
}

// Prepare creates the sandbox in the background when it does not exist
// yet, so that the command the model is still writing finds its shell
// ready: the agent calls it when a tool call begins (Bash.Prepare). The
// start (bubblewrap, the repository guard's scan and watches: 20–60 ms,
// the most in a large tree) then overlaps the model's streaming. A
// creation that fails is reported by the next command, as its own would
// be.
func (m *Manager) Prepare() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.backend != nil || m.preparing {
		return
	}
	m.preparing = true
	ctx, cancel := context.WithCancel(context.Background())
	m.cancelPrep.Store(&cancel)
	go func() {
		defer cancel()
		m.mu.Lock()
		defer m.mu.Unlock()
		defer m.cancelPrep.Store(nil)
		m.preparing = false
		if m.backend != nil || ctx.Err() != nil {
			return
		}
		if _, err := m.getLocked(ctx); err != nil {
			if ctx.Err() == nil { // a cancelled one is the waiting command's to tell
				m.prepared = err
			}
			return
		}
		m.untouched = true
	}()
}

// cancelPrepare ends Prepare's creation if one runs.
func (m *Manager) cancelPrepare() {
	if cancel := m.cancelPrep.Load(); cancel != nil {
		(*cancel)()
	}
}

// destroyLocked disposes the current backend (if any).
func (m *Manager) destroyLocked() error {
	b := m.backend
	if b == nil {
		return nil
	}
	m.backend, m.untouched = nil, false
	if m.provider != nil && b.Sandboxed() {
		err := m.provider.Destroy(b)
		if f, ok := b.(interface{ freshRepos() []string }); ok {
			m.fresh = f.freshRepos() // after the last check: the harmless ones
		}
		return err
	}
	return b.Dispose()
}

// Execute runs a native command in the sandboxed shell. cwd is where the
// caller meant it to run (the shell's directory when its call began): when
// the shell was replaced since (a grant, a crash before the command reached
// it), the command runs there in a subshell, so relative paths keep their
// meaning while the new shell stays in the workspace. After a rebuild the
// result tells the model that the shell's state was reset.
//
// A shell found dead before the command reached it is rebuilt and the
// command run once more. A shell that died while the command ran is rebuilt
// but the command is not run again: it may have done part of its work (an
// append, a push), so the result says so and the model decides.
func (m *Manager) Execute(ctx context.Context, cmd, cwd string) (command.Result, error) {
	for retried := false; ; retried = true {
		stop := context.AfterFunc(ctx, m.cancelPrepare)
		m.mu.Lock()
		b, err := m.getLocked(ctx)
		reset := m.reset
		m.untouched = false
		m.mu.Unlock()
		stop()
		if err != nil {
			return command.Result{}, err
		}
		line, elsewhere := cmd, ""
		if now := b.Cwd(); cwd != "" && now != "" && cwd != now {
			line, elsewhere = inDir(cwd, cmd), cwd
		}
		res, err := b.Execute(ctx, line)
		var ce *crashError
		if err == nil || !errors.As(err, &ce) || ctx.Err() != nil {
			if err == nil && reset != "" {
				m.mu.Lock()
				if m.backend == b {
					m.reset = ""
				}
				m.mu.Unlock()
				res.Stderr = addLine(res.Stderr, m.resetNote(reset, elsewhere))
			}
			return res, err
		}
		m.mu.Lock()
		if m.backend == b {
			_ = m.destroyLocked() // the shell is gone; a failed cleanup must not block the next one
		}
		if !ce.delivered {
			m.reset = "the shell had died before this command reached it (" + textOf(ce.err) + ")"
			m.mu.Unlock()
			if retried {
				return command.Result{}, fmt.Errorf("the new shell also died before the command reached it, so it was not run: %w", err)
			}
			continue
		}
		m.reset = ""
		m.mu.Unlock()
		res.ExitCode = 1
		res.Stderr = addLine(res.Stderr, fmt.Sprintf("synapse: the shell died while this command ran (%s), so it was not run again: "+
			"its side effects may be partial; check what it did before repeating it. "+
			"The next command runs in a new shell that starts in %s with a fresh environment: "+
			"the current directory and exported variables of earlier commands are gone; set them again if needed.",
			textOf(ce.err), m.opts.Cwd))
		return res, nil
	}
}

// resetNote tells the model that the shell it used before is gone.
func (m *Manager) resetNote(why, elsewhere string) string {
	s := "synapse: the shell was restarted (" + why + "): it now starts in " + m.opts.Cwd +
		" with a fresh environment; the current directory, exported variables and functions of earlier commands are gone, so set them again if needed."
	if elsewhere != "" {
		s += " This command ran in " + elsewhere + ", where it was first run; the shell itself stays in " + m.opts.Cwd + "."
	}
	return s
}

// addLine appends line to text on a line of its own.
func addLine(text, line string) string {
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + line + "\n"
}

// inDir runs cmd in dir inside a subshell, leaving the shell where it is.
// The closing parenthesis has a line of its own so a here-document in cmd
// still ends.
func inDir(dir, cmd string) string {
	return "(\ncd -- '" + strings.ReplaceAll(dir, "'", `'\''`) + "' || exit 1\n" + strings.TrimRight(cmd, "\n") + "\n)"
}

// textOf says how the shell ended (a session's Detail when it has one).
func textOf(err error) string {
	var d interface{ Detail() string }
	if errors.As(err, &d) && d.Detail() != "" {
		return d.Detail()
	}
	var ce *crashError
	if errors.As(err, &ce) {
		err = ce.err
	}
	return firstLine(err.Error())
}

// Cwd is the sandboxed shell's current directory (the workspace before the
// first command and after a rebuild).
func (m *Manager) Cwd() string {
	m.mu.Lock()
	b := m.backend
	m.mu.Unlock()
	if b != nil {
		if c := b.Cwd(); c != "" {
			return c
		}
	}
	return m.opts.Cwd
}

// Detach moves the native command running now to the background, where it
// keeps running in the same shell and sandbox (the user's Ctrl+B): the
// running Execute returns at once with note on stderr, what the command
// writes later goes to sink, and its process groups (host pids) are
// returned. It fails when no command is running.
func (m *Manager) Detach(note string, sink func([]byte)) ([]int, error) {
	m.mu.Lock()
	b := m.backend
	m.mu.Unlock()
	d, ok := b.(interface {
		Detach(string, func([]byte)) ([]int, error)
	})
	if !ok {
		return nil, errors.New("no command is running")
	}
	groups, err := d.Detach(note, sink)
	if err != nil {
		return nil, fmt.Errorf("move the command to the background: %w", err)
	}
	return groups, nil
}

// Restart replaces the shell with a fresh one in the initial directory
// (the Bash tool's restart=true): shell state is gone, the policy stays.
func (m *Manager) Restart(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	derr := m.destroyLocked()
	m.reset = "" // the Bash tool says so itself
	if _, err := m.getLocked(ctx); err != nil {
		return err
	}
	if derr != nil {
		return fmt.Errorf("restart: the old shell did not stop cleanly: %w", derr)
	}
	return nil
}

// AddRuntimeWhitelist makes path writable for the rest of this manager's
// life; the sandbox is rebuilt (shell state is reset) on the next command.
// A path that does not exist yet is created as an empty file first (see
// createGrantedFile): a grant is for exactly that file, never its directory.
func (m *Manager) AddRuntimeWhitelist(path string) error {
	abs, err := m.absArg(path)
	if err != nil {
		return err
	}
	if err := m.GrantRefusal(abs); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.createGrantedFileLocked(abs); err != nil {
		return err
	}
	if !slices.Contains(m.runtimeW, abs) {
		m.runtimeW = append(m.runtimeW, abs)
	}
	return m.rebuildLocked("access to " + abs + " was granted")
}

// GrantRefusal says why path can never be made writable (it is on the
// blacklist: such a grant would only stop bubblewrap from starting), or
// returns nil. The permission prompt offers only "deny" for such a path.
func (m *Manager) GrantRefusal(path string) error {
	abs, err := m.absArg(path)
	if err != nil {
		return err
	}
	m.mu.Lock()
	rules := compileRules(m.cfg.Policy.Blacklist, m.opts.Home)
	m.mu.Unlock()
	if entry, ok := blacklisted(rules, abs, m.opts.Home); ok {
		return blacklistRefusal(path, entry)
	}
	return nil
}

// RemoveRuntimeWhitelist withdraws a runtime grant (an "allow once").
func (m *Manager) RemoveRuntimeWhitelist(path string) error {
	abs, err := m.absArg(path)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.Index(m.runtimeW, abs)
	if i < 0 {
		return nil
	}
	m.runtimeW = slices.Delete(m.runtimeW, i, i+1)
	return m.rebuildLocked("the one-time access to " + abs + " was withdrawn")
}

// AddPermanentWhitelist writes path into sandbox.json (keeping every other
// key) and adds it to this manager's whitelist.
func (m *Manager) AddPermanentWhitelist(path string) error {
	abs, err := m.absArg(path)
	if err != nil {
		return err
	}
	if err := m.GrantRefusal(abs); err != nil {
		return err
	}
	if m.opts.ConfigPath == "" {
		return errors.New("sandbox: no sandbox.json path is configured, so the grant cannot be saved")
	}
	m.mu.Lock()
	err = m.createGrantedFileLocked(abs)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	if err := addWhitelistToFile(m.opts.ConfigPath, abs); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !slices.Contains(m.cfg.Policy.Whitelist, abs) {
		m.cfg.Policy.Whitelist = append(m.cfg.Policy.Whitelist, abs)
	}
	if !slices.Contains(m.runtimeW, abs) {
		m.runtimeW = append(m.runtimeW, abs)
	}
	return m.rebuildLocked("access to " + abs + " was granted permanently")
}

// createGrantedFileLocked makes a grant of a path that does not exist yet
// enforceable. bubblewrap can only bind what exists, so a missing whitelist
// entry is skipped and the command the user just allowed (`echo hi >
// /opt/x/new.txt`) would be blocked again. When the path is missing, its
// parent is an existing directory, it is not already writable through
// another root and not on the blacklist, the path is created here, on the
// host and as the user who granted it, as an empty file (O_EXCL: no
// symlink followed; mode 0666 less the umask); the next sandbox binds
// exactly that file read-write. The directory around it stays read-only.
//
// The grant is taken to be for a file: that is what a blocked redirection,
// touch, cp or tee names. A directory that does not exist yet (mkdir) cannot
// be granted this way; create it first, then allow it. The file is left in
// place when an "allow once" grant is withdrawn: the allowed command may
// have meant to create it, even empty. Nothing is created while the sandbox
// is off or read-only (a grant changes no mount), nor for a provider that
// does not bind paths (Seatbelt on macOS allows a path that is yet to exist).
func (m *Manager) createGrantedFileLocked(abs string) error {
	if !m.enabled || m.opts.ReadOnly {
		return nil
	}
	if b, ok := m.provider.(existingPathBinder); !ok || !b.bindsOnlyExisting(m.opts.GOOS) {
		return nil
	}
	target := resolvePath(abs, "/", m.opts.Home)
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		return nil // it exists (or cannot be examined): bind it as it is
	}
	if st, err := os.Stat(filepath.Dir(target)); err != nil || !st.IsDir() {
		return nil // no parent directory: nothing to bind, the grant stays a rule
	}
	p := m.buildPolicyLocked()
	if p.TempDir != "" && within(target, p.TempDir) {
		return nil // the private temp directory is writable already
	}
	for _, w := range p.Whitelist {
		if w != target && within(target, w) && exists(w) {
			return nil // already writable: creating it would be a side effect only
		}
	}
	if _, hidden := matchRules(compileRules(p.Blacklist, m.opts.Home), target); hidden {
		return nil
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666) // O_EXCL: never through a symlink
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil // created meanwhile: bind what is there
		}
		return fmt.Errorf("sandbox: cannot create %s so that the sandbox can allow writing exactly that file: %w", target, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sandbox: create %s: %w", target, err)
	}
	return nil
}

// CountJobs tells the manager how to count the background jobs running in
// its shell (the agent's job table), so that a rebuild, which ends them with
// the shell, says so in the next command's result.
func (m *Manager) CountJobs(running func() int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.jobs = running
}

// rebuildLocked drops the backend so the next command gets one built from
// the new policy, in the workspace with a fresh environment (the next
// command's result says why). A running command on the old one is killed
// with it.
func (m *Manager) rebuildLocked(why string) error {
	m.prepared = nil // a failure under the old policy says nothing of the new
	if m.backend == nil {
		if m.scan != nil {
			m.planAheadLocked() // a grant before the first command (--allow-path)
		}
		return nil
	}
	if m.jobs != nil {
		switch n := m.jobs(); {
		case n == 1:
			why += "; the background job it ran ended with it (job:list shows it)"
		case n > 1:
			why += fmt.Sprintf("; the %d background jobs it ran ended with it (job:list shows them)", n)
		}
	}
	if !m.untouched {
		m.reset = why
	}
	if err := m.destroyLocked(); err != nil {
		return fmt.Errorf("rebuild the sandbox: %w", err)
	}
	return nil
}

// planAheadLocked starts, in the background, the plan the first sandbox
// will make (its private /tmp aside, which is not scanned); again when
// the policy changes before that sandbox exists, so that it takes a plan
// of its own policy rather than drop one of the policy before.
func (m *Manager) planAheadLocked() {
	p := m.buildPolicyLocked()
	m.scan = openDirCache(m.scanCachePath(), scanKey(p), &planAhead{p: p, env: m.opts.Env})
}

func (m *Manager) absArg(path string) (string, error) {
	if path == "" {
		return "", errors.New("sandbox: empty path")
	}
	p := expandHome(path, m.opts.Home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(m.Cwd(), p)
	}
	p = filepath.Clean(p)
	if p == "/" {
		return "", fmt.Errorf("sandbox: will not make / writable: %s", rootGrantAdvice)
	}
	return p, nil
}

// isRoot reports whether dir is the file system root, which never becomes
// a writable workspace.
func isRoot(dir string) bool { return dir != "" && filepath.Clean(dir) == "/" }

// rootGrantAdvice explains the refusal of "/" as a writable path: binding
// the whole root read-write also covers the private /proc and /dev, so
// nothing of the sandbox would remain.
const rootGrantAdvice = `a writable / leaves no sandbox at all; allow the directories you need, or set "enabled": false in sandbox.json to run without the sandbox`

// CheckPath applies the policy to an in-process file access (read, write,
// edit): symlinks are resolved first. With the sandbox off nothing is blocked.
func (m *Manager) CheckPath(path string, write bool) (blocked bool, reason, resource string) {
	if !m.enabled {
		return false, "", ""
	}
	p, cwd := m.activePolicy()
	if m.opts.GOOS == "linux" {
		// Checked on the path as named and where it leads: a link a command
		// made in its /tmp to "/tmp/x" means its own /tmp/x, but the host
		// would follow it into the host's /tmp.
		lit := filepath.Clean(expandHome(path, p.Home))
		if !filepath.IsAbs(lit) {
			lit = filepath.Join(cwd, lit)
		}
		for _, q := range []string{lit, resolvePath(path, cwd, p.Home)} {
			if p.hostTmpHidden(q) {
				if m.landlock() && !p.ReadOnly {
					return true, landlockHostTmpReason, q
				}
				if p.ReadOnly {
					return true, readOnlyHostTmpReason, q
				}
				return true, hostTmpReason, q
			}
		}
	}
	return p.Check(path, cwd, write)
}

// ActivePolicy is the policy native commands run under now: the live
// sandbox's, or the one the next sandbox gets. Extension processes (skill
// scripts, stdio MCP servers) run under exactly this policy; the directory
// they start in is never added to it (a `cd ~` must not make ~ writable).
func (m *Manager) ActivePolicy() Policy {
	p, _ := m.activePolicy()
	return p
}

// activePolicy is the policy commands run under now (the live sandbox's, or
// the one the next sandbox gets) and the shell's current directory, against
// which relative paths resolve (and nothing else).
func (m *Manager) activePolicy() (Policy, string) {
	m.mu.Lock()
	b := m.backend
	var p Policy
	if b != nil {
		p = b.Policy()
	} else {
		p = m.buildPolicyLocked()
	}
	m.mu.Unlock()
	return p, m.Cwd()
}

// Shutdown destroys the sandbox and removes the private temp directory
// the manager made; a later GetSandbox creates new ones.
func (m *Manager) Shutdown() error {
	m.cancelPrepare() // a shell being started now would be closed at once
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prepared = nil
	err := m.destroyLocked()
	if m.ownTmp && m.privTmp != "" {
		if rerr := removeTree(m.privTmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("remove the private temp directory: %w", rerr))
		}
	}
	if m.ownTmp {
		m.privTmp, m.ownTmp = "", false
	}
	return err
}

// Settle runs the sandbox's checks now and returns what they did: control
// files a command planted removed, new repositories and rebase state that
// would run something on the host disabled (also what the idle watcher
// did since the last command; the next command's output reports it too).
// Call it before running a host command of the user's in the project (a
// `!` line, a user hook), so that a job a command left in the background
// cannot steer it. Nil without a sandbox.
func (m *Manager) Settle() []string { return m.settle(false) }

// SettleForModel is Settle for what an extension process (a skill script)
// just did: the report goes into that result, for the model, and the next
// command does not repeat it.
func (m *Manager) SettleForModel() []string { return m.settle(true) }

func (m *Manager) settle(take bool) []string {
	m.mu.Lock()
	b := m.backend
	m.mu.Unlock()
	if s, ok := b.(interface{ Settle(bool) []string }); ok {
		return s.Settle(take)
	}
	return nil
}

// Watch creates the sandbox if it does not exist yet, taking its start-up
// scan, so that the checks see what an extension process (a skill script,
// a stdio MCP server: same policy, not the shell) writes as new, never as
// part of the baseline they trust. Nothing with the sandbox off.
func (m *Manager) Watch(ctx context.Context) error {
	if !m.enabled {
		return nil
	}
	_, err := m.GetSandbox(ctx)
	return err
}
