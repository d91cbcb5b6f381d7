package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// checkPrivateDir verifies that dir is a real directory (not a symlink) of
// this user that no one else may enter.
func checkPrivateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: private temp directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("sandbox: private temp directory %s is not a directory (a symlink or file is in its place)", dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("sandbox: private temp directory %s has mode %v; it must be 0700", dir, st.Mode().Perm())
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("sandbox: private temp directory %s belongs to uid %d, not to this user", dir, sys.Uid)
	}
	return nil
}

// HostPath maps a path as a sandboxed command sees it to the host path of
// the same file: below /tmp that is the private temp directory, except
// within a whitelisted root, which is bound at its own path over it.
func (p Policy) HostPath(path string) string {
	if p.TempDir == "" || p.ReadOnly || !within(path, PrivateTmp) {
		return path
	}
	for _, w := range append(slices.Clone(p.Whitelist), p.Visible...) {
		if within(path, w) {
			return path
		}
	}
	return filepath.Join(p.TempDir, strings.TrimPrefix(path, PrivateTmp))
}

// hostTmpHidden reports whether abs (absolute, resolved, a host path) lies
// in the host's /tmp where a bubblewrap sandbox of this policy shows
// commands something else: its private temp directory (a tmpfs when
// ReadOnly) is mounted over /tmp, and only the roots bound back at their own
// path stay visible (the same ones bwrapArgs binds). In-process file
// commands and skill:import must not reach what commands cannot.
func (p Policy) hostTmpHidden(abs string) bool {
	if !within(abs, PrivateTmp) || (!p.ReadOnly && p.TempDir == "") {
		return false
	}
	roots := p.Whitelist
	if !p.ReadOnly {
		roots = slices.Concat(p.Whitelist, p.Visible, p.Protect, []string{p.TempDir})
	}
	return !slices.ContainsFunc(roots, func(r string) bool { return within(abs, r) })
}

// Reasons for refusing a host /tmp path.
const (
	hostTmpReason         = "the host's /tmp is out of the sandbox's reach: /tmp in commands is this session's private temp directory, so file commands use it too and cannot open other files of the host's /tmp"
	landlockHostTmpReason = "the host's /tmp is out of the sandbox's reach (under the Landlock backend it stays the host's, unreadable to commands): use this session's private temp directory, $TMPDIR, instead"
	readOnlyHostTmpReason = "this agent's /tmp is a private scratch space that exists only inside its read-only sandbox (the host's /tmp is out of its reach): in-process file commands cannot see it; read a file a command left there with a command (cat, head, grep)"
)

// prepareTmpMountPoints makes the mount points of the roots under /tmp
// real directories inside the private temp directory: bubblewrap creates
// them there (it is mounted as /tmp first), and a symlink a command left
// in their place would make the sandbox fail to start. Only the private
// directory is touched; a symlink is removed, never followed.
func prepareTmpMountPoints(priv string, roots []string) {
	for _, r := range roots {
		if r == PrivateTmp || !within(r, PrivateTmp) {
			continue
		}
		cur := priv
		for _, c := range strings.Split(strings.TrimPrefix(r, PrivateTmp+"/"), "/") {
			cur = filepath.Join(cur, c)
			st, err := os.Lstat(cur)
			if err == nil && st.IsDir() {
				continue
			}
			if err == nil {
				_ = os.RemoveAll(cur) // a symlink or file: removes the entry itself
			}
			if err := os.Mkdir(cur, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				break
			}
		}
	}
}

// removeTree removes dir, first making its directories writable again (a
// command may have left one read-only, which RemoveAll cannot empty).
func removeTree(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700) // WalkDir does not follow symlinks
		}
		return nil
	})
	return os.RemoveAll(dir)
}
