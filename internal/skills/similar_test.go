package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimilar(t *testing.T) {
	sk := func(name, desc string) *Skill { return &Skill{Name: name, Description: desc} }
	tests := []struct {
		a, b *Skill
		want bool
	}{
		{sk("csv-report", "Summarise a CSV file into a short report"), sk("csv-summary", "Make a report from CSV data files"), true},
		{sk("pdf-tools", "Extract text and page counts from PDF documents"), sk("notes", "Take notes into text files"), false},
		{sk("git-release", "Tag and publish a release"), sk("release", "Publish a new version"), true}, // name inside name
		{sk("hello", "Say hello"), sk("deploy", "Deploy the service to production"), false},
	}
	for _, tt := range tests {
		if got := Similar(tt.a, tt.b); got != tt.want {
			t.Errorf("Similar(%s, %s) = %v", tt.a.Name, tt.b.Name, got)
		}
	}
}

func TestImportOfASimilarSkill(t *testing.T) {
	h, cwd := newTestHandler(t)
	writeSkill(t, filepath.Join(cwd, "a", "csv-report"), "csv-report", "Summarise a CSV file into a short report", "1")
	run(t, h, "skill:import a", 0)
	writeSkill(t, filepath.Join(cwd, "b", "csv-summary"), "csv-summary", "Make a report from CSV data files", "1")

	// Neither flag: a warning, nothing changes.
	out := run(t, h, "skill:import b", 1)
	if !strings.Contains(out, `"csv-summary" looks like the installed skill "csv-report"`) || !strings.Contains(out, "--merge") || !strings.Contains(out, "--continue") {
		t.Errorf("output: %s", out)
	}
	if _, ok := h.Index.Get("csv-summary"); ok {
		t.Fatal("installed without --continue")
	}

	// --merge without a merger (no model) says so and changes nothing.
	out = run(t, h, "skill:import b --merge", 1)
	if !strings.Contains(out, "merging needs the skill-enhance sub-agent") {
		t.Errorf("output: %s", out)
	}

	// --merge: the merger gets the staged copy and the installed skill's name.
	var gotDir, gotTarget string
	h.Merge = func(ctx context.Context, dir, target string) (string, error) {
		gotDir, gotTarget = dir, target
		if _, err := os.Stat(filepath.Join(dir, SkillFile)); err != nil {
			return "", errors.New("no staged copy")
		}
		return "[Skill] Enhanced: csv-report", nil
	}
	out = run(t, h, "skill:import b --merge", 0)
	if gotTarget != "csv-report" || gotDir == "" || !strings.Contains(out, "[Skill] Enhanced: csv-report") || strings.Contains(out, "Imported skill") {
		t.Errorf("merge: target %q dir %q output %s", gotTarget, gotDir, out)
	}
	if _, ok := h.Index.Get("csv-summary"); ok {
		t.Fatal("--merge installed the skill separately")
	}
	h.Merge = func(context.Context, string, string) (string, error) { return "", errors.New("sub-agent failed") }
	if out := run(t, h, "skill:import b --merge", 1); !strings.Contains(out, "merge \"csv-summary\" into \"csv-report\": sub-agent failed") {
		t.Errorf("failed merge: %s", out)
	}

	// --continue installs it anyway, and says it is similar.
	out = run(t, h, "skill:import b --continue", 0)
	if !strings.Contains(out, "similar to the installed \"csv-report\"; installed anyway") || descOf(t, h, "csv-summary") == "" {
		t.Errorf("continue: %s", out)
	}
	run(t, h, "skill:import b --merge --continue", 1)
}
