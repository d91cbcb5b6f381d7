package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The Landlock backend: where bubblewrap cannot create its namespaces
// (Ubuntu's AppArmor rule for unprivileged user namespaces, a container's
// default seccomp profile), the shell runs under Landlock and seccomp,
// applied by the launcher (launcher.go) to itself before it execs the
// shell. Landlock is an allow-list of file hierarchies and cannot remap
// or hide a path inside a granted one, so the policy is granted by its
// parts: from / down, every entry that is not an ancestor of a hidden path
// is granted whole, the hidden ones not at all, their ancestors only
// through those entries. What it cannot do that bubblewrap does is listed
// by landlockLimits (status, docs/security.md).

// Backend names.
const (
	BackendBwrap    = "bwrap"
	BackendLandlock = "landlock"
)

// devFiles are the device files commands may write (bwrap's --dev gives
// a /dev with these).
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// maxSpecBytes keeps the policy argument under the kernel's limit for one
// argument (MAX_ARG_STRLEN, 128 KiB).
const maxSpecBytes = 120 << 10

// planLandlock turns the policy and its mount plan into the launcher's
// rules. scratch is the writable temp directory of a read-only sandbox.
func planLandlock(p Policy, mp mountPlan, opts WrapOptions, scratch string) (landlockSpec, error) {
	rules := compileRules(p.Blacklist, p.Home)
	// Never granted: the literal blacklist entries (and where their links
	// lead), the agent's sockets, the host's /tmp, and /run, where host
	// daemons' sockets and container secrets live.
	var hidden []string
	addHidden := func(path string) {
		if path == "" || !filepath.IsAbs(path) {
			return
		}
		path = filepath.Clean(path)
		if !slices.Contains(hidden, path) {
			hidden = append(hidden, path)
		}
		if real, err := filepath.EvalSymlinks(path); err == nil && real != path && !slices.Contains(hidden, real) {
			hidden = append(hidden, real)
		}
	}
	for _, r := range rules {
		if r.path != "" {
			addHidden(r.path)
		}
	}
	for _, s := range []string{envValue(opts.Env, "SSH_AUTH_SOCK"), envValue(opts.Env, "XDG_RUNTIME_DIR")} {
		addHidden(s)
	}
	for _, d := range []string{PrivateTmp, "/run", "/var/run"} {
		addHidden(d)
	}
	protect := normalizeDirs(p.Protect, p.Home)

	var spec landlockSpec
	add := func(path, kind string) {
		spec.Rules = append(spec.Rules, landlockRule{Path: path, Kind: kind})
	}
	grantByParts("/", accessRead, hidden, add)
	// Readable although under a hidden directory (the host /tmp): the
	// roots bwrap binds back at their own path.
	var readable []string
	readable = append(readable, mp.readonly...)
	readable = append(readable, opts.Visible...)
	readable = append(readable, p.Visible...)
	readable = append(readable, protect...)
	if p.AllowNetwork {
		readable = append(readable, "/run/systemd/resolve") // resolv.conf's stub points there
	}
	for _, r := range readable {
		r = filepath.Clean(r)
		if slices.ContainsFunc(hidden, func(h string) bool { return within(r, h) }) && exists(r) {
			if _, bl := matchRules(rules, r); !bl {
				grantByParts(r, accessRead, hidden, add)
			}
		}
	}
	// Writable roots, without the hidden paths and the protected
	// directories (the agent's own configuration) inside them.
	cut := slices.Concat(hidden, protect)
	var writable []string
	if !p.ReadOnly {
		writable = slices.Clone(mp.writable)
		if p.TempDir != "" {
			writable = append(writable, p.TempDir)
		}
	}
	if scratch != "" {
		writable = append(writable, scratch)
	}
	for _, w := range writable {
		grantByParts(w, accessWrite, cut, add)
	}
	for _, d := range devFiles {
		if exists(d) {
			add(d, accessDev)
		}
	}
	spec.Network = p.AllowNetwork
	spec.TTY = opts.AllowTTY
	spec.Dir = opts.Cwd
	switch {
	case p.ReadOnly && scratch != "":
		spec.Setenv = append(spec.Setenv, "TMPDIR="+scratch)
	case !p.ReadOnly && p.TempDir != "":
		spec.Setenv = append(spec.Setenv, "TMPDIR="+p.TempDir)
	}
	spec.Setenv = append(spec.Setenv, opts.ExtraEnv...)
	if b, _ := json.Marshal(spec); len(b) > maxSpecBytes {
		return spec, fmt.Errorf("the Landlock policy has too many rules (%d bytes); shorten the whitelist", len(b))
	}
	return spec, nil
}

