package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/skills"
)

var stageRe = regexp.MustCompile(`copied in (\S+) \(your writable skills directory\)`)

const csvSkill = "---\nname: csv-report\ndescription: Summarise a CSV file into a short report (row count, first column).\n---\n# CSV report\n\n1. `wc -l data.csv`\n2. `cut -d, -f1 data.csv`\n"

func isEnhance(req *llmtest.Request) bool {
	return strings.Contains(req.System, "**skill enhance** sub-agent")
}

func isSkillSearch(req *llmtest.Request) bool {
	return strings.Contains(req.System, "**skill search** sub-agent")
}

// The whole auto-enhance path against the fake LLM: a session with enough
// signals → the enhance sub-agent runs → the skill it wrote is installed in
// the store with a snapshot → the hook reports it; then a second session on
// the same kind of task finds the skill (task:skill:search) and loads it.
func TestAutoEnhanceCreatesASkillTheNextRunLoads(t *testing.T) {
	w := newWorld(t, nil)
	home := w.env["SYNAPSE_HOME"]
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"skillEnhance": {"autoEnhance": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var enhancePrompts []string
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case isEnhance(req):
			if req.Turns() == 0 {
				enhancePrompts = append(enhancePrompts, req.FirstUserText())
				m := stageRe.FindStringSubmatch(req.FirstUserText())
				if m == nil {
					return llmtest.TextTurn("no staging directory in the prompt")
				}
				return llmtest.BashTurn("e", "write "+filepath.Join(m[1], "csv-report", "SKILL.md")+" '"+csvSkill+"'")
			}
			return llmtest.TextTurn("Wrote a skill for CSV reports.\n[Skill] Created: csv-report")
		case isSubagent(req):
			return llmtest.TextTurn("unexpected sub-agent")
		}
		// The first session: several calls, an error then a recovery, files written.
		switch req.Turns() {
		case 0:
			return llmtest.BashTurn("a", "cat data.csv")
		case 1:
			return llmtest.BashTurn("b", "printf 'name,n\\nx,1\\ny,2\\n' > data.csv", "wc -l data.csv", "cut -d, -f1 data.csv", "write report.txt 'rows: 2'")
		}
		return llmtest.TextTurn("The report is in report.txt.")
	})
	g := w.newAgent(t)
	res, err := g.Runner.Run(context.Background(), "summarise data.csv into report.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hooks) != 1 || !strings.HasPrefix(res.Hooks[0].Text, "[Skill] Created: csv-report (snapshot 1") {
		t.Fatalf("hook outputs: %+v", res.Hooks)
	}
	if len(enhancePrompts) != 1 || !strings.Contains(enhancePrompts[0], "$ cat data.csv") || !strings.Contains(enhancePrompts[0], "ERROR: ") {
		t.Errorf("enhance prompt lacks the transcript: %q", enhancePrompts)
	}
	store := &skills.Store{Dir: filepath.Join(home, "skills")}
	vs, err := store.Versions("csv-report")
	if err != nil || len(vs) != 1 || vs[0].Reason != "skill auto-enhance" {
		t.Fatalf("snapshots: %+v %v", vs, err)
	}
	if data, err := os.ReadFile(filepath.Join(store.Dir, "csv-report", "SKILL.md")); err != nil || string(data) != csvSkill {
		t.Fatalf("installed SKILL.md = %q, %v", data, err)
	}
	for _, m := range g.Runner.History() {
		if strings.Contains(m.Text, "[Skill]") {
			t.Error("the hook's report entered the history")
		}
	}
	var progress bool
	for _, e := range g.ev.list() {
		progress = progress || (e.Kind == agent.HookProgress && strings.Contains(e.Text, "worth learning from"))
	}
	if !progress {
		t.Error("no progress line while enhancing")
	}

	// The second session on the same kind of task.
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case isSkillSearch(req):
			if !strings.Contains(req.FirstUserText(), "csv-report") {
				return llmtest.TextTurn(`{"matched_skills": []}`)
			}
			return llmtest.TextTurn(`{"matched_skills": [{"name": "csv-report", "description": "CSV reports"}]}`)
		case isSubagent(req):
			return llmtest.TextTurn("unexpected sub-agent")
		}
		switch req.Turns() {
		case 0:
			return llmtest.BashTurn("s", `task:skill:search --prompt "summarise sales.csv" --description "find skills"`)
		case 1:
			if tr, ok := req.ToolResult("s-1"); !ok || !strings.Contains(tr.Content, `"csv-report"`) {
				return llmtest.TextTurn("search found nothing")
			}
			return llmtest.BashTurn("l", "skill:load csv-report")
		}
		return llmtest.TextTurn("Following csv-report.")
	})
	g2 := w.newAgent(t)
	res, err = g2.Runner.Run(context.Background(), "summarise sales.csv")
	if err != nil || res.Text != "Following csv-report." {
		t.Fatalf("second run: %q %v", res.Text, err)
	}
	last, _ := w.srv.LastRequest()
	if tr, ok := last.ToolResult("l-1"); !ok || tr.IsError || !strings.Contains(tr.Content, "# CSV report") {
		t.Errorf("skill:load result: %+v", tr)
	}
}

