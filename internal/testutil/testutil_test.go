package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipOrFail runs a child test process (this test binary) with and
// without CI=true and checks the child skipped or failed.
func TestSkipOrFail(t *testing.T) {
	if os.Getenv("TESTUTIL_CHILD") == "1" {
		SkipOrFail(t, "tool %s missing", "xyz")
		t.Fatal("SkipOrFail returned")
	}
	tests := []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"", false, "--- SKIP: TestSkipOrFail"},
		{"false", false, "--- SKIP: TestSkipOrFail"},
		{"true", true, "required under CI (CI=true): tool xyz missing"},
	}
	for _, tt := range tests {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSkipOrFail$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTUTIL_CHILD=1", "CI="+tt.ci)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tt.wantFail || !strings.Contains(string(out), tt.want) {
			t.Errorf("CI=%q: failed=%v, output:\n%s\nwant failed=%v and %q", tt.ci, failed, out, tt.wantFail, tt.want)
		}
		if !strings.Contains(string(out), "tool xyz missing") {
			t.Errorf("CI=%q: the reason is not reported:\n%s", tt.ci, out)
		}
	}
}

func TestRequireTool(t *testing.T) {
	if p := RequireTool(t, "sh"); !strings.HasSuffix(p, "/sh") {
		t.Errorf("RequireTool(sh) = %q", p)
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "f.txt")
	WriteFile(t, path, "content")
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "content" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode().Perm(), err)
	}
}

func TestWaitFor(t *testing.T) {
	n := 0
	WaitFor(t, "the third look", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond was called %d times, want 3", n)
	}
}
