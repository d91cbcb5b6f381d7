package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func newStore(t *testing.T, max int) *Store {
	t.Helper()
	return &Store{Dir: filepath.Join(t.TempDir(), "skills"), MaxVersions: max}
}

// commitDesc installs a skill "s" whose description is desc.
func commitDesc(t *testing.T, st *Store, desc string) (Snapshot, bool) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "s")
	writeSkill(t, src, "s", desc, "")
	snap, created, err := st.Commit("s", src, "test")
	if err != nil {
		t.Fatal(err)
	}
	return snap, created
}

func installedDesc(t *testing.T, st *Store) string {
	t.Helper()
	s, err := Load(st.skillDir("s"), SourceUser)
	if err != nil {
		return ""
	}
	return s.Description
}

func TestIdenticalContentIsSnapshottedOnce(t *testing.T) {
	st := newStore(t, 0)
	first, created := commitDesc(t, st, "one")
	if !created || first.Number != 1 {
		t.Fatalf("first commit: %+v created=%v", first, created)
	}
	again, created := commitDesc(t, st, "one")
	if created || again.Number != 1 {
		t.Errorf("identical content: got snapshot %d created=%v, want snapshot 1 reused", again.Number, created)
	}
	commitDesc(t, st, "two")
	commitDesc(t, st, "one") // back to content already saved
	vs, _ := st.Versions("s")
	if len(vs) != 2 {
		t.Errorf("want 2 snapshots (one per distinct content), got %+v", vs)
	}
}

func TestDefaultLimitIsTwenty(t *testing.T) {
	st := newStore(t, 0)
	for i := range 23 {
		commitDesc(t, st, "v"+strings.Repeat("x", i))
	}
	vs, _ := st.Versions("s")
	if len(vs) != DefaultMaxVersions || DefaultMaxVersions != 20 || vs[0].Number != 4 {
		t.Errorf("kept %d snapshots starting at %d, want 20 starting at 4", len(vs), vs[0].Number)
	}
}

func TestRollbackToTheOldestAtTheLimitLosesNothing(t *testing.T) {
	st := newStore(t, 3)
	for _, d := range []string{"a", "b", "c"} {
		commitDesc(t, st, d)
	}
	// A hand edit: content no snapshot holds yet.
	writeSkill(t, st.skillDir("s"), "s", "edited", "")
	vs, _ := st.Versions("s")
	if len(vs) != 3 || vs[0].Number != 1 {
		t.Fatalf("setup: %+v", vs)
	}
	restored, saved, err := st.Rollback("s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if restored.Number != 1 || installedDesc(t, st) != "a" {
		t.Fatalf("restored %d, installed %q; want snapshot 1 with \"a\"", restored.Number, installedDesc(t, st))
	}
	if saved == nil || saved.Number != 4 {
		t.Fatalf("the hand-edited version was not saved first: %+v", saved)
	}
	vs, _ = st.Versions("s")
	descs := map[string]bool{}
	for _, v := range vs {
		s, err := Load(filepath.Join(v.dir, "skill"), SourceUser)
		if err != nil {
			t.Fatal(err)
		}
		descs[s.Description] = true
	}
	// Limit 3: the restored "a" and the edited version stay; "b" (the
	// oldest not in use) made room.
	if len(vs) != 3 || !descs["a"] || !descs["edited"] || !descs["c"] {
		t.Errorf("snapshots after rollback: %+v (%v)", vs, descs)
	}
	// Switching back restores the edit.
	if _, _, err := st.Rollback("s", 4); err != nil || installedDesc(t, st) != "edited" {
		t.Errorf("switch back: %v %q", err, installedDesc(t, st))
	}
}

func TestRollbackErrorsLeaveTheSkillInstalled(t *testing.T) {
	st := newStore(t, 3)
	commitDesc(t, st, "a")
	if _, _, err := st.Rollback("s", 7); err == nil || !strings.Contains(err.Error(), "no snapshot 7; available: 1") {
		t.Errorf("missing snapshot: %v", err)
	}
	if installedDesc(t, st) != "a" {
		t.Error("a failed rollback changed the skill")
	}
}

func TestOldSnapshotsWithoutHashStillDedupe(t *testing.T) {
	st := newStore(t, 5)
	commitDesc(t, st, "a")
	// Snapshots made by an older version have no hash in meta.json.
	meta := filepath.Join(st.verDir("s"), "1", "meta.json")
	if err := os.WriteFile(meta, []byte(`{"number":1,"reason":"old"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, created := commitDesc(t, st, "a"); created {
		t.Error("content equal to a hashless snapshot was saved again")
	}
}

func TestFolderWithoutSkillFileIsReported(t *testing.T) {
	dir := copyTestSkills(t)
	if err := os.MkdirAll(filepath.Join(dir, "half-done", "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(Root{Dir: dir, Source: SourceUser})
	found := false
	for _, p := range ix.Problems() {
		if strings.Contains(p, "half-done has no SKILL.md") {
			found = true
		}
	}
	if !found {
		t.Errorf("problems = %q", ix.Problems())
	}
}
