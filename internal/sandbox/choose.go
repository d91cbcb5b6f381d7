package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// chooseLocal picks the Linux backend of the "local" provider: bubblewrap
// where it can create its namespaces, else Landlock where the launcher can
// restrict a process. When neither can run it returns the refusal every
// command gets instead (the sandbox never degrades to none). An explicit
// "bwrap" or "landlock" provider is taken as asked (a failure then shows
// when the sandbox is created). A sub-agent passes its parent's choice in
// ManagerOptions.Backend and probes nothing.
func (m *Manager) chooseLocal(lp LocalProvider) (LocalProvider, error) {
	lp.Launcher = m.opts.Launcher
	if lp.Backend == "" {
		lp.Backend = m.opts.Backend
	}
	probeLL := m.opts.ProbeLandlock
	if probeLL == nil {
		probeLL = func(ctx context.Context) (int, error) { return probeLandlock(ctx, m.opts.Launcher) }
	}
	switch lp.Backend {
	case BackendBwrap:
		return lp, nil
	case BackendLandlock:
		abi, err := landlockABI()
		if m.opts.ProbeLandlock != nil {
			abi, err = m.opts.ProbeLandlock(context.Background())
		}
		if err != nil {
			return lp, fmt.Errorf("the Landlock sandbox cannot run here: %w", err)
		}
		m.abi = abi
		return lp, nil
	}
	// The probes run bwrap and the launcher: 15 to 60 ms of every start.
	// The backend they chose is remembered while what decides it is the
	// same (choiceKey); only the real probes' (tests inject their own).
	memo, key := "", ""
	if dir := m.scanCachePath(); dir != "" && m.opts.Probe == nil && m.opts.ProbeLandlock == nil {
		memo = filepath.Join(dir, choiceMemoName)
		key = m.choiceKey()
	}
	if c, ok := readChoice(memo, key); ok {
		m.remembered = true
		lp.Backend = c.backend
		if c.backend == BackendLandlock {
			m.abi, m.note = c.abi, landlockNote(c.why)
		}
		return lp, nil
	}
	probe := m.opts.Probe
	if probe == nil {
		probe = func(ctx context.Context) error { return probePlatform(ctx, "linux", m.opts.LookPath) }
	}
	bwErr := probe(context.Background())
	if bwErr == nil {
		lp.Backend = BackendBwrap
		writeChoice(memo, key, choice{backend: BackendBwrap})
		return lp, nil
	}
	abi, llErr := probeLL(context.Background())
	if llErr == nil {
		lp.Backend, m.abi = BackendLandlock, abi
		m.note = landlockNote(bwErr.Error())
		writeChoice(memo, key, choice{backend: BackendLandlock, abi: abi, why: bwErr.Error()})
		return lp, nil
	}
	return lp, fmt.Errorf("no sandbox can run on this machine, so every command is refused. bubblewrap: %v. Landlock: %v. Fix: %s; or run commands without a sandbox by setting \"enabled\": false in %s",
		bwErr, llErr, platformFix(bwErr), m.configName())
}

// landlockNote says why Landlock was chosen: bwErr, bubblewrap's failure.
func landlockNote(bwErr string) string {
	return "bubblewrap cannot run here (" + bwErr + "), so the Landlock backend enforces the policy"
}

// choiceMemoName is the file, in the agent home's cache, that remembers
// the backend the probes chose: its first line is choiceKey's digest of
// what decided it, then the backend, then (Landlock) its ABI and why
// bubblewrap could not run. No choice is remembered when neither runs:
// that is probed again at every start, and shown with its fix.
const choiceMemoName = "sandbox-choice"

// choice is what the probes decided.
type choice struct {
	backend string
	abi     int
	why     string // why bubblewrap cannot run (Landlock)
}

// forgetChoice removes the memo, after the backend it names failed to
// start: the next start probes again.
func (m *Manager) forgetChoice() {
	if dir := m.scanCachePath(); dir != "" {
		_ = os.Remove(filepath.Join(dir, choiceMemoName))
	}
}

// choiceKey digests what decides which backend can run here: this boot,
// the user, the namespaces and seccomp filters this process runs in
// (another container, a CI step under a filter), the kernel settings and
// AppArmor profiles that allow or refuse unprivileged user namespaces,
// and the bwrap and launcher binaries. "" when the boot cannot be told.
func (m *Manager) choiceKey() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "boot %s\nuid %d\n", boot, os.Getuid())
	stat := func(what, p string) {
		if st, err := os.Stat(p); err == nil {
			fmt.Fprintf(h, "%s %s %d %v %d\n", what, p, st.Size(), st.Mode(), st.ModTime().UnixNano())
		} else {
			fmt.Fprintf(h, "%s %s missing\n", what, p)
		}
	}
	if bwrap, err := lookBwrap(m.opts.LookPath); err == nil {
		stat("bwrap", bwrap)
	}
	stat("launcher", m.opts.Launcher)
	stat("apparmor", "/etc/apparmor.d") // a profile installed for bwrap
	for _, ns := range []string{"user", "mnt", "pid", "net"} {
		link, _ := os.Readlink("/proc/self/ns/" + ns)
		fmt.Fprintf(h, "ns %s\n", link)
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if strings.HasPrefix(line, "Seccomp") || strings.HasPrefix(line, "NoNewPrivs") {
				h.Write([]byte(line))
			}
		}
	}
	for _, p := range []string{"/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns"} {
		b, _ := os.ReadFile(p) // a missing one counts as empty
		fmt.Fprintf(h, "%s=%s\n", p, b)
	}
	return "synapse-sandbox-choice 1 " + hex.EncodeToString(h.Sum(nil))
}

