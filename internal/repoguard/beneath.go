//go:build linux

package repoguard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The checks of Watch run on the host with the user's rights, on paths
// inside the writable roots that a sandboxed command can change while they
// run: a folder the check found a repository in can be moved away and
// replaced by a symlink to a repository elsewhere on the host, and a path
// that was a directory can become a FIFO. So below a writable root no
// symlink is followed (the roots themselves are resolved when the policy
// is made) and no directory is opened that could block: every directory
// is opened with openat2's RESOLVE_NO_SYMLINKS from the root, or one
// component at a time with O_NOFOLLOW where the kernel lacks openat2, and
// with O_DIRECTORY|O_NONBLOCK.

// errOutsideRoots: the path is not below a writable root of the watch.
var errOutsideRoots = errors.New("not inside a writable root")

// RootOf returns the deepest writable root holding p, or "".
func (w *Watch) RootOf(p string) string {
	root := ""
	for _, r := range w.roots {
		if within(p, r) && len(r) > len(root) {
			root = r
		}
	}
	return root
}

// OpenBeneath opens p, which must lie in a writable root, without
// following a symlink anywhere below the root (the last component
// included) and with flags (O_NOFOLLOW and O_CLOEXEC added).
func (w *Watch) OpenBeneath(p string, flags int) (int, error) {
	root := w.RootOf(p)
	if root == "" {
		return -1, errOutsideRoots
	}
	rel := strings.TrimPrefix(p[len(root):], "/")
	if rel == "" {
		rel = "."
	}
	rfd, ok := w.rootFDs[root]
	if !ok {
		var err error
		if rfd, err = unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
			return -1, fmt.Errorf("open %s: %w", root, err)
		}
		defer unix.Close(rfd)
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	fd, err := unix.Openat2(rfd, rel, &how)
	if !errors.Is(err, unix.ENOSYS) {
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", p, err)
		}
		return fd, nil
	}
	// No openat2 (Linux before 5.6): one component at a time.
	parts := strings.Split(rel, "/")
	cur, err := unix.Dup(rfd)
	if err != nil {
		return -1, err
	}
	for i, part := range parts {
		fl := unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if i == len(parts)-1 {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		if part == ".." {
			unix.Close(cur)
			return -1, fmt.Errorf("open %s: %w", p, unix.EXDEV)
		}
		next, err := unix.Openat(cur, part, fl, 0)
		unix.Close(cur)
		if err != nil {
			return -1, fmt.Errorf("open %s: %w", p, err)
		}
		cur = next
	}
	return cur, nil
}

// reachable reports whether p's folder is where p says: below a writable
// root with no symlink on the way (a path outside the roots is the host's,
// which no command can change, and counts as reachable).
func (w *Watch) reachable(p string) bool {
	dir := filepath.Dir(p)
	if w.RootOf(dir) == "" {
		return true
	}
	fd, err := w.OpenBeneath(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// readDir lists the directory p, sorted by name, without following a
// symlink below a writable root and without blocking on a FIFO (outside
// the roots: without following p itself). A directory a command made
// unreadable (mode 0111: git can still go through it to a repository
// whose path it knows, from a gitlink) is made readable to its owner.
func (w *Watch) readDir(p string) ([]fs.DirEntry, error) {
	open := func() (int, error) {
		if w.RootOf(p) == "" {
			return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		}
		return w.OpenBeneath(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK)
	}
	fd, err := open()
	if errors.Is(err, unix.EACCES) && w.RootOf(p) != "" {
		if pfd, perr := w.OpenBeneath(p, unix.O_PATH|unix.O_DIRECTORY); perr == nil {
			var st unix.Stat_t
			// Through the descriptor's /proc link: the very directory
			// opened, whatever its path has become since.
			if unix.Fstat(pfd, &st) == nil && st.Uid == uint32(os.Getuid()) {
				_ = unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", pfd), st.Mode&0o7777|0o700)
			}
			unix.Close(pfd)
			fd, err = open()
		}
	}
	if err != nil {
		return nil, err
	}
	ents, err := readDirFD(fd, p)
	unix.Close(fd)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}

// walk calls fn for root and everything below it, like filepath.WalkDir
// (fs.SkipDir skips a directory), reading each directory with readDir; a
// root whose folder cannot be reached without a symlink is not walked.
func (w *Watch) walk(root string, fn func(p string, d fs.DirEntry) error) {
	if !w.reachable(root) {
		return
	}
	st, err := os.Lstat(root)
	if err != nil {
		return
	}
	_ = w.walkEntry(root, fs.FileInfoToDirEntry(st), fn)
}

func (w *Watch) walkEntry(p string, d fs.DirEntry, fn func(string, fs.DirEntry) error) error {
	if err := fn(p, d); err != nil {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	if !d.IsDir() {
		return nil
	}
	ents, err := w.readDir(p)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if err := w.walkEntry(filepath.Join(p, e.Name()), e, fn); err != nil {
			return err
		}
	}
	return nil
}

// renameAside renames p to aside (both in one folder) without replacing
// anything, and without following a symlink on the way below a writable
// root: the folder is opened first, the rename made relative to it.
func (w *Watch) renameAside(p, aside string) error {
	dir := filepath.Dir(p)
	if w.RootOf(dir) == "" {
		return unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, aside, unix.RENAME_NOREPLACE)
	}
	fd, err := w.OpenBeneath(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Renameat2(fd, filepath.Base(p), fd, filepath.Base(aside), unix.RENAME_NOREPLACE)
}

// within reports whether p is root or below it (both clean and absolute).
func within(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	// Not HasPrefix(p, root+"/"): no string is made per call (the scan
	// asks once per entry and rule).
	return len(p) > len(root) && p[len(root)] == '/' && strings.HasPrefix(p, root)
}
