package skills

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// denyNames refuses reads of files with the given base names, and of
// everything under the given directories, as a sandbox blacklist would.
type denyNames struct {
	names []string
	dirs  []string
}

func (d denyNames) CheckPath(p string, write bool) (bool, string, string) {
	for _, n := range d.names {
		if filepath.Base(p) == n {
			return true, "path is on the sandbox blacklist (**/" + n + ")", "**/" + n
		}
	}
	for _, dir := range d.dirs {
		if p == dir || strings.HasPrefix(p, dir+"/") {
			return true, "path is on the sandbox blacklist", dir
		}
	}
	return false, "", ""
}

// TestImportKeepsBlacklistedFilesOut: skill:import copies a folder in the
// agent's process, into the skill store, which commands read freely. A
// folder the model prepared (a SKILL.md beside the project's .env) must not
// launder files the sandbox keeps from commands: they are skipped and named,
// and a source the policy forbids reading is refused.
func TestImportKeepsBlacklistedFilesOut(t *testing.T) {
	h, cwd := newTestHandler(t)
	secretDir := filepath.Join(cwd, "secrets")
	h.Paths = denyNames{names: []string{".env"}, dirs: []string{secretDir}}
	src := filepath.Join(cwd, "proj")
	testutil.WriteFile(t, filepath.Join(src, SkillFile), "---\nname: laundry\ndescription: d\n---\nbody\n")
	testutil.WriteFile(t, filepath.Join(src, ".env"), "TOKEN=SECRET\n")
	testutil.WriteFile(t, filepath.Join(src, "sub", ".env"), "TOKEN=SECRET\n")
	testutil.WriteFile(t, filepath.Join(src, "ok.txt"), "fine\n")
	testutil.WriteFile(t, filepath.Join(secretDir, SkillFile), "---\nname: hidden\ndescription: d\n---\nbody\n")
	testutil.WriteFile(t, filepath.Join(secretDir, "key"), "SECRET\n")

	r := h.Run(context.Background(), "skill:import proj")
	if r.ExitCode != 0 {
		t.Fatalf("import: %+v", r)
	}
	dst := filepath.Join(h.Store.Dir, "laundry")
	if b, err := os.ReadFile(filepath.Join(dst, "ok.txt")); err != nil || string(b) != "fine\n" {
		t.Errorf("ordinary file not imported: %q %v", b, err)
	}
	for _, p := range []string{".env", "sub/.env"} {
		if _, err := os.Stat(filepath.Join(dst, p)); err == nil {
			t.Errorf("blacklisted %s was copied into the skill store", p)
		}
		if !strings.Contains(r.Stdout, p) {
			t.Errorf("output does not name skipped %s:\n%s", p, r.Stdout)
		}
	}
	r = h.Run(context.Background(), "skill:import secrets")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "blacklist") {
		t.Errorf("import of a blacklisted folder: %+v, want a refusal", r)
	}
	if _, err := os.Stat(filepath.Join(h.Store.Dir, "hidden")); err == nil {
		t.Error("a blacklisted folder was imported")
	}
}
