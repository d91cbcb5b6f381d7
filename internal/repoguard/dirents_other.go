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

// DirReader lists folders as ReadDirNoBlock does, with their stamp (the
// scan cache that uses it is Linux's; this one keeps the API whole).
type DirReader struct{ ents []DirName }

// DirName is an entry a DirReader read.
type DirName struct {
	Name string
	Type fs.FileMode
}

// Read lists dir; its inode and change time are not told here (0).
func (r *DirReader) Read(dir string) ([]DirName, uint64, int64, error) {
	ents, err := ReadDirNoBlock(dir)
	r.ents = r.ents[:0]
	for _, e := range ents {
		r.ents = append(r.ents, DirName{Name: e.Name(), Type: e.Type()})
	}
	return r.ents, 0, 0, err
}
