package skills

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestStoreRefusesNamesThatLeaveTheStore: skill:delete and skill:rollback
// rename folders in the agent's process; a name with a separator or `..`
// must not reach a folder outside the store (skill:delete ../../project
// moved the project into the snapshots).
func TestStoreRefusesNamesThatLeaveTheStore(t *testing.T) {
	h, cwd := newTestHandler(t)
	victim := filepath.Join(cwd, "victim")
	testutil.WriteFile(t, filepath.Join(victim, "SKILL.md"), "---\nname: victim\ndescription: d\n---\n")
	rel, err := filepath.Rel(h.Store.Dir, victim)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"skill:delete " + rel,
		"skill:delete " + victim,
		"skill:delete ../" + filepath.Base(h.Store.Dir) + "/hello",
		"skill:rollback " + rel,
		"skill:rollback ../x",
	} {
		r := h.Run(context.Background(), line)
		if r.ExitCode == 0 || !strings.Contains(r.Stdout+r.Stderr, "skill name") {
			t.Errorf("%s = %+v, want a refusal naming the invalid skill name", line, r)
		}
	}
	if _, err := os.Stat(filepath.Join(victim, "SKILL.md")); err != nil {
		t.Errorf("the folder outside the store was moved: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Store.Dir, "hello", "SKILL.md")); err != nil {
		t.Errorf("an installed skill was moved through a ../ name: %v", err)
	}
	for _, name := range []string{"../x", "a/b", "..", ""} {
		if _, err := h.Store.Delete(name); err == nil {
			t.Errorf("Store.Delete(%q) succeeded", name)
		}
		if _, _, err := h.Store.Rollback(name, 0); err == nil {
			t.Errorf("Store.Rollback(%q) succeeded", name)
		}
	}
}

// TestValidNameMatchesPattern: ValidName is hand-written code for the
// pattern below and must accept exactly what it accepts.
func TestValidNameMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	for _, name := range []string{
		"", "a", "Z9", "my-skill", "my_skill.v2", ".", "..", ".hidden", "-x", "_x",
		"a b", "a/b", "a:b", "a\n", "\na", "é", "aé", "a\xff", strings.Repeat("a", 64), strings.Repeat("a", 65),
		"a" + strings.Repeat(".", 63), "a" + strings.Repeat(".", 64),
	} {
		want := re.MatchString(name) && name != "." && name != ".."
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
