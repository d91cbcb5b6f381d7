// Package fsutil holds the file writes several packages share: replacing a
// file atomically, saving text to a fresh temporary file, and Synapse's own
// private scratch directory.
package fsutil

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileAtomic replaces path with data: it writes a temporary file beside
// path with mode perm, syncs it and renames it over path, so a crash leaves
// either the old content or the new one, never a torn file. The parent
// directory must exist (callers choose its mode). On failure the temporary
// file is removed and path is untouched.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	// Written as it is, in one call: a buffer would only copy it (and cost
	// 64 KB for every tool result a long session offloads).
	return writeAtomic(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteAtomic is WriteFileAtomic for content produced by write, streamed
// through a buffer, so a large file never has to be held in memory whole.
func WriteAtomic(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return writeAtomic(path, perm, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 64<<10)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

// writeAtomic creates the temporary file, lets write fill it, then sets
// its mode, syncs it and renames it over path.
func writeAtomic(path string, perm fs.FileMode, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	tmp := f.Name()
	err = write(f)
	if err == nil {
		// Chmod, not the create mode, so the umask does not narrow perm.
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// SaveTemp writes text to a new file in dir named after pattern (as for
// os.CreateTemp) and returns its path. An empty dir means os.TempDir(); a
// missing dir is created private (0700). A failed write leaves no file.
//
// dir usually sits where sandboxed commands can write, so it is not trusted:
// it is opened without following a symlink planted in its place (an error,
// not a write into wherever the link points), and the file is created
// relative to that open directory, exclusively and without following links.
func SaveTemp(dir, pattern, text string) (string, error) {
	f, err := createTemp(dir, pattern, func(f *os.File) error {
		_, err := f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return f.Name(), nil
}

// CreateTemp creates a new file (open for reading and writing) as SaveTemp
// does, for a caller that writes it as it goes; the file's Name is its path.
func CreateTemp(dir, pattern string) (*os.File, error) { return createTemp(dir, pattern, nil) }

// createTemp creates the file and, with fill, fills it: when fill fails
// the file is removed (relative to the open directory).
func createTemp(dir, pattern string, fill func(*os.File) error) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	d, err := openDirNoFollow(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	prefix, suffix, _ := strings.Cut(pattern, "*")
	for range 100 {
		name := prefix + randomName() + suffix
		f, err := createAt(d, name)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create a file in %s: %w", dir, err)
		}
		if fill != nil {
			if err := fill(f); err != nil {
				_ = removeAt(d, name)
				return nil, err
			}
		}
		return f, nil
	}
	return nil, fmt.Errorf("create a file in %s: no free name after 100 tries", dir)
}

func randomName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ProjectRoot is the project dir belongs to: the nearest directory at or
// above it holding a .git entry (a repository's directory, or the file of a
// worktree or submodule), else dir itself, cleaned. It walks dir's own
// ancestors by name and only looks at .git with Lstat, so a symbolic link
// is never followed somewhere else, and it runs no git: a repository's
// configuration cannot make finding the project run anything.
func ProjectRoot(dir string) string {
	dir = filepath.Clean(dir)
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