// newAgent builds a top-level agent with the skill-search instruction as in
// production, and the settings of the world's SYNAPSE_HOME.
func (w *world) newAgent(t *testing.T) *agentUnderTest {
	t.Helper()
	ev := &events{}
	// As a user who approves every skill:import the model asks for.
	approve := skills.ImportPolicy{ApproveInstall: func(context.Context, skills.InstallRequest) bool { return true }}
	g, err := w.app.NewAgent(context.Background(), app.AgentSetup{Cwd: w.proj, Persist: true, OnEvent: ev.add,
		Extensions: app.ExtensionOptions{Import: approve}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return &agentUnderTest{Agent: g, ev: ev}
}

type agentUnderTest struct {
	*app.Agent
	ev *events
}

var mergeRe = regexp.MustCompile(`copied in (\S+) \(your writable skills directory\)`)

// skill:import --merge of a skill similar to an installed one runs the
// skill-enhance sub-agent, which merges it; the merged skill is installed
// through the store and the similar one is not installed beside it.
func TestImportMergeRunsTheEnhanceSubagent(t *testing.T) {
	w := newWorld(t, nil)
	store := &skills.Store{Dir: filepath.Join(w.env["SYNAPSE_HOME"], "skills")}
	src := filepath.Join(t.TempDir(), "csv-report")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte(csvSkill), 0o644)
	if _, _, err := store.Commit("csv-report", src, "test"); err != nil {
		t.Fatal(err)
	}
	incoming := filepath.Join(w.proj, "incoming", "csv-summary")
	os.MkdirAll(incoming, 0o755)
	os.WriteFile(filepath.Join(incoming, "SKILL.md"), []byte("---\nname: csv-summary\ndescription: Make a report from CSV data files.\n---\n3. `head -n 5 data.csv`\n"), 0o644)
	merged := strings.Replace(csvSkill, "2. `cut -d, -f1 data.csv`\n", "2. `cut -d, -f1 data.csv`\n3. `head -n 5 data.csv`\n", 1)

	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case isEnhance(req):
			if req.Turns() == 0 {
				m := mergeRe.FindStringSubmatch(req.FirstUserText())
				if m == nil || !strings.Contains(req.FirstUserText(), "into the installed skill csv-report") {
					return llmtest.TextTurn("bad merge prompt")
				}
				return llmtest.BashTurn("m", "write "+filepath.Join(m[1], "csv-report", "SKILL.md")+" '"+merged+"'")
			}
			return llmtest.TextTurn("[Skill] Enhanced: csv-report")
		case isSubagent(req):
			return llmtest.TextTurn("unexpected sub-agent")
		}
		switch req.Turns() {
		case 0:
			return llmtest.BashTurn("i", "skill:import incoming")
		case 1:
			return llmtest.BashTurn("j", "skill:import incoming --merge")
		}
		return llmtest.TextTurn("merged")
	})
	g := w.newAgent(t)
	if _, err := g.Runner.Run(context.Background(), "import the csv skill"); err != nil {
		t.Fatal(err)
	}
	last, _ := w.srv.LastRequest()
	if tr, _ := last.ToolResult("i-1"); !tr.IsError || !strings.Contains(tr.Content, "looks like the installed skill") {
		t.Errorf("plain import of a similar skill: %+v", tr)
	}
	if tr, _ := last.ToolResult("j-1"); tr.IsError || !strings.Contains(tr.Content, "[Skill] Enhanced: csv-report (snapshot 2") {
		t.Errorf("--merge: %+v", tr)
	}
	if data, _ := os.ReadFile(filepath.Join(store.Dir, "csv-report", "SKILL.md")); string(data) != merged {
		t.Errorf("merged SKILL.md = %q", data)
	}
	if _, err := os.Stat(filepath.Join(store.Dir, "csv-summary")); err == nil {
		t.Error("--merge also installed csv-summary")
	}
}
