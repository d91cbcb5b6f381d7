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
	for _, read := range []func(string) ([]os.DirEntry, error){w.readDir, ReadDirNoBlock} {
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
