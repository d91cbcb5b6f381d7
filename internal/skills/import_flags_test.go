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

type skillDef struct{ folder, name, desc string }

var (
	csvReport  = skillDef{"csv-report", "csv-report", "Summarise a CSV file into a short report"}
	csvSummary = skillDef{"csv-summary", "csv-summary", "Make a report from CSV data files"}
	pdfExtract = skillDef{"pdf-extract", "pdf-extract", "Extract text and page counts from PDF files"} // like the installed pdf-tools
	notesSkill = skillDef{"notes", "notes", "Keep meeting notes in markdown"}
)

// importSetup installs installed (one import each, --continue: they may be
// alike) and writes source under cwd/src; merges records each merge as
// "source->installed".
func importSetup(t *testing.T, installed, source []skillDef) (h *Handler, merges *[]string) {
	t.Helper()
	h, cwd := newTestHandler(t)
	for i, s := range installed {
		dir := filepath.Join(cwd, "installed", strings.Repeat("x", i+1), s.folder)
		writeSkill(t, dir, s.name, s.desc, "1")
		run(t, h, "skill:import "+filepath.Dir(dir)+" --continue", 0)
	}
	for _, s := range source {
		writeSkill(t, filepath.Join(cwd, "src", s.folder), s.name, s.desc, "2")
	}
	merges = new([]string)
	h.Merge = func(_ context.Context, dir, target string) (string, error) {
		in, err := Load(dir, SourceUser)
		if err != nil {
			return "", err
		}
		*merges = append(*merges, in.Name+"->"+target)
		return "[Skill] Enhanced: " + target, nil
	}
	return h, merges
}

// TestImportForceNotHeldUpBySimilarSkill: the similarity check is for new
// names. --force on an installed skill X replaces X even when another
// installed skill Y is like it; without --force the conflict is reported,
// not the likeness; and a refusal for likeness names the skill it is about.
func TestImportForceNotHeldUpBySimilarSkill(t *testing.T) {
	digest := skillDef{"csv-digest", "csv-digest", "Turn CSV data files into a report"}
	tests := []struct {
		name       string
		installed  []skillDef
		source     []skillDef
		args       string
		exit       int
		want       []string
		notWant    []string
		newVersion []string // skills that must now be at version 2
	}{
		{"--force replaces X though Y is similar", []skillDef{csvReport, csvSummary}, []skillDef{csvSummary}, "--force", 0,
			[]string{`Imported skill "csv-summary" (version 2)`, "previous version is kept as snapshot"}, []string{"looks like"}, []string{"csv-summary"}},
		{"without --force the conflict is what is reported", []skillDef{csvReport, csvSummary}, []skillDef{csvSummary}, "", 1,
			[]string{`skill "csv-summary" already exists`, "--force", "rename"}, []string{"looks like"}, nil},
		{"a new similar name is still refused with --force, naming it", []skillDef{csvReport}, []skillDef{digest}, "--force", 1,
			[]string{`"csv-digest" looks like the installed skill "csv-report"`, "--continue=csv-digest", "--merge=csv-digest:csv-report"}, []string{"Imported"}, nil},
		{"a source of two: X replaced, the new similar one refused by its own name", []skillDef{csvReport, notesSkill}, []skillDef{notesSkill, digest}, "--force", 1,
			[]string{`Imported skill "notes" (version 2)`, `"csv-digest" looks like the installed skill "csv-report"`, "--continue=csv-digest"},
			[]string{`"notes" looks like`, "--continue=notes"}, []string{"notes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := importSetup(t, tt.installed, tt.source)
			out := run(t, h, strings.TrimSpace("skill:import src "+tt.args), tt.exit)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			for _, name := range tt.newVersion {
				if s, ok := h.Index.Get(name); !ok || s.Version != "2" {
					t.Errorf("%s not replaced: %+v", name, s)
				}
			}
		})
	}
}

