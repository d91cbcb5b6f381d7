package skills

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func descOf(t *testing.T, h *Handler, name string) string {
	t.Helper()
	s, ok := h.Index.Get(name)
	if !ok {
		return ""
	}
	return s.Description
}

func run(t *testing.T, h *Handler, line string, wantExit int) string {
	t.Helper()
	r := h.Run(context.Background(), line)
	if r.ExitCode != wantExit {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", line, r.ExitCode, wantExit, r.Stdout, r.Stderr)
	}
	return r.Stdout + r.Stderr
}

func TestImportConflictForceRollbackDelete(t *testing.T) {
	h, cwd := newTestHandler(t)
	src := filepath.Join(cwd, "incoming")
	writeSkill(t, filepath.Join(src, "notes"), "notes", "first notes", "1.0")

	out := run(t, h, "skill:import incoming", 0) // relative to the session cwd
	if !strings.Contains(out, `Imported skill "notes" (version 1.0)`) {
		t.Errorf("import output: %s", out)
	}
	if descOf(t, h, "notes") != "first notes" {
		t.Fatal("imported skill not in the index")
	}

	writeSkill(t, filepath.Join(src, "notes"), "notes", "second notes", "2.0")
	out = run(t, h, "skill:import "+src, 1)
	for _, want := range []string{`skill "notes" already exists`, "installed version 1.0, importing 2.0", "nothing was changed", "--force"} {
		if !strings.Contains(out, want) {
			t.Errorf("conflict output lacks %q: %s", want, out)
		}
	}
	if descOf(t, h, "notes") != "first notes" {
		t.Fatal("conflicting import overwrote the skill")
	}

	out = run(t, h, "skill:import --force "+src, 0)
	if !strings.Contains(out, "kept as snapshot 1") || descOf(t, h, "notes") != "second notes" {
		t.Fatalf("force import: %s / %q", out, descOf(t, h, "notes"))
	}
	out = run(t, h, "skill:info notes", 0)
	for _, want := range []string{"  1  version 1.0  ", "skill:import\n", "  2  version 2.0  ", "skill:import --force  (installed)", "Created: ", "Updated: "} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q: %s", want, out)
		}
	}

	// Without a number, rollback lists and changes nothing.
	out = run(t, h, "skill:rollback notes", 0)
	if !strings.Contains(out, "Snapshots (2,") || descOf(t, h, "notes") != "second notes" {
		t.Fatalf("rollback without a number: %s / %q", out, descOf(t, h, "notes"))
	}
	out = run(t, h, "skill:rollback notes 1", 0)
	if !strings.Contains(out, "snapshot 1 (version 1.0)") || !strings.Contains(out, "kept as snapshot 2") || descOf(t, h, "notes") != "first notes" {
		t.Fatalf("rollback: %s / %q", out, descOf(t, h, "notes"))
	}
	run(t, h, "skill:rollback notes 2.0", 0) // by frontmatter version
	if descOf(t, h, "notes") != "second notes" {
		t.Fatalf("rollback by version: %q", descOf(t, h, "notes"))
	}
	run(t, h, "skill:rollback notes 99", 1)
	if vs, _ := h.Store.Versions("notes"); len(vs) != 2 {
		t.Errorf("rollbacks between saved versions made new snapshots: %+v", vs)
	}

	out = run(t, h, "skill:delete notes", 0)
	if !strings.Contains(out, "kept as snapshot 2") || descOf(t, h, "notes") != "" {
		t.Fatalf("delete: %s", out)
	}
	run(t, h, "skill:delete notes", 1)
	out = run(t, h, "skill:rollback notes", 0)
	if !strings.Contains(out, `Skill "notes" is not installed.`) || descOf(t, h, "notes") != "" {
		t.Fatalf("listing a deleted skill's versions: %s", out)
	}
	run(t, h, "skill:rollback notes 2", 0)
	if descOf(t, h, "notes") != "second notes" {
		t.Fatalf("restore after delete: %q", descOf(t, h, "notes"))
	}
}

func TestSnapshotsAreBounded(t *testing.T) {
	h, cwd := newTestHandler(t) // MaxVersions 3
	src := filepath.Join(cwd, "s")
	for i := 0; i < 6; i++ {
		writeSkill(t, src, "counter", "v"+string(rune('0'+i)), string(rune('0'+i)))
		args := "skill:import " + src
		if i > 0 {
			args += " --force"
		}
		run(t, h, args, 0)
	}
	vs, err := h.Store.Versions("counter")
	if err != nil {
		t.Fatal(err)
	}
	// Every installed content is saved; the oldest go first.
	if len(vs) != 3 || vs[0].Number != 4 || vs[2].Number != 6 || vs[2].Version != "5" {
		t.Errorf("versions = %+v, want numbers 4..6", vs)
	}
	out := run(t, h, "skill:list", 0)
	if !strings.Contains(out, "counter (5) [3 saved versions]") {
		t.Errorf("skill:list lacks the version count: %s", out)
	}
}

