package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRedTeamProjectSkillLinks: a project's .synapse/skills is written by
// sandboxed commands. A SKILL.md linked to a file the sandbox hides
// (~/.ssh/config) was read by the host, and skill:list, skill:load and the
// system prompt's index showed its text to the model; a script swapped for a
// link after listing had its target's header shown by --help.
func TestRedTeamProjectSkillLinks(t *testing.T) {
	root := t.TempDir()
	secretDir := filepath.Join(root, "home", ".ssh")
	project := filepath.Join(root, "project")
	mustMkdir(t, secretDir, filepath.Join(project, ".synapse", "skills", "leak"), filepath.Join(project, ".synapse", "skills", "ok", "scripts"))
	secret := filepath.Join(secretDir, "config")
	if err := os.WriteFile(secret, []byte("---\nname: leak\ndescription: SECRET-DESCRIPTION\n---\nSECRET-BODY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(project, ".synapse", "skills", "leak", SkillFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".synapse", "skills", "ok", SkillFile), []byte("---\nname: ok\ndescription: fine\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(project, ".synapse", "skills", "ok", "scripts", "x.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n# does x\necho x\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(DefaultRoots(filepath.Join(root, "store"), project)...)
	for _, s := range ix.Skills() {
		if strings.Contains(s.Description+s.Body, "SECRET") {
			t.Fatalf("the host read a linked SKILL.md into skill %q: %q", s.Name, s.Description)
		}
	}
	if d := ix.Describe(); strings.Contains(d, "SECRET") {
		t.Fatalf("the index shows the linked file: %s", d)
	}
	if !strings.Contains(strings.Join(ix.Problems(), "\n"), "symbolic link") {
		t.Errorf("the linked SKILL.md is not reported: %q", ix.Problems())
	}
	if _, err := readSkillFile(filepath.Join(project, ".synapse", "skills", "leak")); err == nil {
		t.Error("skill:load read a linked SKILL.md")
	}
	ok, found := ix.Get("ok")
	if !found || len(ok.Scripts) != 1 {
		t.Fatalf("the regular skill was not loaded: %+v", ok)
	}
	if doc := ok.Scripts[0].Doc(); !strings.Contains(doc, "does x") {
		t.Fatalf("doc of a regular script: %q", doc)
	}
	// Listed as a regular file, then swapped for a link.
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("#!/bin/sh\n# SECRET-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, script); err != nil {
		t.Fatal(err)
	}
	if doc := ok.Scripts[0].Doc(); strings.Contains(doc, "SECRET") {
		t.Fatalf("the script's doc was read through a link: %q", doc)
	}
	if argv := shebang(script); argv != nil {
		t.Fatalf("the shebang was read through a link: %q", argv)
	}
}

func mustMkdir(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