// TestImportPerSkillContinueMerge: --continue=a,b and --merge=src:installed
// apply to the skills they name; bare flags still apply to all.
func TestImportPerSkillContinueMerge(t *testing.T) {
	installed := []skillDef{csvReport} // pdf-tools is installed by the test store
	source := []skillDef{csvSummary, pdfExtract, notesSkill}
	tests := []struct {
		args      string
		exit      int
		installed []string // must be in the store afterwards
		absent    []string // must not be
		merges    []string
		want      []string
	}{
		{"--continue=csv-summary", 1, []string{"csv-summary", "notes"}, []string{"pdf-extract"}, nil,
			[]string{"installed anyway", `"pdf-extract" looks like the installed skill "pdf-tools"`, "--continue=pdf-extract"}},
		{"--continue=csv-summary,pdf-extract", 0, []string{"csv-summary", "pdf-extract", "notes"}, nil, nil, nil},
		{"--continue=csv-summary --continue=pdf-extract", 0, []string{"csv-summary", "pdf-extract", "notes"}, nil, nil, nil},
		{"--continue", 0, []string{"csv-summary", "pdf-extract", "notes"}, nil, nil, nil},
		{"--merge=csv-summary:csv-report", 1, []string{"notes"}, []string{"csv-summary", "pdf-extract"}, []string{"csv-summary->csv-report"},
			[]string{"[Skill] Enhanced: csv-report", `"pdf-extract" looks like`}},
		{"--merge=csv-summary:csv-report,pdf-extract:pdf-tools", 0, []string{"notes"}, []string{"csv-summary", "pdf-extract"},
			[]string{"csv-summary->csv-report", "pdf-extract->pdf-tools"}, nil},
		{"--merge=csv-summary:csv-report --merge=pdf-extract:pdf-tools", 0, []string{"notes"}, []string{"csv-summary", "pdf-extract"},
			[]string{"csv-summary->csv-report", "pdf-extract->pdf-tools"}, nil},
		{"--merge=csv-summary:csv-report --continue=pdf-extract", 0, []string{"notes", "pdf-extract"}, []string{"csv-summary"},
			[]string{"csv-summary->csv-report"}, nil},
		{"--merge --continue=pdf-extract", 0, []string{"notes", "pdf-extract"}, []string{"csv-summary"}, []string{"csv-summary->csv-report"}, nil},
		{"--merge", 0, []string{"notes"}, []string{"csv-summary", "pdf-extract"}, []string{"csv-summary->csv-report", "pdf-extract->pdf-tools"}, nil},
		// An explicit merge needs no likeness.
		{"--continue --merge=notes:csv-report", 0, []string{"csv-summary", "pdf-extract"}, []string{"notes"}, []string{"notes->csv-report"}, nil},
		// Mistakes say what is wrong and change nothing they name.
		{"--merge=csv-summary", 1, nil, []string{"csv-summary", "notes"}, nil, []string{`"csv-summary" is not source:installed`, "--merge=csv-summary:csv-report"}},
		{"--continue=csv-summary --merge=csv-summary:csv-report", 1, nil, []string{"csv-summary", "notes"}, nil, []string{`"csv-summary" is both in --continue and in --merge`}},
		{"--merge --continue", 1, nil, []string{"notes"}, nil, []string{"exclude each other"}},
		{"--continue=csv-sumary,pdf-extract", 1, []string{"pdf-extract", "notes"}, []string{"csv-summary"}, nil,
			[]string{"--continue=csv-sumary: ", "has no such skill (its skills: csv-summary, notes, pdf-extract)"}},
		{"--merge=csv-summary:nope --continue=pdf-extract", 1, []string{"pdf-extract"}, []string{"csv-summary"}, nil, []string{`no skill "nope" is installed`}},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			h, merges := importSetup(t, installed, source)
			out := run(t, h, "skill:import src "+tt.args, tt.exit)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, name := range tt.installed {
				if _, ok := h.Index.Get(name); !ok {
					t.Errorf("%s not installed:\n%s", name, out)
				}
			}
			for _, name := range tt.absent {
				if _, ok := h.Index.Get(name); ok {
					t.Errorf("%s installed:\n%s", name, out)
				}
			}
			slices.Sort(*merges)
			if !slices.Equal(*merges, tt.merges) {
				t.Errorf("merges %v, want %v\n%s", *merges, tt.merges, out)
			}
		})
	}
}
