package fsutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name    string
		old     *string // existing content, nil for none
		perm    os.FileMode
		wantErr bool
	}{
		{name: "new file private", perm: 0o600},
		{name: "new file readable", perm: 0o644},
		{name: "overwrite narrows mode", old: ptr("old content that is longer"), perm: 0o600},
		{name: "overwrite executable", old: ptr("x"), perm: 0o750},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f.json")
			if tt.old != nil {
				if err := os.WriteFile(path, []byte(*tt.old), 0o666); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFileAtomic(path, []byte("new"), tt.perm); err != nil {
				t.Fatalf("WriteFileAtomic: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Errorf("content = %q (%v), want %q", got, err, "new")
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != tt.perm {
				t.Errorf("mode = %v (%v), want %v", fi.Mode().Perm(), err, tt.perm)
			}
			assertOnly(t, dir, "f.json")
		})
	}
}

func TestWriteFileAtomicFailures(t *testing.T) {
	t.Run("missing parent", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "no", "f.json")
		err := WriteFileAtomic(path, []byte("x"), 0o600)
		if err == nil || !strings.Contains(err.Error(), "cannot write "+path) {
			t.Fatalf("err = %v, want one naming %s", err, path)
		}
		assertOnly(t, dir)
	})
	t.Run("path is a non-empty directory", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "d")
		if err := os.MkdirAll(filepath.Join(path, "child"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(path, []byte("x"), 0o600); err == nil {
			t.Fatal("writing over a directory succeeded")
		}
		assertOnly(t, dir, "d")
	})
}

func TestSaveTemp(t *testing.T) {
	t.Run("creates the directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out", "nested")
		path, err := SaveTemp(dir, "bash-output-*.txt", "hello")
		if err != nil {
			t.Fatalf("SaveTemp: %v", err)
		}
		if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "bash-output-") || !strings.HasSuffix(path, ".txt") {
			t.Errorf("path = %s, want bash-output-*.txt in %s", path, dir)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != "hello" {
			t.Errorf("content = %q (%v)", got, err)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("dir mode = %v (%v), want 0700", fi.Mode().Perm(), err)
		}
	})
	t.Run("empty dir means the temp dir", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		path, err := SaveTemp("", "x-*.md", "text")
		if err != nil {
			t.Fatalf("SaveTemp: %v", err)
		}
		if filepath.Dir(path) != tmp {
			t.Errorf("path = %s, want it in %s", path, tmp)
		}
	})
	t.Run("dir is a file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if path, err := SaveTemp(file, "x-*", "text"); err == nil {
			t.Errorf("SaveTemp into a file = %s, want an error", path)
		}
	})
}

func ptr(s string) *string { return &s }

// assertOnly fails unless dir holds exactly the named entries (no temp files).
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %v, want %v", dir, got, names)
	}
}

// BenchmarkWriteFileAtomic: an 8 KB tool result, as a long session
// offloads one per step; B/op shows that the data is not copied through a
// buffer (it was 64 KB more).
func BenchmarkWriteFileAtomic(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte("-rw-r--r-- 1 user user  4096 Jan  1 00:00 some/generated/file.go\n"), 128)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := WriteFileAtomic(filepath.Join(dir, strconv.Itoa(i%64)+".txt"), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}
