//go:build linux

package repoguard

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestIndexGitlinks(t *testing.T) {
	testutil.RequireTool(t, "git")
	for _, tt := range []struct {
		version string
		format  string
	}{{"2", "sha1"}, {"3", "sha1"}, {"4", "sha1"}, {"2", "sha256"}, {"4", "sha256"}} {
		t.Run(tt.version+"/"+tt.format, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "--object-format="+tt.format)
			writeFile(t, filepath.Join(dir, "a", "file.txt"), "x")
			git(t, dir, "add", "a/file.txt")
			sha := git(t, dir, "hash-object", "-w", "a/file.txt")
			want := []string{"a/deep/er/sub", "b/sub"}
			for _, p := range want {
				git(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+sha+","+p)
			}
			// An extended flag (intent to add) makes version 3 entries longer.
			writeFile(t, filepath.Join(dir, "c.txt"), "x")
			git(t, dir, "add", "-N", "c.txt")
			git(t, dir, "update-index", "--index-version", tt.version)
			b, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			hashLen := 20
			if tt.format == "sha256" {
				hashLen = 32
			}
			got, err := indexGitlinks(b, hashLen)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("gitlinks %q, want %q", got, want)
			}
		})
	}
	if _, err := indexGitlinks([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x05short"), 20); err == nil {
		t.Fatal("a cut index was read")
	}
}

// TestGitlinkFoundBeforeTheSweep: a repository planted deep, behind more
// folders than one check sweeps, and put in the project's index as a
// gitlink, is judged by the check after the command: host git status
// would run it.
func TestGitlinkFoundBeforeTheSweep(t *testing.T) {
	testutil.RequireTool(t, "git")
	root := t.TempDir()
	git(t, root, "init", "-q")
	git(t, root, "commit", "-q", "--allow-empty", "-m", "init")
	for i := range 2 * sweepStep {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := NewWatch()
	w.SetRoots([]string{root})
	w.MarkKnown(filepath.Join(root, ".git"))
	w.Baseline(filepath.Join(root, ".git"))
	w.MarkUnseen()
	w.Start()
	defer w.Close()
	_ = w.Check()
	sub := filepath.Join(root, "zzz", "deep", "sub")
	git(t, root, "init", "-q", sub)
	git(t, sub, "commit", "-q", "--allow-empty", "-m", "e")
	git(t, sub, "config", "core.fsmonitor", "touch /x")
	git(t, root, "update-index", "--add", "--cacheinfo", "160000,"+git(t, sub, "rev-parse", "HEAD")+",zzz/deep/sub")
	if lines := strings.Join(w.Check(), "\n"); !strings.Contains(lines, filepath.Join(sub, ".git")) {
		t.Fatalf("the gitlink's repository was not judged: %q", lines)
	}
}
