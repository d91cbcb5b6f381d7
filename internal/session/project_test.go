package session

import (
	"os"
	"path/filepath"
	"testing"
)

// A project is the repository, not the exact directory: a session started
// at the top of a repository (a .git directory, or a worktree's .git file)
// is the project's from any of its subdirectories, and the other way round;
// another repository, or a plain directory beside it, is another project.
// Entries saved before projects were recorded are placed by their directory.
func TestSessionsBelongToTheRepository(t *testing.T) {
	root := t.TempDir()
	repo, worktree, plain := filepath.Join(root, "repo"), filepath.Join(root, "wt"), filepath.Join(root, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, "src", "pkg"), filepath.Join(worktree, "cmd"), plain} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: "+repo+"/.git/worktrees/wt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := newStore(t)
	save := func(cwd, text string) string {
		ss := s.Create(cwd)
		if err := ss.Append(user(text)); err != nil {
			t.Fatal(err)
		}
		if err := ss.Close(); err != nil {
			t.Fatal(err)
		}
		return ss.ID()
	}
	atTop := save(repo, "at the top")
	inSub := save(filepath.Join(repo, "src", "pkg"), "in a subdirectory")
	inWorktree := save(filepath.Join(worktree, "cmd"), "in a worktree")
	inPlain := save(plain, "in a plain directory")
	// An entry from before projects were recorded: a directory only.
	old := s.Create(filepath.Join(repo, "src"))
	old.entry.Project = ""
	if err := old.Append(user("old")); err != nil {
		t.Fatal(err)
	}
	_ = old.Close()

	ids := func(dir string) map[string]bool {
		list, err := s.ListProject(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, e := range list {
			out[e.ID] = true
		}
		return out
	}
	for _, dir := range []string{repo, filepath.Join(repo, "src"), filepath.Join(repo, "src", "pkg")} {
		got := ids(dir)
		if len(got) != 3 || !got[atTop] || !got[inSub] || !got[old.ID()] {
			t.Errorf("from %s: %v, want the repository's three sessions", dir, got)
		}
	}
	if got := ids(worktree); len(got) != 1 || !got[inWorktree] {
		t.Errorf("from the worktree: %v", got)
	}
	if got := ids(plain); len(got) != 1 || !got[inPlain] {
		t.Errorf("from a plain directory: %v", got)
	}
	if got := ids(root); len(got) != 0 {
		t.Errorf("from the parent of the repositories: %v", got)
	}
}
