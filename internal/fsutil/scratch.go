package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ScratchPrefix starts the name of every scratch directory, so that stale
// ones (left by a process that crashed) can be found and removed.
const ScratchPrefix = "synapse-scratch-"

// Scratch is one process's private directory for Synapse's own temporary
// files (cut command outputs, long sub-agent answers). It is created
// exclusively under a fresh random name with mode 0700, so nothing can be
// planted there beforehand, and checked with Lstat to be the directory we
// made. Remove deletes it when its owner is done.
type Scratch struct {
	dir string
}

// NewScratch creates a scratch directory in parent (os.TempDir() if empty).
func NewScratch(parent string) (*Scratch, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	// The pid in the name tells RemoveStale the directory is still in use.
	dir, err := os.MkdirTemp(parent, ScratchPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return nil, fmt.Errorf("create a private scratch directory in %s: %w", parent, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ownedByUs(fi) {
		return nil, fmt.Errorf("create a private scratch directory in %s: %s is not the private directory just made", parent, dir)
	}
	return &Scratch{dir: dir}, nil
}

// Dir is the directory's path.
func (s *Scratch) Dir() string { return s.dir }

// Remove deletes the directory and everything in it. It never follows a
// symlink (os.RemoveAll unlinks links, it does not descend through them).
func (s *Scratch) Remove() error {
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove the scratch directory %s: %w", s.dir, err)
	}
	return nil
}

// RemoveStale deletes the scratch directories in parent (os.TempDir() if
// empty) that belong to this user, whose process is gone and that were last
// modified more than maxAge ago: those of processes that ended without
// removing theirs. Symlinks and other users' entries are left alone. It
// returns how many it removed.
func RemoveStale(parent string, maxAge time.Duration, now time.Time) int {
	if parent == "" {
		parent = os.TempDir()
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ScratchPrefix) || !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() || !ownedByUs(fi) || now.Sub(fi.ModTime()) < maxAge || running(e.Name()) {
			continue
		}
		if os.RemoveAll(p) == nil {
			n++
		}
	}
	return n
}

// running reports whether the process named in a scratch directory's name
// (ScratchPrefix<pid>-…) still exists.
func running(name string) bool {
	pid, _, ok := strings.Cut(strings.TrimPrefix(name, ScratchPrefix), "-")
	n, err := strconv.Atoi(pid)
	if !ok || err != nil || n <= 0 {
		return false
	}
	err = unix.Kill(n, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// openDirNoFollow opens dir as a directory, failing if its last component
// is a symlink.
func openDirNoFollow(dir string) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%s is not a directory (a symlink or a file is there); refusing to write through it", dir)
		}
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// createAt creates name in the open directory d, exclusively (mode 0600),
// open for reading and writing.
func createAt(d *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: filepath.Join(d.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), nil
}

func removeAt(d *os.File, name string) error {
	return unix.Unlinkat(int(d.Fd()), name, 0)
}
