package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamBareRepoShape: git takes a directory holding HEAD, objects and
// refs for a bare repository, and looks for one in each directory before
// the .git of the directories above. A command that makes the project's own
// .git unusable (HEAD is writable) and turns the project, or a folder in it,
// into such a repository with core.fsmonitor got `git status` on the host to
// run its program, although no new .git appeared.
func TestRedTeamBareRepoShape(t *testing.T) {
	requireBwrap(t)
	testutil.RequireTool(t, "git")
	for _, tc := range []struct{ name, dir, prep string }{
		{"project root", ".", "echo garbage > .git/HEAD; "},
		{"sub-folder", "src", "mkdir -p src; "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			gitHost(t, f.ws, "init", "-q")
			gitHost(t, f.ws, "commit", "-q", "--allow-empty", "-m", "x")
			mark := filepath.Join(t.TempDir(), "pwned")
			plant := tc.prep + "cd " + tc.dir + " && mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && " +
				"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch " + mark + "\"\\n' > config"
			res := f.run(t, plant)
			if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, tc.dir, "HEAD")) {
				t.Errorf("the bare-shaped repository was not reported: %+v", res)
			}
			c := exec.Command("git", "status")
			c.Dir = filepath.Join(f.ws, tc.dir)
			c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			out, _ := c.CombinedOutput()
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("git status on the host ran the planted core.fsmonitor:\n%s", out)
			}
		})
	}
	// A folder that merely holds a file called HEAD is left alone.
	f := newFixture(t, nil)
	res := f.run(t, "mkdir -p notes && echo hi > notes/HEAD && mkdir notes/refs")
	if strings.Contains(res.Stderr, "disabled") {
		t.Errorf("a plain HEAD file was taken for a repository: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "notes", "HEAD")); err != nil {
		t.Errorf("notes/HEAD: %v", err)
	}
}
