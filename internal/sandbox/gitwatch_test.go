package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoguard.Watch finds a dangerous new repository with inotify and, where a
// directory could not be watched, by its ctime; a harmless one is left.
func TestGitWatchFindsNewRepositories(t *testing.T) {
	for _, inotify := range []bool{true, false} {
		name := "ctime"
		if inotify {
			name = "inotify"
		}
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "src", "main.go"), "package main\n")
			mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
			if inotify {
				mp.watch.Start()
				if mp.watch.WaitFD() < 0 {
					t.Skip("no inotify here")
				}
				defer mp.watch.Close()
			}
			if got := mp.watch.Check(); len(got) != 0 {
				t.Fatalf("nothing changed, yet: %v", got)
			}
			writeFile(t, filepath.Join(ws, "src", "deep", "er", "repo", ".git", "config"), "[core]\n\tfsmonitor = evil\n")
			writeFile(t, filepath.Join(ws, "plain", ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n")
			got := strings.Join(mp.watch.Check(), "\n")
			if !strings.Contains(got, filepath.Join(ws, "src", "deep", "er", "repo", ".git")+": its config sets core.fsmonitor") {
				t.Errorf("the fsmonitor repository was not reported: %q", got)
			}
			if _, err := os.Lstat(filepath.Join(ws, "src", "deep", "er", "repo", ".git")); err == nil {
				t.Error("the dangerous .git is still in place")
			}
			if strings.Contains(got, "plain") {
				t.Errorf("a harmless repository was reported: %q", got)
			}
			// A later change to the harmless one is caught.
			writeFile(t, filepath.Join(ws, "plain", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
			if got := strings.Join(mp.watch.Check(), "\n"); !strings.Contains(got, "it has a hook (pre-commit)") {
				t.Errorf("the hook planted later was not reported: %q", got)
			}
		})
	}
}

// TestWatchIsInPlaceWhenTheSandboxIs: the watches are set while the shell
// starts, but the sandbox is handed out only once they are: a repository
// planted right after GetSandbox returns (as a first command, or an
// extension process, could) is seen by inotify and disabled by the next
// check, before anything else runs.
func TestWatchIsInPlaceWhenTheSandboxIs(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.MkdirAll(filepath.Join(f.ws, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := f.m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lb, ok := b.(*LocalBackend)
	if !ok || lb.plat == nil {
		t.Fatalf("not a sandboxed local backend: %T", b)
	}
	w := lb.plat.lastPlan.watch
	if w.WaitFD() < 0 {
		t.Skip("no inotify here")
	}
	if w.NeedsLook() {
		t.Fatal("a small tree is not watched whole: the check could find the plant by a look, not by the watch")
	}
	git := filepath.Join(f.ws, "a", "b", "evil", ".git")
	writeFile(t, filepath.Join(git, "config"), "[core]\n\tfsmonitor = touch /tmp/pwned\n")
	if got := strings.Join(f.m.Settle(), "\n"); !strings.Contains(got, git) {
		t.Fatalf("the repository planted right after the sandbox started was not disabled: %q", got)
	}
}
