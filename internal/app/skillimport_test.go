package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/router"
)

// TestSkillImportHonoursTheSandboxBlacklist: skill:import copies in the
// agent's process into $SYNAPSE_HOME/skills, which commands may read; the
// extensions give it the sandbox's read policy, so a project's .env does not
// end up readable there.
func TestSkillImportHonoursTheSandboxBlacklist(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": true}`)
	writeTestFile(t, filepath.Join(cwd, "proj", "SKILL.md"), "---\nname: laundry\ndescription: d\n---\n")
	writeTestFile(t, filepath.Join(cwd, "proj", ".env"), "TOKEN=SECRET\n")
	a := testApp(t, home)
	ext, err := a.Extensions(context.Background(), cwd, ExtensionOptions{DeferMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	r := ext.Handlers()[router.FamilySkill].Run(context.Background(), "skill:import proj")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, ".env") {
		t.Fatalf("import: %+v, want success naming the .env it left out", r)
	}
	if _, err := os.Stat(filepath.Join(a.Config.SkillsDir, "laundry", ".env")); err == nil {
		t.Error("the project's .env was copied into the skill store")
	}
}
