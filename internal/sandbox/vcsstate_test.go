package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// hgDanger: what in a .hg directory makes hg on the host run a program or
// read configuration from elsewhere; a clone's [paths] is harmless.
func TestHgDanger(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, hg string)
		want  string // substring; "" means harmless
	}{
		{"empty repository", func(t *testing.T, hg string) {}, ""},
		{"a clone's paths", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "# made by clone\n[paths]\ndefault = https://example.org/r\n")
		}, ""},
		{"hooks", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "[hooks]\npre-status = touch x\n")
		}, "its hgrc has a [hooks] section"},
		{"extensions after paths", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "[paths]\ndefault = x\n[Extensions]\nevil = /x/evil.py\n")
		}, "[extensions] section"},
		{"include", func(t *testing.T, hg string) { writeFile(t, filepath.Join(hg, "hgrc"), "%include ../../rc\n") }, "an %include directive"},
		{"not-shared hgrc", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc-not-shared"), "[ui]\nssh = evil\n")
		}, "its hgrc-not-shared has a [ui] section"},
		{"sharedpath", func(t *testing.T, hg string) { writeFile(t, filepath.Join(hg, "sharedpath"), "/elsewhere/.hg\n") }, "sharedpath"},
		{"hgrc is a link", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "real"), "[paths]\n")
			if err := os.Symlink("real", filepath.Join(hg, "hgrc")); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"hgrc is a FIFO", func(t *testing.T, hg string) {
			if err := syscall.Mkfifo(filepath.Join(hg, "hgrc"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hg := filepath.Join(t.TempDir(), ".hg")
			if err := os.Mkdir(hg, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, hg)
			got := hgDanger(hg)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("hgDanger = %q, want %q", got, tt.want)
			}
		})
	}
	dir := t.TempDir()
	if err := os.Symlink("/elsewhere", filepath.Join(dir, ".hg")); err != nil {
		t.Fatal(err)
	}
	if got := hgDanger(filepath.Join(dir, ".hg")); !strings.Contains(got, "symlink") {
		t.Errorf("a .hg symlink: %q", got)
	}
}

// stateRuns: what a rebase's or cherry-pick's state would run at the
// host's next --continue.
func TestStateRuns(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"ordinary picks", map[string]string{"git-rebase-todo": "pick 1234 one\n# exec in a comment\nfixup 5678 two\n", "strategy": "ort\n"}, nil},
		{"exec and x", map[string]string{"git-rebase-todo": "pick 1 a\nexec make test\nx  touch /tmp/p\n"}, []string{"exec make test", "exec touch /tmp/p"}},
		{"a strategy of its own", map[string]string{"strategy": "../../evil\n"}, []string{"merge strategy ../../evil"}},
		{"sequencer options", map[string]string{"opts": "[options]\n\tStrategy = \"../x\"\n\tstrategy-option = theirs\n", "todo": "pick 1 a\n"}, []string{"merge strategy ../x"}},
		{"builtin strategy in options", map[string]string{"opts": "[options]\n\tstrategy = recursive\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rebase-merge")
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			if got := stateRuns(dir); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("stateRuns = %q, want %q", got, tt.want)
			}
		})
	}
	root := t.TempDir()
	if got := stateRuns(filepath.Join(root, "absent")); got != nil {
		t.Errorf("no state: %q", got)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "rebase-merge")); err != nil {
		t.Fatal(err)
	}
	if got := stateRuns(filepath.Join(root, "rebase-merge")); len(got) != 1 || !strings.Contains(got[0], "not a directory") {
		t.Errorf("a linked state directory: %q", got)
	}
	fifo := filepath.Join(root, "seq")
	if err := os.Mkdir(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "todo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := stateRuns(fifo); len(got) != 1 || !strings.Contains(got[0], "todo:") {
		t.Errorf("a FIFO todo (read without blocking): %q", got)
	}
}

// A new repository whose rebase state would run something is disabled;
// and one planted again and again still finds a free name to go to.
func TestGitWatchNewRepoRebaseStateAndManyPlants(t *testing.T) {
	ws := t.TempDir()
	mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
	mp.watch.start()
	defer mp.watch.close()
	writeFile(t, filepath.Join(ws, "r", ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(ws, "r", ".git", "rebase-merge", "git-rebase-todo"), "exec touch /tmp/p\n")
	if got := strings.Join(mp.watch.check(), "\n"); !strings.Contains(got, "disabled a new git repository at "+filepath.Join(ws, "r", ".git")) ||
		!strings.Contains(got, "rebase-merge state would run \"exec touch /tmp/p\"") {
		t.Errorf("the repository with a planted todo list: %q", got)
	}
	for i := 0; i < 100; i++ {
		if err := os.MkdirAll(filepath.Join(ws, "x", fmt.Sprintf(".git%s%d", disabledMark, i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, "x", ".git", "config"), "[core]\n\tfsmonitor = evil\n")
	if got := strings.Join(mp.watch.check(), "\n"); !strings.Contains(got, "disabled a new git repository at "+filepath.Join(ws, "x", ".git")) {
		t.Errorf("with the first hundred names taken: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "x", ".git")); err == nil {
		t.Errorf("the planted repository is still armed: %q", mp.watch.check())
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
			mp.watch.start()
			mp.watch.controlFiles(mp.gitWatch)
			defer mp.watch.close()
			if mp.watch.fd < 0 {
				t.Skip("no inotify here")
			}
			look := func() []string {
				lines := mp.watch.check()
				if mp.watch.controlChanged() {
					lines = append(lines, mp.revertGit()...)
				}
				return lines
			}
			look() // the first look is whole
			look()
			if changed := mp.watch.controlChanged(); changed != noInfo {
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
	mp.watch.start()
	mp.watch.controlFiles(mp.gitWatch)
	defer mp.watch.close()
	if mp.watch.fd < 0 {
		t.Skip("no inotify here")
	}
	// What the idle watcher does: wait for an event, then check.
	idle := func(step string) {
		t.Helper()
		fds := []unix.PollFd{{Fd: int32(mp.watch.fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, 1000); n != 1 {
			t.Fatalf("%s: no event woke the idle check", step)
		}
		mp.watch.check()
		if mp.watch.controlChanged() {
			mp.revertGit()
		}
	}
	mp.watch.check()
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