func TestImportRejectsBadSources(t *testing.T) {
	h, cwd := newTestHandler(t)
	noDesc := filepath.Join(cwd, "nodesc")
	if err := os.MkdirAll(noDesc, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(noDesc, SkillFile), []byte("---\nname: nodesc\n---\n"), 0o644)
	tests := []struct{ line, want string }{
		{"skill:import", "Usage: skill:import"},
		{"skill:import /does/not/exist", "is not a folder or a git URL"},
		{"skill:import nodesc", "has no description"},
		{"skill:import a b", "only one source"},
		{"skill:import x --bogus", "unknown option --bogus"},
	}
	for _, tt := range tests {
		out := run(t, h, tt.line, 1)
		if !strings.Contains(out, tt.want) {
			t.Errorf("%s: %s", tt.line, out)
		}
	}
}

func TestImportMultipleAndSymlinks(t *testing.T) {
	h, cwd := newTestHandler(t)
	repo := filepath.Join(cwd, "bundle")
	writeSkill(t, filepath.Join(repo, "skills", "one"), "one", "skill one", "")
	writeSkill(t, filepath.Join(repo, "skills", "two"), "two", "skill two", "")
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "skills", "one", "passwd")); err != nil {
		t.Fatal(err)
	}
	out := run(t, h, "skill:import bundle", 0)
	if !strings.Contains(out, `"one"`) || !strings.Contains(out, `"two"`) || !strings.Contains(out, "Skipped (symlinks or special files): passwd") {
		t.Errorf("output: %s", out)
	}
	if _, err := os.Lstat(filepath.Join(h.Store.Dir, "one", "passwd")); err == nil {
		t.Error("symlink was copied into the store")
	}
	run(t, h, "skill:import bundle --path skills/two --force", 0)
}

func TestImportFromGitURL(t *testing.T) {
	testutil.RequireTool(t, "git")
	h, cwd := newTestHandler(t)
	repo := filepath.Join(t.TempDir(), "repo")
	writeSkill(t, filepath.Join(repo, "gitskill"), "gitskill", "from git", "3")
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "x"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	// Nobody to ask, or the user says no: nothing is cloned.
	out := run(t, h, "skill:import file://"+repo, 1)
	if !strings.Contains(out, "--allow-clone") {
		t.Errorf("refusal does not say how to allow it: %s", out)
	}
	var asked []string
	answer := false
	h.Import.ApproveClone = func(_ context.Context, url string) bool { asked = append(asked, url); return answer }
	if out := run(t, h, "skill:import file://"+repo, 1); !strings.Contains(out, "did not allow") {
		t.Errorf("denied clone: %s", out)
	}
	if _, err := os.Stat(filepath.Join(h.Store.Dir, "gitskill")); err == nil {
		t.Fatal("a clone the user refused was imported")
	}
	answer = true
	out = run(t, h, "skill:import file://"+repo, 0)
	if len(asked) != 2 || asked[1] != "file://"+repo {
		t.Errorf("asked about %q", asked)
	}
	if !strings.Contains(out, `Imported skill "gitskill" (version 3)`) || descOf(t, h, "gitskill") != "from git" {
		t.Fatalf("git import: %s", out)
	}
	if _, err := os.Stat(filepath.Join(h.Store.Dir, "gitskill", ".git")); err == nil {
		t.Error(".git was copied")
	}
	out = run(t, h, "skill:import file://"+filepath.Join(cwd, "missing-repo"), 1)
	if !strings.Contains(out, "git clone") {
		t.Errorf("bad URL: %s", out)
	}
}

func TestProjectSkillsAreReadOnly(t *testing.T) {
	h, cwd := newTestHandler(t)
	writeSkill(t, filepath.Join(cwd, ".synapse", "skills", "proj"), "proj", "project skill", "")
	writeSkill(t, filepath.Join(cwd, ".synapse", "skills", "hello"), "hello", "project hello", "")
	h.Index = NewIndex(DefaultRoots(h.Store.Dir, cwd)...)
	out := run(t, h, "skill:delete proj", 1)
	if !strings.Contains(out, "is a project skill") {
		t.Errorf("output: %s", out)
	}
	run(t, h, "skill:load proj", 0)
	if descOf(t, h, "hello") != "project hello" {
		t.Errorf("project skill should replace the user skill of the same name")
	}
	// The shadowed user skill can still be managed.
	run(t, h, "skill:delete hello", 0)
	if _, err := os.Stat(filepath.Join(h.Store.Dir, "hello")); err == nil {
		t.Error("user hello not deleted")
	}
}
