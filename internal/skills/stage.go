package skills

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// A local folder to import (or a clone) sits where sandboxed commands can
// write, so it is hostile while we read it: any entry may be swapped for a
// symlink between a check and an open. Staging therefore reads only through
// descriptors: the source folder is opened once, every entry below it is
// opened relative to its parent's descriptor with O_NOFOLLOW, the opened
// file is checked (fstat: a regular file or a folder) and copied from that
// same descriptor. A symlink anywhere, even one planted mid-import, is never
// followed; the policy check names the path the descriptor really has.

// stagedSkill is one skill folder copied out of the source.
type stagedSkill struct {
	Src      string // where it was found (for messages)
	Dir      string // the private copy
	Skipped  []string
	Withheld []string
}

// stager copies skill folders out of one hostile source tree.
type stager struct {
	allow ReadFilter // nil: everything
	dst   string     // private folder receiving the copies
	n     int        // copies made (folder names in dst)
}

// openDirNoFollow opens name relative to dir (or an absolute path with
// dir = unix.AT_FDCWD) as a folder without following a final symlink.
func openDirNoFollow(dir int, name string) (*os.File, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// realPath is the path the kernel has for an open file (its symlinks
// resolved), which is what the policy must judge.
func realPath(f *os.File) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}

// stageSkills finds the skill folders under root as findSkillDirs does (root
// itself when it holds a SKILL.md, else sub-folders up to depth levels down,
// skipping hidden ones and node_modules) and copies each into a new folder
// under dst.
func stageSkills(root, dst string, depth int, allow ReadFilter) ([]stagedSkill, error) {
	// The user (or the model) named root; its own symlinks are resolved once
	// here, and the policy judges where it really is.
	f, err := os.Open(root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", root)
	}
	real, err := realPath(f)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", root, err)
	}
	if allow != nil {
		if ok, reason := allow(real); !ok {
			return nil, fmt.Errorf("cannot import %s: %s", root, reason)
		}
	}
	s := &stager{allow: allow, dst: dst}
	return s.find(f, real, depth)
}

// find returns the skills in the open folder dir (path p).
func (s *stager) find(dir *os.File, p string, depth int) ([]stagedSkill, error) {
	if isSkill(dir) {
		one, err := s.copySkill(dir, p)
		if err != nil {
			return nil, err
		}
		return []stagedSkill{one}, nil
	}
	if depth == 0 {
		return nil, nil
	}
	names, err := readNames(dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", p, err)
	}
	var out []stagedSkill
	var errs []error
	for _, name := range names {
		if strings.HasPrefix(name, ".") || name == "node_modules" {
			continue
		}
		sub, err := openDirNoFollow(int(dir.Fd()), name)
		if err != nil {
			continue // not a folder, or a symlink: not searched
		}
		sp := filepath.Join(p, name)
		if s.allow != nil {
			if ok, _ := s.allow(sp); !ok {
				sub.Close()
				continue
			}
		}
		found, err := s.find(sub, sp, depth-1)
		sub.Close()
		out = append(out, found...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// isSkill reports whether dir holds a SKILL.md that is a regular file.
func isSkill(dir *os.File) bool {
	var st unix.Stat_t
	err := unix.Fstatat(int(dir.Fd()), SkillFile, &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}

func readNames(dir *os.File) ([]string, error) {
	// A fresh descriptor: reading the listing moves the offset of dir.
	d, err := openDirNoFollow(int(dir.Fd()), ".")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// copySkill copies the skill folder dir (path p) into a new folder in s.dst.
func (s *stager) copySkill(dir *os.File, p string) (stagedSkill, error) {
	s.n++
	out := stagedSkill{Src: p, Dir: filepath.Join(s.dst, fmt.Sprintf("skill-%d", s.n))}
	if s.allow != nil {
		if ok, reason := s.allow(filepath.Join(p, SkillFile)); !ok {
			return out, fmt.Errorf("cannot import %s: %s", p, reason)
		}
	}
	if err := os.Mkdir(out.Dir, 0o700); err != nil {
		return out, err
	}
	if err := s.copyDir(dir, p, out.Dir, "", &out); err != nil {
		return out, fmt.Errorf("copy %s: %w", p, err)
	}
	if err := os.Chmod(out.Dir, 0o755); err != nil {
		return out, err
	}
	return out, nil
}

// copyDir copies the entries of the open folder dir (path p, rel below the
// skill's root) into the existing folder target.
func (s *stager) copyDir(dir *os.File, p, target, rel string, out *stagedSkill) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		r := filepath.Join(rel, name)
		if name == ".git" {
			continue
		}
		ep := filepath.Join(p, name)
		if s.allow != nil {
			if ok, _ := s.allow(ep); !ok {
				out.Withheld = append(out.Withheld, r)
				continue
			}
		}
		// O_NONBLOCK: opening a FIFO planted here must not hang the import.
		fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			// ELOOP: a symlink. Anything we cannot open is left out too.
			out.Skipped = append(out.Skipped, r)
			continue
		}
		f := os.NewFile(uintptr(fd), ep)
		err = s.copyEntry(f, ep, filepath.Join(target, name), r, out)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies the opened entry f after checking what it is.
func (s *stager) copyEntry(f *os.File, p, target, rel string, out *stagedSkill) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := os.Mkdir(target, 0o700); err != nil {
			return err
		}
		if err := s.copyDir(f, p, target, rel, out); err != nil {
			return err
		}
		return os.Chmod(target, 0o755)
	case fi.Mode().IsRegular():
		if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
			return err
		}
		return copyFrom(f, target, fi.Mode().Perm())
	default:
		out.Skipped = append(out.Skipped, rel)
		return nil
	}
}

// copyFrom writes what f holds to a new file dst.
func copyFrom(f *os.File, dst string, perm os.FileMode) error {
	w, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
