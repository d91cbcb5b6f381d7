package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// A new repository whose rebase state would run something is disabled;
// and one planted again and again still finds a free name to go to.
func TestGitWatchNewRepoRebaseStateAndManyPlants(t *testing.T) {
	ws := t.TempDir()
	mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
	mp.watch.Start()
	defer mp.watch.Close()
	writeFile(t, filepath.Join(ws, "r", ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "r", ".git", "rebase-merge", "git-rebase-todo"), "exec touch /tmp/p\n")
	if got := strings.Join(mp.watch.Check(), "\n"); !strings.Contains(got, "disabled a new git repository at "+filepath.Join(ws, "r", ".git")) ||
		!strings.Contains(got, "rebase-merge state would run \"exec touch /tmp/p\"") {
		t.Errorf("the repository with a planted todo list: %q", got)
	}
	for i := 0; i < 100; i++ {
		if err := os.MkdirAll(filepath.Join(ws, "x", fmt.Sprintf(".git%s%d", repoguard.DisabledMark, i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, "x", ".git", "config"), "[core]\n\tfsmonitor = evil\n")
	if got := strings.Join(mp.watch.Check(), "\n"); !strings.Contains(got, "disabled a new git repository at "+filepath.Join(ws, "x", ".git")) {
		t.Errorf("with the first hundred names taken: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "x", ".git")); err == nil {
		t.Errorf("the planted repository is still armed: %q", mp.watch.Check())
	}
}

// The look at control files and rebase state is skipped while nothing
// changed in their directories (inotify says so), and never misses a file
// planted after a quiet look: in the git directory, in objects/info, in a
// .hg, in a repository without objects/info, and an exec line added to a
// rebase's todo list.
func TestControlLookSkippedOnlyWhenQuiet(t *testing.T) {
	for _, plant := range []struct{ path, content string }{
		{".git/config.worktree", "[core]\n\tfsmonitor = x\n"},
		{".git/objects/info/alternates", "/elsewhere\n"},
		{"h/.hg/hgrc", "[hooks]\npre-status = x\n"},
		{"noinfo/.git/objects/info/alternates", "/elsewhere\n"},
		{".git/rebase-merge/git-rebase-todo", "exec touch /tmp/p\n"},
	} {
		t.Run(plant.path, func(t *testing.T) {
			ws := t.TempDir()
			dirs := []string{".git/hooks", ".git/objects/info", ".git/refs", "h/.hg/store"}
			noInfo := strings.HasPrefix(plant.path, "noinfo/")
			if noInfo {
				dirs = append(dirs, "noinfo/.git/hooks", "noinfo/.git/refs")
				writeFile(t, filepath.Join(ws, "noinfo", ".git", "HEAD"), "ref: refs/heads/main\n")
			}
			for _, d := range dirs {
				if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
			writeFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
			mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
			mp.watch.Start()
			mp.watch.ControlFiles(mp.gitWatch)
			defer mp.watch.Close()
			if mp.watch.WaitFD() < 0 {
				t.Skip("no inotify here")
			}
			look := func() []string {
				lines := mp.watch.Check()
				if mp.watch.ControlChanged() {
					lines = append(lines, mp.revertGit()...)
				}
				return lines
			}
			look() // the first look is whole
			look()
			if changed := mp.watch.ControlChanged(); changed != noInfo {
				t.Errorf("a quiet check looked at the control files: %v (want %v: a missing objects/info is looked at every time)", changed, noInfo)
			}
			writeFile(t, filepath.Join(ws, plant.path), plant.content)
			lines := look()
			if _, err := os.Lstat(filepath.Join(ws, plant.path)); err == nil {
				t.Errorf("%s planted after a quiet check is still there (%q)", plant.path, lines)
			}
		})
	}
}

// A job renames the project's .git/objects away (it is not a mount point)
// and builds a new objects/info/alternates while no command runs: the
// control watches were on the old folders, and nothing woke the idle
// check. Each new folder on the way is watched as it appears.
func TestControlWatchFollowsReplacedObjects(t *testing.T) {
	ws := t.TempDir()
	for _, d := range []string{".git/hooks", ".git/objects/info", ".git/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
	mp.watch.Start()
	mp.watch.ControlFiles(mp.gitWatch)
	defer mp.watch.Close()
	if mp.watch.WaitFD() < 0 {
		t.Skip("no inotify here")
	}
	// What the idle watcher does: wait for an event, then check.
	idle := func(step string) {
		t.Helper()
		fds := []unix.PollFd{{Fd: int32(mp.watch.WaitFD()), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, 1000); n != 1 {
			t.Fatalf("%s: no event woke the idle check", step)
		}
		mp.watch.Check()
		if mp.watch.ControlChanged() {
			mp.revertGit()
		}
	}
	mp.watch.Check()
	git := filepath.Join(ws, ".git")
	if err := os.Rename(filepath.Join(git, "objects"), filepath.Join(git, "o2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(git, "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	idle("new objects")
	if err := os.Mkdir(filepath.Join(git, "objects", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	idle("new objects/info")
	writeFile(t, filepath.Join(git, "objects", "info", "alternates"), "/elsewhere\n")
	idle("alternates")
	if _, err := os.Lstat(filepath.Join(git, "objects", "info", "alternates")); err == nil {
		t.Error("the alternates planted in a replaced objects folder is still there")
	}
}
