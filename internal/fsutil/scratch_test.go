package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	parent := t.TempDir()
	s, err := NewScratch(parent)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(s.Dir())
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch dir %s: %v %v", s.Dir(), fi.Mode(), err)
	}
	if !strings.HasPrefix(filepath.Base(s.Dir()), ScratchPrefix) {
		t.Errorf("name %s lacks %s", s.Dir(), ScratchPrefix)
	}
	p, err := SaveTemp(s.Dir(), "out-*.txt", "data")
	if err != nil || filepath.Dir(p) != s.Dir() {
		t.Fatalf("SaveTemp = %s, %v", p, err)
	}
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("scratch dir still there after Remove: %v", err)
	}
}

// TestSaveTempRefusesPlantedSymlink: a directory name someone else can
// create in the temp dir, replaced by a symlink, must not redirect the write.
func TestSaveTempRefusesPlantedSymlink(t *testing.T) {
	parent, target := t.TempDir(), t.TempDir()
	link := filepath.Join(parent, "out")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if p, err := SaveTemp(link, "x-*", "payload"); err == nil {
		t.Errorf("SaveTemp through a symlink wrote %s", p)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("the link's target got %d files", len(entries))
	}
}

func TestRemoveStale(t *testing.T) {
	parent, outside := t.TempDir(), t.TempDir()
	now := time.Now()
	old := filepath.Join(parent, ScratchPrefix+"old")
	fresh := filepath.Join(parent, ScratchPrefix+"fresh")
	// Old, but its process (this test) still runs.
	live := filepath.Join(parent, ScratchPrefix+strconv.Itoa(os.Getpid())+"-x")
	other := filepath.Join(parent, "synapse-other")
	for _, d := range []string{old, fresh, other, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A symlink with the prefix, pointing at a folder that must survive.
	if err := os.Symlink(outside, filepath.Join(parent, ScratchPrefix+"link")); err != nil {
		t.Fatal(err)
	}
	past := now.Add(-48 * time.Hour)
	for _, d := range []string{old, other, outside, live} {
		if err := os.Chtimes(d, past, past); err != nil {
			t.Fatal(err)
		}
	}
	if n := RemoveStale(parent, 24*time.Hour, now); n != 1 {
		t.Errorf("removed %d, want 1", n)
	}
	for _, d := range []string{fresh, other, live, filepath.Join(outside, "keep")} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("stale %s kept: %v", old, err)
	}
}

// otherOwner is a FileInfo whose owner is someone else.
type otherOwner struct{ os.FileInfo }

func (o otherOwner) Sys() any {
	st := *o.FileInfo.Sys().(*syscall.Stat_t)
	st.Uid = uint32(os.Getuid() + 1)
	return &st
}

func TestOwnedByUs(t *testing.T) {
	fi, err := os.Lstat(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !ownedByUs(fi) {
		t.Error("a directory this test made is not ours")
	}
	if ownedByUs(otherOwner{fi}) {
		t.Error("another user's directory counted as ours")
	}
}
