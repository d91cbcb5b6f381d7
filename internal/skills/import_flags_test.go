package skills

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// storeNames lists the skill folders in the store (dot folders left out).
func storeNames(t *testing.T, h *Handler) []string {
	t.Helper()
	ents, err := os.ReadDir(h.Store.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestImportNothingToImport: a source without any SKILL.md is not an
// error: the import says there is nothing to import and exits 0.
func TestImportNothingToImport(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, cwd string) // makes cwd/src
		args  string
		want  string
	}{
		{"empty folder", func(t *testing.T, cwd string) { os.MkdirAll(filepath.Join(cwd, "src"), 0o755) }, "src", "/src has no SKILL.md"},
		{"folders and files but no skill", func(t *testing.T, cwd string) {
			testutil.WriteFile(t, filepath.Join(cwd, "src", "README.md"), "# not a skill\n")
			testutil.WriteFile(t, filepath.Join(cwd, "src", "docs", "a", "b.md"), "deep\n")
		}, "src", "/src has no SKILL.md"},
		{"a skill deeper than three levels", func(t *testing.T, cwd string) {
			writeSkill(t, filepath.Join(cwd, "src", "a", "b", "c", "d"), "deep", "too deep", "")
		}, "src", "searched three levels down"},
		{"--path to an empty sub-folder", func(t *testing.T, cwd string) {
			writeSkill(t, filepath.Join(cwd, "src", "other"), "other", "not under --path", "")
			os.MkdirAll(filepath.Join(cwd, "src", "empty"), 0o755)
		}, "src --path empty", "/src (--path empty) has no SKILL.md"},
		{"an empty repository", func(t *testing.T, cwd string) {}, "https://example.com/empty.git", "nothing to import: https://example.com/empty.git has no SKILL.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cwd := newTestHandler(t)
			h.Store.Git = func(_ context.Context, args ...string) error { return os.MkdirAll(args[len(args)-1], 0o755) }
			h.Import.ApproveClone = func(context.Context, string) bool { return true }
			tt.setup(t, cwd)
			before := storeNames(t, h)
			out := run(t, h, "skill:import "+tt.args, 0)
			if !strings.Contains(out, "nothing to import: ") || !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if after := storeNames(t, h); !slices.Equal(before, after) {
				t.Errorf("store changed: %v -> %v", before, after)
			}
		})
	}
}

// TestImportConflictSuggestsRename: a name conflict offers renaming the
// source skill (to keep both) as well as --force (to replace).
func TestImportConflictSuggestsRename(t *testing.T) {
	tests := []struct {
		name   string
		folder string // the source skill's folder under cwd/src
	}{
		{"folder named like the skill", "notes"},
		{"folder named otherwise", "my-notes-v2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, cwd := newTestHandler(t)
			writeSkill(t, filepath.Join(cwd, "first", "notes"), "notes", "first notes", "1.0")
			run(t, h, "skill:import first", 0)
			dir := filepath.Join(cwd, "src", tt.folder)
			writeSkill(t, dir, "notes", "second notes", "2.0")
			out := run(t, h, "skill:import src", 1)
			for _, want := range []string{`skill "notes" already exists`, "--force", "rename the skill you are importing", "the name: in " + filepath.Join(dir, SkillFile), "its folder"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if descOf(t, h, "notes") != "first notes" {
				t.Error("the installed skill changed")
			}
		})
	}
}
