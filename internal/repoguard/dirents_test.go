//go:build linux

package repoguard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestReadDirIsOSReadDir: the sweep's directory reader lists what
// os.ReadDir does (names and types: folders, files, links, a FIFO), over
// more entries than one getdents buffer holds.
func TestReadDirIsOSReadDir(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-with-a-long-name-%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWatch()
	w.SetRoots([]string{filepath.Dir(dir)})
	// DirReader's entries, as DirEntries, after it read a bigger folder
	// (its buffers are reused).
	var r DirReader
	if _, _, _, err := r.Read(filepath.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	viaReader := func(p string) ([]os.DirEntry, error) {
		names, _, _, err := r.Read(p)
		var out []os.DirEntry
		for _, n := range names {
			out = append(out, &dirent{name: n.Name, typ: n.Type})
		}
		return out, err
	}
	for _, read := range []func(string) ([]os.DirEntry, error){w.readDir, ReadDirNoBlock, viaReader} {
		got, err := read(dir)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		if len(got) != len(want) {
			t.Fatalf("%d entries, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
				t.Errorf("entry %d: %s %v, want %s %v", i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
			}
		}
	}
}

// TestDirReader: a folder's stamp is its inode and change time; no link
// is followed at the end of the path, and a FIFO put in a folder's place
// does not block the read.
func TestDirReader(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	var r DirReader
	_, ino, ctime, err := r.Read(sub)
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(sub, &st); err != nil {
		t.Fatal(err)
	}
	if ino != st.Ino || ctime != st.Ctim.Sec*1e9+st.Ctim.Nsec {
		t.Fatalf("stamp %d %d, want %d %d", ino, ctime, st.Ino, st.Ctim.Sec*1e9+st.Ctim.Nsec)
	}
	if err := os.Symlink(sub, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"link", "fifo"} {
		if _, _, _, err := r.Read(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was read as a folder", p)
		}
	}
}
