package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
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

// Issue 27: a corrupt or lost index must not orphan sessions. Each history
// records its origin on its first line, kept when the history is rewritten
// (compaction), so the entries rebuilt from the history files are in their
// project again: `synapse sessions`, -c and /resume still find them.
func TestCorruptIndexKeepsSessionsInTheirProject(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	sub := filepath.Join(repo, "src")
	for _, d := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := newStore(t)
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	plain := s.Create(sub)
	if err := plain.Append(user("appended"), assistant("ok")); err != nil {
		t.Fatal(err)
	}
	if err := plain.Close(); err != nil {
		t.Fatal(err)
	}
	created := now
	now = now.Add(time.Hour)
	compacted := s.Create(repo)
	if err := compacted.Append(user("to be compacted"), assistant("long answer")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, err := compacted.Rewrite([]llm.Message{user("summary")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := compacted.Close(); err != nil {
		t.Fatal(err)
	}

	for name, damage := range map[string][]byte{
		"corrupt": []byte("\x00\x01{{{ not an index\n"),
		"emptied": nil,
	} {
		if err := os.WriteFile(filepath.Join(s.Dir, IndexFile), damage, 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := s.ListProject(sub)
		if err != nil || len(list) != 2 {
			t.Fatalf("%s index: the project lists %+v, %v; want both sessions", name, list, err)
		}
		byID := map[string]Entry{}
		for _, e := range list {
			byID[e.ID] = e
		}
		if e := byID[plain.ID()]; e.Cwd != sub || e.Project != repo || !e.CreatedAt.Equal(created) || e.Title != "appended" {
			t.Errorf("%s index: rebuilt %+v", name, e)
		}
		if e := byID[compacted.ID()]; e.Cwd != repo || e.Project != repo || e.MessageCount != 1 {
			t.Errorf("%s index: rebuilt compacted %+v", name, e)
		}
		// -c (latest of the project) and an explicit id still open it.
		ss, msgs, err := s.Open(list[0].ID)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("%s index: open %s: %v", name, list[0].ID, err)
		}
		if err := ss.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// The origin is one field on the first line, read as a message too.
	data, err := os.ReadFile(s.HistoryFile(plain.ID()))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"session":{`) || strings.Contains(lines[1], `"session"`) {
		t.Errorf("history lines:\n%s", data)
	}
}
