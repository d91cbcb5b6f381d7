package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

// TestGitMetadataCannotBeReplaced: hooks and config are read-only, but git on
// the host would run hooks just as well from a replaced .git (renamed away,
// a copy put in its place with a hook added), from a worktree's .git file
// pointed elsewhere, or from a common directory named by .git/commondir. None
// of these may leave the host with a hook or config the sandbox wrote.
func TestGitMetadataCannotBeReplaced(t *testing.T) {
	testutil.RequireTool(t, "git")
	skipUnderLandlock(t, landlockGapPin)
	f := newFixture(t, nil)
	gitRun(t, f.ws, "init", "-q")
	gitRun(t, f.ws, "commit", "-q", "--allow-empty", "-m", "init")
	gitRun(t, f.ws, "worktree", "add", "-q", "wt")
	nested := filepath.Join(f.ws, "a", "b")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, nested, "init", "-q")
	evil := "printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > %[1]s/hooks/pre-commit; printf '[core]\\n\\thooksPath = %[1]s/hooks\\n' >> %[1]s/config"
	watched := []string{filepath.Join(f.ws, ".git"), filepath.Join(f.ws, "wt", ".git"), filepath.Join(nested, ".git")}
	before := snapshot(t, watched...)

	attempts := []string{
		"mv .git .git-old",
		"mv .git .git-old; mkdir .git && cp -r .git-old/. .git/; " + strings.ReplaceAll(evil, "%[1]s", ".git"),
		"mv a a-old; mkdir -p a/b && git -C a/b init -q; " + strings.ReplaceAll(evil, "%[1]s", "a/b/.git"),
		"mv a/b a/b-old",
		"cp -r .git evil-git; " + strings.ReplaceAll(evil, "%[1]s", "evil-git") + "; echo \"$PWD/evil-git\" > .git/commondir",
		"echo \"gitdir: $PWD/evil-git\" > wt/.git",
		"rm wt/.git; echo \"gitdir: $PWD/evil-git\" > wt/.git",
	}
	for _, c := range attempts {
		res := f.run(t, c)
		t.Logf("%s: exit=%d blocked=%v %s", c, res.ExitCode, res.Blocked, firstLine(res.Stderr))
	}
	for _, p := range []string{".git-old", "a-old", "a/b-old", ".git/commondir"} {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s exists on the host after the attempts", p)
		}
	}
	if d := diffSnapshots(before, snapshot(t, watched...)); len(d) > 0 {
		t.Errorf("git metadata was replaced from inside the sandbox:\n%s", strings.Join(d, "\n"))
	}
	// A commondir planted and found after the command is reported blocked.
	res := f.run(t, "echo /elsewhere > .git/commondir")
	if !res.Blocked || !strings.Contains(res.BlockedReason, "commondir") {
		t.Errorf("planting .git/commondir: %+v, want it reported blocked", res)
	}
	// Ordinary git work still runs, in the repository and the nested one.
	if res := f.run(t, "git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m ok && git -C a/b status --short && echo ok"); res.Stdout != "ok" {
		t.Errorf("ordinary git work failed: %+v", res)
	}
}
