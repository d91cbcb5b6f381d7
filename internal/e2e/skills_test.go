package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// task:skill:search through the production wiring sees the installed skills
// (the user's store) and returns the contract JSON to the parent.
func TestSkillSearchSeesInstalledSkills(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	dir := filepath.Join(w.env["SYNAPSE_HOME"], "skills", "pdf-tools")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: pdf-tools\ndescription: Convert PDF files to Markdown\n---\n# PDF tools\n"), 0o644))
	p := w.newParent(t, false)
	var sawIndex bool
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case !isSubagent(req) && req.Turns() == 0:
			return llmtest.BashTurn("p", `task:skill:search -p "convert a PDF" -d "find skills"`)
		case !isSubagent(req):
			r := req.LastToolResults()
			return llmtest.TextTurn("search said: " + r[0].Content)
		}
		sawIndex = strings.Contains(req.FirstUserText(), "pdf-tools") && len(req.Tools) == 0
		return llmtest.TextTurn(`{"matched_skills":[{"name":"pdf-tools","description":"Convert PDF files to Markdown"},{"name":"made-up","description":"x"}]}`)
	})
	res, err := p.runner.Run(context.Background(), "go")
	must(t, err)
	if want := `search said: {"matched_skills":[{"name":"pdf-tools","description":"Convert PDF files to Markdown"}]}`; res.Text != want {
		t.Errorf("parent saw %q, want %q", res.Text, want)
	}
	if !sawIndex {
		t.Error("the skill:search request did not carry the installed skill, or offered tools")
	}
}

// task:skill:enhance may write the skills directory (outside the project).
func TestSkillEnhanceWritesSkills(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	skill := filepath.Join(w.env["SYNAPSE_HOME"], "skills", "demo", "SKILL.md")
	runSubagentAttempts(t, w, "skill:enhance", append([]attempt{
		{cmd: "mkdir -p " + filepath.Dir(skill)},
		{cmd: "write " + skill + " '---\nname: demo\ndescription: A demo skill\n---\n# Demo\n'"},
	}, nestingAttempts...))
	data, err := os.ReadFile(skill)
	if err != nil || !strings.Contains(string(data), "name: demo") {
		t.Fatalf("skill not written: %q, %v", data, err)
	}
}
