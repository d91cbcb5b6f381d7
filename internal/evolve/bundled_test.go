package evolve

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func desc(t *testing.T, dir string) string {
	t.Helper()
	s, err := skills.Load(dir, skills.SourceUser)
	if err != nil {
		return ""
	}
	return s.Description
}

func TestBundledMetaSkillsInstallAndUpgrade(t *testing.T) {
	st := &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}
	did, err := InstallBundled(st)
	if err != nil || len(did) != 2 {
		t.Fatalf("first run: %v %v", did, err)
	}
	for _, n := range BundledNames {
		if vs, _ := st.Versions(n); len(vs) != 1 || desc(t, filepath.Join(st.Dir, n)) == "" {
			t.Errorf("%s not installed through the store: %+v", n, vs)
		}
	}
	if did, err := InstallBundled(st); err != nil || len(did) != 0 {
		t.Errorf("second run changed things: %v %v", did, err)
	}

	// An unchanged older copy is upgraded: make the store hold "old" content
	// that the record says we installed.
	creator := filepath.Join(st.Dir, "synapse-skill-creator", "SKILL.md")
	old := "---\nname: synapse-skill-creator\ndescription: old bundled text\n---\nold\n"
	if err := os.WriteFile(creator, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	h, _ := skills.ContentHash(filepath.Dir(creator))
	rec := map[string]string{}
	data, _ := os.ReadFile(filepath.Join(st.Dir, bundledRecord))
	_ = json.Unmarshal(data, &rec)
	rec["synapse-skill-creator"] = h
	data, _ = json.Marshal(rec)
	os.WriteFile(filepath.Join(st.Dir, bundledRecord), data, 0o600)
	if did, err := InstallBundled(st); err != nil || len(did) != 1 || !strings.Contains(did[0], "upgraded the bundled skill synapse-skill-creator") {
		t.Fatalf("upgrade: %v %v", did, err)
	}
	if d := desc(t, filepath.Dir(creator)); d == "old bundled text" {
		t.Error("not upgraded")
	}

	// A copy the user changed is left alone.
	mine := "---\nname: synapse-skill-creator\ndescription: my own rules\n---\nmine\n"
	os.WriteFile(creator, []byte(mine), 0o644)
	if did, _ := InstallBundled(st); len(did) != 0 || desc(t, filepath.Dir(creator)) != "my own rules" {
		t.Errorf("the user's change was replaced: %v", did)
	}
	// A deleted one stays deleted.
	if _, err := st.Delete("synapse-skill-enhance"); err != nil {
		t.Fatal(err)
	}
	if did, _ := InstallBundled(st); len(did) != 0 {
		t.Errorf("a deleted meta-skill came back: %v", did)
	}
}

func TestCreatorScriptsScaffoldAndValidate(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	for _, n := range BundledNames {
		if err := extract(n, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	scripts := filepath.Join(dir, "synapse-skill-creator", "scripts")
	sh := func(args ...string) (string, int) {
		out, err := exec.Command("bash", args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return string(out), code
	}
	for _, n := range BundledNames {
		if out, code := sh(filepath.Join(scripts, "validate.sh"), filepath.Join(dir, n)); code != 0 {
			t.Errorf("bundled %s does not validate: %s", n, out)
		}
	}
	if out, code := sh(filepath.Join(scripts, "scaffold.sh"), dir, "csv-report", "Summarise CSV files"); code != 0 {
		t.Fatalf("scaffold: %s", out)
	}
	if out, code := sh(filepath.Join(scripts, "validate.sh"), filepath.Join(dir, "csv-report")); code != 0 || strings.TrimSpace(out) != "ok" {
		t.Errorf("a scaffolded skill does not validate: %s", out)
	}
	if s, err := skills.Load(filepath.Join(dir, "csv-report"), skills.SourceUser); err != nil || s.Description != "Summarise CSV files" {
		t.Errorf("scaffolded skill: %+v %v", s, err)
	}
	if out, code := sh(filepath.Join(scripts, "scaffold.sh"), dir, "csv-report", "again"); code != 1 || !strings.Contains(out, "improve it instead") {
		t.Errorf("scaffold over an existing skill: %d %s", code, out)
	}
	bad := filepath.Join(dir, "bad")
	os.MkdirAll(filepath.Join(bad, "scripts"), 0o755)
	os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: other\n---\nsee references/missing.md\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "scripts", "x.sh"), []byte("echo hi\n"), 0o755)
	out, code := sh(filepath.Join(scripts, "validate.sh"), bad)
	for _, want := range []string{"differs from the folder name", "no description", "x.sh has no #! line", "references/missing.md, which does not exist"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("validate bad skill lacks %q (exit %d): %s", want, code, out)
		}
	}
}
