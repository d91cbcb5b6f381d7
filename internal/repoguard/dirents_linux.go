//go:build linux

package repoguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dirent is a directory entry read by readDirFD: its name and the type
// bits of its mode.
type dirent struct {
	name string
	typ  fs.FileMode
	dir  string // the folder, for Info
}

func (d *dirent) Name() string               { return d.name }
func (d *dirent) IsDir() bool                { return d.typ.IsDir() }
func (d *dirent) Type() fs.FileMode          { return d.typ }
func (d *dirent) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.dir, d.name)) }

// readDirFD lists the open directory fd (of the folder dir) with getdents
// alone: os.NewFile and (*os.File).ReadDir would add an fcntl and an
// epoll_ctl per folder (a non-blocking descriptor is offered to the
// poller), a third of what the sweep pays per folder. An entry whose type
// the file system does not give is looked at with fstatat, without
// following it, as os.ReadDir does.
func readDirFD(fd int, dir string) ([]fs.DirEntry, error) {
	var buf [8192]byte
	var out []fs.DirEntry
	for {
		n, err := unix.Getdents(fd, buf[:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, &os.PathError{Op: "readdirent", Path: dir, Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		for off := 0; off < n; {
			de := (*unix.Dirent)(unsafe.Pointer(&buf[off]))
			if de.Reclen == 0 || off+int(de.Reclen) > n {
				return out, &os.PathError{Op: "readdirent", Path: dir, Err: unix.EIO}
			}
			nameBuf := buf[off+int(unsafe.Offsetof(unix.Dirent{}.Name)) : off+int(de.Reclen)]
			off += int(de.Reclen)
			if de.Ino == 0 {
				continue
			}
			l := 0
			for l < len(nameBuf) && nameBuf[l] != 0 {
				l++
			}
			name := string(nameBuf[:l])
			if name == "." || name == ".." {
				continue
			}
			typ, ok := direntType(de.Type)
			if !ok {
				var st unix.Stat_t
				if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
					continue // gone meanwhile, as os.ReadDir skips it
				}
				typ = statType(st.Mode)
			}
			out = append(out, &dirent{name: name, typ: typ, dir: dir})
		}
	}
}

// direntType is the fs type of a d_type (false: DT_UNKNOWN).
func direntType(t uint8) (fs.FileMode, bool) {
	switch t {
	case unix.DT_REG:
		return 0, true
	case unix.DT_DIR:
		return fs.ModeDir, true
	case unix.DT_LNK:
		return fs.ModeSymlink, true
	case unix.DT_FIFO:
		return fs.ModeNamedPipe, true
	case unix.DT_SOCK:
		return fs.ModeSocket, true
	case unix.DT_CHR:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case unix.DT_BLK:
		return fs.ModeDevice, true
	}
	return 0, false
}

// lstatType is the type bits of path's mode, not following a link: os.Lstat
// without its FileInfo and, for a missing path, its PathError (the judges
// look at a dozen paths per repository, most of them missing: 3 KB each).
func lstatType(path string) (fs.FileMode, error) {
	var st unix.Stat_t
	for {
		err := unix.Lstat(path, &st)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		}
		return statType(st.Mode), nil
	}
}

// statType is the fs type of a stat mode.
func statType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}