// grantByParts grants kind on root, or, when a path of cut lies below it,
// on each entry of root except the cut ones, descending into the entries
// that hold one: a Landlock rule on a directory covers everything below
// it. Symlinks get no rule (access is judged where they lead). root itself
// then gets no rule: it cannot be listed, nor entries created in it.
func grantByParts(root, kind string, cut []string, add func(path, kind string)) {
	if slices.Contains(cut, root) {
		return
	}
	below := false
	for _, c := range cut {
		if c != root && within(c, root) {
			below = true
			break
		}
	}
	if !below {
		if st, err := os.Lstat(root); err == nil && st.Mode()&os.ModeSymlink == 0 {
			add(root, kind)
		}
		return
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return // unreadable: nothing granted below it
	}
	for _, e := range ents {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		grantByParts(filepath.Join(root, e.Name()), kind, cut, add)
	}
}

// landlockArgv is the launcher's command line for argv under spec.
func landlockArgv(launcher string, spec landlockSpec, argv []string) ([]string, error) {
	if launcher == "" {
		return nil, errNoLauncher
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode the Landlock policy: %w", err)
	}
	return append([]string{launcher, LauncherCommand, string(b), "--"}, argv...), nil
}

// errNoLauncher: the program cannot re-execute itself as the launcher.
var errNoLauncher = errors.New("no Landlock launcher is configured (the synapse binary runs itself as one)")

// probeLandlock checks that the launcher can restrict a process here: the
// kernel has Landlock, and a real launch (Landlock, seccomp, exec) works.
// It returns the ABI.
func probeLandlock(ctx context.Context, launcher string) (int, error) {
	abi, err := landlockABI()
	if err != nil {
		return 0, err
	}
	if launcher == "" {
		return 0, errNoLauncher
	}
	argv, err := landlockArgv(launcher, landlockSpec{Rules: []landlockRule{{Path: "/usr", Kind: accessRead}, {Path: "/bin", Kind: accessRead}, {Path: "/lib", Kind: accessRead}, {Path: "/lib64", Kind: accessRead}}}, []string{"true"})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if out, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("the Landlock launcher failed (%v: %s)", err, firstLine(strings.TrimSpace(string(out))))
	}
	return abi, nil
}

// landlockLimits lists what the Landlock backend cannot enforce that the
// bubblewrap one does (the status and the table in docs/security.md say the same).
func landlockLimits(abi int) []string {
	out := []string{
		"blacklisted globs inside writable roots (**/.env, credentials.json …) stay readable and writable: Landlock cannot take a file out of a granted tree (the command check and read/write/edit still refuse them)",
		"the host's /tmp is unreadable and read-only rather than replaced: commands get TMPDIR=<private temp dir>, and a program that insists on /tmp fails",
		".git inside the workspace stays writable: after every command the host checks each repository's hooks, config and control files, restores what a command changed and renames aside what it planted",
		"folders that hold a hidden path (/, ~, /etc) cannot be listed, nor can files be created directly in them",
		"no private PID namespace: commands see the host's processes (but cannot trace them" + map[bool]string{true: " or signal them)", false: ")"}[abi >= llMinScope],
		"no private loopback: without the network, TCP on 127.0.0.1 is refused too",
		"/dev/shm and other shared memory are not writable",
	}
	if abi < llMinUnix {
		out = append(out, "unix sockets cannot be created (socket(AF_UNIX) is refused; socketpair works): before Landlock ABI 9 a command could otherwise connect to a host daemon's socket")
	}
	if abi < llMinNet {
		out = append(out, "TCP is refused by seccomp alone (Landlock before ABI 4 has no network rules)")
	}
	return out
}
