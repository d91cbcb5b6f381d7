package evolve

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/skills"
)

func TestRemoveStaleStages(t *testing.T) {
	now := time.Now()
	st := &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}
	outside := t.TempDir()
	precious := filepath.Join(outside, "precious.txt")
	if err := os.WriteFile(precious, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(st.Dir, name)
		if err := os.MkdirAll(filepath.Join(p, "skill"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "skill", "SKILL.md"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crashed := mk(".enhance-111", 7*time.Hour)
	// A crashed stage holding a link out of the store: the link goes, not its target.
	if err := os.Symlink(outside, filepath.Join(crashed, "skill", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(crashed, now.Add(-7*time.Hour), now.Add(-7*time.Hour)); err != nil {
		t.Fatal(err)
	}
	running := mk(".enhance-222", time.Hour) // another session's run, still working
	skill := mk("enhance-notes", 30*24*time.Hour)
	link := filepath.Join(st.Dir, ".enhance-333")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}

	removed, err := RemoveStaleStages(st, 10*time.Minute, now)
	if err != nil || !slices.Equal(removed, []string{".enhance-111"}) {
		t.Fatalf("removed %v, %v", removed, err)
	}
	if _, err := os.Lstat(crashed); !os.IsNotExist(err) {
		t.Error("the crashed run's stage is still there")
	}
	for _, p := range []string{running, skill, link, precious} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	// A long enhance timeout keeps stages that long.
	old := mk(".enhance-444", 7*time.Hour)
	if removed, _ := RemoveStaleStages(st, 5*time.Hour, now); len(removed) != 0 {
		t.Errorf("removed %v within twice the timeout", removed)
	}
	if _, err := os.Stat(old); err != nil {
		t.Error(err)
	}
	if removed, err := RemoveStaleStages(&skills.Store{Dir: filepath.Join(outside, "none")}, 0, now); err != nil || removed != nil {
		t.Errorf("no store: %v %v", removed, err)
	}
}
