package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestSkillLoopEndToEnd runs the agent loop against the scripted model: a
// request that matches an installed skill makes the model search
// (task:skill:search), load (skill:load) and follow it (run its script), with
// the skill-search instruction on, built as synapse run builds its agent.
func TestSkillLoopEndToEnd(t *testing.T) {
	requireTool(t, "python3")
	base := t.TempDir()
	home, proj := filepath.Join(base, "home"), filepath.Join(base, "proj")
	writeTestFile(t, filepath.Join(home, ".synapse", "sandbox.json"), `{"enabled": false}`)
	copyDir(t, filepath.Join("..", "skills", "testdata", "skills"), filepath.Join(home, ".synapse", "skills"))
	writeTestFile(t, filepath.Join(proj, "report.pdf"), "%PDF-1.4")

	srv := llmtest.New(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	mark := func(k string, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		seen[k] = seen[k] || ok
	}
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if strings.Contains(req.System, "sub-agent of Synapse") { // task:skill:search
			mark("index given to the search", strings.Contains(req.FirstUserText(), "pdf-tools") && strings.Contains(req.FirstUserText(), "skill:pdf-tools:extract"))
			return llmtest.TextTurn(`{"matched_skills":[{"name":"pdf-tools","description":"Extract text from PDF documents"}]}`)
		}
		last := func() string {
			r := req.LastToolResults()
			if len(r) == 0 {
				return ""
			}
			return r[0].Content
		}
		switch req.Turns() {
		case 0:
			first := req.FirstUserText()
			mark("instruction", strings.Contains(first, "Skill Search Priority") && strings.HasSuffix(first, "Extract the text of report.pdf"))
			return llmtest.BashTurn("s", `task:skill:search -p "extract text from a PDF" -d "find skills"`)
		case 1:
			mark("search found the skill", strings.Contains(last(), `"name":"pdf-tools"`))
			return llmtest.BashTurn("l", "skill:load pdf-tools")
		case 2:
			mark("skill loaded", strings.Contains(last(), "# PDF tools") && strings.Contains(last(), "skill:pdf-tools:extract"))
			return llmtest.BashTurn("r", "skill:pdf-tools:extract report.pdf --pages 1")
		default:
			var got struct {
				Args []string
				Cwd  string
			}
			out := last()
			if i := strings.IndexByte(out, '{'); i >= 0 {
				_ = json.Unmarshal([]byte(strings.TrimSpace(out[i:])), &got)
			}
			mark("script ran in the project", reflect.DeepEqual(got.Args, []string{"report.pdf", "--pages", "1"}) && got.Cwd == proj)
			return llmtest.TextTurn("Extracted.")
		}
	})

	env := map[string]string{
		"HOME": home, "SYNAPSE_HOME": filepath.Join(home, ".synapse"),
		"ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "llmtest-key", "SYNAPSE_MODEL": "test-model",
	}
	a, err := New(testutil.MapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := a.NewAgent(ctx, AgentSetup{Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	res, err := g.Runner.Run(ctx, "Extract the text of report.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Extracted." {
		t.Errorf("final text %q", res.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, step := range []string{"instruction", "index given to the search", "search found the skill", "skill loaded", "script ran in the project"} {
		if !seen[step] {
			t.Errorf("step failed: %s", step)
		}
	}
}
