//go:build !linux

package repoguard

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// readDirFD lists the open directory fd (of the folder dir); the caller
// keeps fd and closes it.
func readDirFD(fd int, dir string) ([]fs.DirEntry, error) {
	d, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), dir)
	defer f.Close()
	return f.ReadDir(-1)
}

// lstatType is the type bits of path's mode, not following a link.
func lstatType(path string) (fs.FileMode, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	return st.Mode().Type(), nil
}
