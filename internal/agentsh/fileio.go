package agentsh

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// File access of read, write and edit. The sandbox policy judges a path once,
// resolved (realPath); a process in the sandbox may then swap a directory on
// that path for a symlink to somewhere else before the file is opened. So the
// access walks the resolved path from / one component at a time and follows
// no symlink: a path that changed under it fails instead of leading outside
// what the policy allowed.

// errIsDir is returned for a directory where a file was expected.
var errIsDir = errors.New("is a directory")

// errPathChanged is returned when a component of a resolved path is no
// longer a plain directory.
var errPathChanged = errors.New("a directory on the path was replaced (by a symlink or a file) while the command ran; nothing was done: run the command again")

// notRegularError names the kind of a file that is not a regular file.
type notRegularError struct {
	path string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	kind := "a special file"
	switch {
	case e.mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case e.mode&fs.ModeSocket != 0:
		kind = "a socket"
	case e.mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case e.mode&fs.ModeDevice != 0:
		kind = "a block device"
	case e.mode&fs.ModeSymlink != 0:
		kind = "a symlink that appeared while the command ran"
	}
	return fmt.Sprintf("%s is not a regular file (it is %s): read and edit handle regular files only; use a native command such as `head -c 1000` for it", e.path, kind)
}

// realPath is abs with the symlinks of its longest existing prefix
// resolved: the place an access to abs reaches now. The rest is appended
// as written (it does not exist yet).
func realPath(abs string) string {
	cur := filepath.Clean(abs)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return filepath.Clean(abs)
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// openDirNoFollow opens the directory dir (absolute and resolved) walking
// from / without following symlinks; with create, missing directories are
// made (0755) on the way.
func openDirNoFollow(dir string, create bool) (int, error) {
	fd, err := unix.Open("/", dirOpenFlags, 0)
	if err != nil {
		return -1, fmt.Errorf("open /: %w", err)
	}
	for _, name := range strings.Split(dir, "/") {
		if name == "" {
			continue
		}
		next, err := unix.Openat(fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, name, dirOpenFlags|unix.O_NOFOLLOW, 0)
			}
		}
		unix.Close(fd)
		switch {
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
			return -1, errPathChanged
		case errors.Is(err, unix.ENOENT):
			return -1, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM):
			return -1, &fs.PathError{Op: "open", Path: dir, Err: fs.ErrPermission}
		case err != nil:
			return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
		}
		fd = next
	}
	return fd, nil
}

// openRegular opens path (absolute and resolved) for reading without
// following symlinks, and only when it is a regular file. The open never
// blocks (O_NONBLOCK: a FIFO without a writer would block it forever,
// beyond any cancellation), and devices, pipes and sockets are refused:
// /dev/stdin is the agent's own input, /dev/zero never ends.
func openRegular(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return nil, errIsDir
	}
	dfd, err := openDirNoFollow(dir, false)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, &notRegularError{path: path, mode: fs.ModeSymlink}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case info.IsDir():
		f.Close()
		return nil, errIsDir
	case !info.Mode().IsRegular():
		f.Close()
		return nil, &notRegularError{path: path, mode: info.Mode()}
	}
	return f, nil
}

// lstatNoFollow reports what path (absolute and resolved) names, without
// following symlinks anywhere on it.
func lstatNoFollow(path string) (fs.FileMode, bool, error) {
	dir, base := filepath.Split(path)
	if base == "" {
		return fs.ModeDir, true, nil
	}
	dfd, err := openDirNoFollow(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return 0, false, nil
		}
		return 0, false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return fileMode(uint32(st.Mode)), true, nil
}

// fileMode converts a stat mode to the fs type bits read and write need.
func fileMode(m uint32) fs.FileMode {
	perm := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return perm | fs.ModeDir
	case unix.S_IFLNK:
		return perm | fs.ModeSymlink
	case unix.S_IFREG:
		return perm
	}
	return perm | fs.ModeIrregular
}

// writeNoFollow replaces path (absolute and resolved) with data: a
// temporary file beside it, synced, then renamed over it, so a crash leaves
// the old content or the new one. Missing parent directories are created.
// No symlink is followed on the way, and the rename replaces whatever the
// last component is (a link there is replaced, not followed). An existing
// regular file keeps its mode; a new one gets 0644.
func writeNoFollow(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("%s is a directory; give a file path", path)
	}
	dfd, err := openDirNoFollow(dir, true)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer unix.Close(dfd)
	mode := fs.FileMode(0o644)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			return fmt.Errorf("%s is a directory; give a file path", path)
		case unix.S_IFREG:
			mode = fs.FileMode(st.Mode & 0o777)
		}
	}
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := "." + base + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, &fs.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err})
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	_, err = f.Write(data)
	if err == nil {
		// Chmod, not the create mode, so the umask does not narrow it.
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// readAllLimited reads f whole, or returns nil data when it holds more than
// limit bytes (the size is taken from what is read, not from a stat that a
// growing file would outrun).
func readAllLimited(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