// readChoice reads the memo at path (never through a link) when its key
// is key.
func readChoice(path, key string) (choice, bool) {
	if path == "" || key == "" {
		return choice{}, false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return choice{}, false
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	lines := strings.SplitN(string(b), "\n", 4)
	if len(lines) < 3 || lines[0] != key {
		return choice{}, false
	}
	switch c := (choice{backend: lines[1]}); c.backend {
	case BackendBwrap:
		return c, true
	case BackendLandlock:
		if len(lines) < 4 {
			return choice{}, false
		}
		if _, err := fmt.Sscan(lines[2], &c.abi); err != nil || c.abi <= 0 {
			return choice{}, false
		}
		c.why = strings.TrimSuffix(lines[3], "\n")
		return c, true
	}
	return choice{}, false
}

// writeChoice remembers c under key at path (when there is a path).
func writeChoice(path, key string, c choice) {
	if path == "" || key == "" {
		return
	}
	data := fmt.Sprintf("%s\n%s\n%d\n%s\n", key, c.backend, c.abi, strings.ReplaceAll(c.why, "\n", " "))
	_ = writeCache(path, []byte(data)) // unwritten, the next start probes
}

// platformFix is the one-line fix for the usual reasons bubblewrap fails.
func platformFix(bwErr error) string {
	if errors.Is(bwErr, errNoBwrap) {
		return "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" {
		return "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10+): install the profile Ubuntu ships for bwrap (sudo apt install apparmor-profiles && sudo cp /usr/share/apparmor/extra-profiles/bwrap-userns-restrict /etc/apparmor.d/ && sudo systemctl reload apparmor)"
	}
	if inContainer() {
		return "in a container, give it a seccomp profile that permits the landlock_* system calls (the default profiles of current Docker and Podman do; Kubernetes: securityContext.seccompProfile RuntimeDefault on a recent runtime), or one that permits unshare for bubblewrap"
	}
	return "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), or boot a kernel with Landlock (Linux 5.13+, lsm= including landlock)"
}

// unavailableProvider stands in when no backend can run: every sandbox it
// is asked for is refused with the reason.
type unavailableProvider struct{ why error }

func (unavailableProvider) Name() string { return "none" }

func (u unavailableProvider) Create(context.Context, CreateOptions) (Backend, error) {
	return nil, u.why
}

func (unavailableProvider) Destroy(b Backend) error { return b.Dispose() }

// Backend names the backend commands run under: BackendBwrap or
// BackendLandlock on Linux, "seatbelt" on macOS, "" when the sandbox is
// off or cannot run. A sub-agent's manager takes it as its own (no probe).
func (m *Manager) Backend() string {
	if !m.enabled {
		return ""
	}
	switch p := m.provider.(type) {
	case LocalProvider:
		if m.opts.GOOS == "darwin" {
			return "seatbelt"
		}
		if p.Backend == "" {
			return BackendBwrap
		}
		return p.Backend
	case unavailableProvider:
		return ""
	}
	return m.provider.Name()
}

// landlock reports whether commands run under the Landlock backend.
func (m *Manager) landlock() bool { return m.Backend() == BackendLandlock }

// WrapArgv is WrapArgv with this manager's backend: an extension process
// or `synapse sandbox exec` runs under the same kind of sandbox as the
// shell, and is refused when none can run.
func (m *Manager) WrapArgv(p Policy, argv []string, opts WrapOptions) ([]string, error) {
	if u, ok := m.provider.(unavailableProvider); ok && m.enabled {
		return nil, u.why
	}
	if opts.GOOS == "" {
		opts.GOOS = m.opts.GOOS
	}
	if opts.LookPath == nil {
		opts.LookPath = m.opts.LookPath
	}
	if m.landlock() {
		opts.Backend, opts.Launcher = BackendLandlock, m.opts.Launcher
	}
	return WrapArgv(p, argv, opts)
}

// inContainer reports the usual marks of a container: Docker's and Podman's
// files, the "container" variable systemd and Podman set, Kubernetes'
// service variable, a container runtime in PID 1's cgroup.
func inContainer() bool {
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	if os.Getenv("container") != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "" {
		return true
	}
	b, _ := os.ReadFile("/proc/1/cgroup")
	for _, mark := range []string{"docker", "kubepods", "containerd", "libpod"} {
		if strings.Contains(string(b), mark) {
			return true
		}
	}
	return false
}

// SameTmp is a directory that commands may write at the same path as the
// host sees it, for a FIFO a background job writes to: under Landlock the
// session's private temp directory, or a read-only sandbox's scratch
// directory (made with the sandbox: call after GetSandbox). "" elsewhere:
// bubblewrap remaps /tmp, and the agent's scratch directory, bound
// read-only, takes a FIFO's writer.
func (m *Manager) SameTmp() string {
	if !m.landlock() {
		return ""
	}
	if t := m.PrivateTmp(); t != "" {
		return t
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.backend == nil {
		_, _ = m.getLocked(context.Background()) // a refusal shows when the job's command runs
	}
	if lb, ok := m.backend.(*LocalBackend); ok && lb.plat != nil && lb.policy.ReadOnly {
		return filepath.Join(lb.plat.stateDir, "tmp")
	}
	return ""
}
