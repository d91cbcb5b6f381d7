package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/skills"
)

func call(cmd string) llm.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.ToolCall{ID: cmd, Name: "Bash", Input: in}
}

func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Text: s} }
func calls(cmds ...string) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	for _, c := range cmds {
		m.ToolCalls = append(m.ToolCalls, call(c))
	}
	return m
}
func result(isErr bool) llm.Message {
	return llm.Message{Role: llm.RoleTool, Text: "out", IsError: isErr}
}
func answer(s string) llm.Message { return llm.Message{Role: llm.RoleAssistant, Text: s} }

func TestScore(t *testing.T) {
	tests := []struct {
		name string
		conv []llm.Message
		want Signals
	}{
		{"plain answer", []llm.Message{user("hi"), answer("hello")}, Signals{}},
		{"several calls", []llm.Message{user("x"), calls("ls", "pwd", "date", "id", "uname"), result(false), result(false), result(false), result(false), result(false), answer("ok")},
			Signals{ToolCalls: 5}},
		{"error then recovery", []llm.Message{user("x"), calls("cat a"), result(true), calls("ls"), result(false), answer("ok")},
			Signals{ToolCalls: 2, Recovered: true}},
		{"error without recovery", []llm.Message{user("x"), calls("cat a"), result(true), answer("failed")}, Signals{ToolCalls: 1}},
		{"write", []llm.Message{user("x"), calls("write a.txt 'x'"), result(false)}, Signals{ToolCalls: 1, FilesChanged: true}},
		{"redirection", []llm.Message{user("x"), calls("echo x > out.txt 2>&1"), result(false)}, Signals{ToolCalls: 1, FilesChanged: true}},
		{"no file change", []llm.Message{user("x"), calls("ls > /dev/null 2>&1", "grep a b >&2"), result(false), result(false)}, Signals{ToolCalls: 2}},
		{"correction after a turn", []llm.Message{user("do x"), answer("did y"), user("No, that's wrong: use z instead"), answer("ok")}, Signals{Corrected: true}},
		{"first prompt is no correction", []llm.Message{user("don't touch a, fix b"), answer("ok")}, Signals{}},
		{"only the last turn counts", []llm.Message{user("a"), calls("cat a"), result(true), calls("ls"), result(false), answer("ok"), user("thanks"), answer("bye")}, Signals{}},
		{"reminders belong to the turn", []llm.Message{user("a"), calls("cat a"), result(true), answer("done?"), user("[System Reminder] todo"), calls("ls"), result(false)},
			Signals{ToolCalls: 2, Recovered: true}},
		{"a Stop hook's reason to go on belongs to the turn", []llm.Message{user("a"), answer("hi"), user("b"), calls("cat a"), result(true), answer("done?"),
			user(agent.StopHookNotePrefix + "The user's Stop hook asked you to continue instead of stopping:\nrun the tests"), calls("ls"), result(false), answer("ok")},
			Signals{ToolCalls: 2, Recovered: true}},
	}
	for _, tt := range tests {
		if got := Score(tt.conv); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestThresholds(t *testing.T) {
	one, two, three := Signals{Recovered: true}, Signals{Recovered: true, FilesChanged: true}, Signals{ToolCalls: 9, Recovered: true, FilesChanged: true}
	for _, tt := range []struct {
		s       Signals
		profile string
		want    bool
	}{
		{one, config.ProfileAggressive, true}, {one, config.ProfileNeutral, false}, {two, config.ProfileNeutral, true},
		{two, config.ProfileConservative, false}, {three, config.ProfileConservative, true}, {two, "", false},
	} {
		if got := Worth(tt.s, tt.profile); got != tt.want {
			t.Errorf("Worth(%+v, %q) = %v", tt.s, tt.profile, got)
		}
	}
}

func TestTranscriptKeepsTheNewest(t *testing.T) {
	var conv []llm.Message
	for i := range 200 {
		conv = append(conv, calls("echo step-"+strings.Repeat("x", 50)+string(rune('a'+i%26))), result(false))
	}
	conv = append(conv, answer("FINAL ANSWER"))
	tr := Transcript(conv, 2000, 0)
	if len(tr) > 2100 || !strings.HasSuffix(tr, "ASSISTANT: FINAL ANSWER") || !strings.HasPrefix(tr, "[") {
		t.Errorf("transcript (%d chars): %q…", len(tr), tr[:100])
	}
}

// A long tool result is cut at a line boundary to SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT
// characters, and says how many lines it left out.
func TestTranscriptCutsResultsAtLines(t *testing.T) {
	text := "alpha line one\nbeta line two\ngamma line three\ndelta line four"
	conv := []llm.Message{calls("make"), {Role: llm.RoleTool, Text: text}}
	tr := Transcript(conv, 16000, 35)
	if !strings.Contains(tr, "OUTPUT: alpha line one\nbeta line two\n[… 2 more lines]") || strings.Contains(tr, "gamma") {
		t.Errorf("transcript:\n%s", tr)
	}
	// A first line longer than the limit is the one thing cut mid-line.
	tr = Transcript([]llm.Message{calls("cat"), {Role: llm.RoleTool, Text: strings.Repeat("x", 50) + "\nnext"}}, 16000, 10)
	if !strings.Contains(tr, "OUTPUT: xxxxxxxxxx…\n[… 1 more line]") {
		t.Errorf("transcript:\n%s", tr)
	}
	if tr := Transcript(conv, 16000, 0); !strings.Contains(tr, text) {
		t.Errorf("default limit cut a short result:\n%s", tr)
	}
}

func TestParseOutcome(t *testing.T) {
	for in, want := range map[string]Outcome{
		"did it\n[Skill] Created: csv-report":                {Kind: "Created", Name: "csv-report"},
		"[Skill] Enhanced: git-flow\n":                       {Kind: "Enhanced", Name: "git-flow"},
		"`[Skill] No enhancement needed: nothing reusable`":  {Kind: "None", Reason: "nothing reusable"},
		"[Skill] No enhancement needed (a one-off question)": {Kind: "None", Reason: "a one-off question"},
	} {
		got, ok := ParseOutcome(in)
		if !ok || got != want {
			t.Errorf("ParseOutcome(%q) = %+v %v, want %+v", in, got, ok, want)
		}
	}
	for _, bad := range []string{"I created csv-report", "[Skill] Created: ../x", "[Skill] Created: a\nmore text"} {
		if _, ok := ParseOutcome(bad); ok {
			t.Errorf("ParseOutcome(%q) accepted", bad)
		}
	}
}

// worthy is a turn with all four signals.
var worthy = []llm.Message{user("a"), answer("b"), user("no, do it differently instead"),
	calls("cat a", "ls", "pwd", "id", "write x 'y'"), result(true), result(false)}

func newEnhancer(t *testing.T, run RunFunc) *Enhancer {
	return &Enhancer{Store: &skills.Store{Dir: filepath.Join(t.TempDir(), "skills")}, Run: run, Profile: config.ProfileConservative}
}

func stop(t *testing.T, e *Enhancer) (string, error) {
	return e.Hook(context.Background(), hooks.StopInput{Conversation: worthy, Progress: func(string) {}})
}

func TestBrokenContractIsRetriedOnceThenNoEnhancement(t *testing.T) {
	runs := 0
	e := newEnhancer(t, func(ctx context.Context, dir, prompt string) (string, error) {
		runs++
		if runs == 2 && !strings.Contains(prompt, "broke the contract") {
			t.Error("the retry does not say what was wrong")
		}
		return "I think it went fine.", nil
	})
	out, err := stop(t, e)
	if err != nil || runs != 2 || !strings.HasPrefix(out, "[Skill] No enhancement needed (") {
		t.Errorf("out %q err %v runs %d", out, err, runs)
	}
}

func TestRetryThatFollowsTheContractCounts(t *testing.T) {
	runs := 0
	e := newEnhancer(t, func(ctx context.Context, dir, prompt string) (string, error) {
		runs++
		if runs == 1 {
			os.MkdirAll(filepath.Join(dir, "tidy"), 0o755)
			os.WriteFile(filepath.Join(dir, "tidy", "SKILL.md"), []byte("---\nname: tidy\ndescription: tidy things\n---\nbody\n"), 0o644)
			return "done", nil
		}
		return "[Skill] Created: tidy", nil
	})
	out, err := stop(t, e)
	if err != nil || !strings.HasPrefix(out, "[Skill] Created: tidy (snapshot 1") {
		t.Fatalf("out %q err %v", out, err)
	}
	// Enhancing it: the existing skill is in the scratch copy.
	e.Run = func(ctx context.Context, dir, prompt string) (string, error) {
		data, err := os.ReadFile(filepath.Join(dir, "tidy", "SKILL.md"))
		if err != nil {
			return "", err
		}
		os.WriteFile(filepath.Join(dir, "tidy", "SKILL.md"), append(data, "more\n"...), 0o644)
		return "[Skill] Enhanced: tidy", nil
	}
	if out, err := stop(t, e); err != nil || !strings.HasPrefix(out, "[Skill] Enhanced: tidy (snapshot 2") {
		t.Fatalf("enhance: %q %v", out, err)
	}
}

func TestNotRunWhenOffOrNotWorthIt(t *testing.T) {
	ran := false
	e := newEnhancer(t, func(context.Context, string, string) (string, error) { ran = true; return "", nil })
	e.Enabled = func() bool { return false }
	if out, _ := stop(t, e); out != "" || ran {
		t.Error("ran while off")
	}
	e.Enabled = nil
	out, _ := e.Hook(context.Background(), hooks.StopInput{Conversation: []llm.Message{user("hi"), answer("hello")}, Progress: func(string) {}})
	if out != "" || ran {
		t.Error("ran on a turn without signals")
	}
}

func TestReportedSkillMustExistAndBeValid(t *testing.T) {
	e := newEnhancer(t, func(context.Context, string, string) (string, error) { return "[Skill] Created: ghost", nil })
	if _, err := stop(t, e); err == nil || !strings.Contains(err.Error(), "wrote no folder ghost") {
		t.Errorf("err = %v", err)
	}
	// A link planted where the skill should be is not followed.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("---\nname: evil\ndescription: x\n---\n"), 0o644)
	e.Run = func(_ context.Context, dir, _ string) (string, error) {
		return "[Skill] Created: evil", os.Symlink(outside, filepath.Join(dir, "evil"))
	}
	if _, err := stop(t, e); err == nil || !strings.Contains(err.Error(), "wrote no folder evil") {
		t.Errorf("symlinked skill: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.Store.Dir, "evil")); err == nil {
		t.Error("a symlinked folder was installed")
	}
}

func TestMergeCommitsTheTargetOnly(t *testing.T) {
	e := newEnhancer(t, nil)
	src := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: notes\ndescription: notes v1\n---\nv1\n"), 0o644)
	if _, _, err := e.Store.Commit("notes", src, "test"); err != nil {
		t.Fatal(err)
	}
	incoming := filepath.Join(t.TempDir(), "notes-plus")
	os.MkdirAll(incoming, 0o755)
	os.WriteFile(filepath.Join(incoming, "SKILL.md"), []byte("---\nname: notes-plus\ndescription: more notes\n---\nextra step\n"), 0o644)
	e.Run = func(_ context.Context, dir, prompt string) (string, error) {
		m := regexp.MustCompile(`skill in (\S+) \(being imported\)`).FindStringSubmatch(prompt)
		if m == nil {
			return "", errors.New("no incoming path in the prompt")
		}
		extra, err := os.ReadFile(filepath.Join(m[1], "SKILL.md"))
		if err != nil {
			return "", err
		}
		body := "---\nname: notes\ndescription: notes v2\n---\nv1\n" + string(extra[strings.LastIndex(string(extra), "---\n")+4:])
		return "[Skill] Enhanced: notes", os.WriteFile(filepath.Join(dir, "notes", "SKILL.md"), []byte(body), 0o644)
	}
	out, err := e.Merge(context.Background(), incoming, "notes")
	if err != nil || !strings.HasPrefix(out, "[Skill] Enhanced: notes (snapshot 2") {
		t.Fatalf("merge: %q %v", out, err)
	}
	data, _ := os.ReadFile(filepath.Join(e.Store.Dir, "notes", "SKILL.md"))
	if !strings.Contains(string(data), "extra step") {
		t.Errorf("merged skill: %s", data)
	}
	e.Run = func(context.Context, string, string) (string, error) { return "[Skill] Created: notes-plus", nil }
	if _, err := e.Merge(context.Background(), incoming, "notes"); err == nil || !strings.Contains(err.Error(), "asked to merge into notes") {
		t.Errorf("a merge that creates another skill: %v", err)
	}
}

func TestTimeout(t *testing.T) {
	e := newEnhancer(t, func(ctx context.Context, _, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	e.Timeout = 50 * time.Millisecond
	_, err := stop(t, e)
	if err == nil || !strings.Contains(err.Error(), "SYNAPSE_SKILL_SUBAGENT_TIMEOUT") || errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}
