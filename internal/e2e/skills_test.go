package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/skills"
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

// task:skill:enhance writes skills in its own writable copy of the store,
// and what it wrote is installed through the store, with a snapshot.
func TestSkillEnhanceWritesSkills(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	dirRe := regexp.MustCompile(`Skills directory \(writable\): (\S+)`)
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if !isSubagent(req) {
			if req.Turns() == 0 {
				return llmtest.BashTurn("p", `task:skill:enhance -p "make a demo skill" -d "demo"`)
			}
			return llmtest.TextTurn("parent done")
		}
		if req.Turns() == 0 {
			m := dirRe.FindStringSubmatch(req.System)
			if m == nil {
				return llmtest.TextTurn("no skills directory in the prompt")
			}
			return llmtest.BashTurn("a", "write "+filepath.Join(m[1], "demo", "SKILL.md")+" '---\nname: demo\ndescription: A demo skill\n---\n# Demo\n'")
		}
		return llmtest.TextTurn("wrote demo")
	})
	p := w.newParent(t, false)
	if _, err := p.runner.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	last, _ := w.srv.LastRequest()
	if tr, ok := last.ToolResult("p-1"); !ok || tr.IsError || !strings.Contains(tr.Content, "wrote demo\n\n[Skill] Created: demo (snapshot 1)") {
		t.Errorf("task result: %+v", tr)
	}
	store := &skills.Store{Dir: filepath.Join(w.env["SYNAPSE_HOME"], "skills")}
	data, err := os.ReadFile(filepath.Join(store.Dir, "demo", "SKILL.md"))
	if err != nil || !strings.Contains(string(data), "name: demo") {
		t.Fatalf("skill not installed: %q, %v", data, err)
	}
	if vs, _ := store.Versions("demo"); len(vs) != 1 || vs[0].Reason != "task:skill:enhance" {
		t.Errorf("snapshots: %+v", vs)
	}
}

// A skill:enhance sub-agent cannot start sub-agents either.
func TestSkillEnhanceCannotNest(t *testing.T) {
	testutil.RequireBwrap(t)
	runSubagentAttempts(t, newWorld(t, nil), "skill:enhance", nestingAttempts)
}
