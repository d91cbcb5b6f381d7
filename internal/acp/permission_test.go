package acp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// asked is what the client was asked so far.
func (c *client) askedNow() []sdk.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.RequestPermissionRequest(nil), c.asked...)
}

// A clone the model asks for is put to the client: denied, nothing is
// installed; allowed once, the install into the user store is asked too,
// and allowed, the skill is installed.
func TestModelCloneAsks(t *testing.T) {
	testutil.RequireBwrap(t)
	testutil.RequireTool(t, "git")
	repo := filepath.Join(testutil.OutsideTmp(t), "repo")
	testutil.WriteFile(t, filepath.Join(repo, "greet", "SKILL.md"), "---\nname: greet\ndescription: says hello\n---\nbody\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "x"}} {
		c := exec.Command("git", args...)
		c.Dir = repo
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	importCmd := "skill:import file://" + repo
	w := newWorld(t,
		llmtest.BashTurn("a", importCmd), llmtest.TextTurn("refused"),
		llmtest.BashTurn("b", importCmd), llmtest.TextTurn("installed"))
	installed := filepath.Join(w.env["SYNAPSE_HOME"], "skills", "greet", "SKILL.md")
	id := w.newSession(t)

	w.cl.answer = optDeny
	w.prompt(t, id, "install the greet skill")
	asked := w.cl.askedNow()
	if len(asked) != 1 || string(asked[0].ToolCall.ToolCallId) != "a-1" || len(asked[0].Options) != 2 ||
		asked[0].ToolCall.Title == nil || *asked[0].ToolCall.Title != "Clone file://"+repo+"?" {
		t.Fatalf("permission requests = %+v", asked)
	}
	if _, err := os.Stat(installed); err == nil {
		t.Fatal("installed although the client denied the clone")
	}
	if tr, _ := w.srv.Requests()[1].ToolResult("a-1"); !tr.IsError {
		t.Errorf("the refused import's result is not an error: %+v", tr)
	}

	w.cl.answer = optOnce
	w.prompt(t, id, "again")
	asked = w.cl.askedNow()
	if len(asked) != 3 {
		t.Fatalf("%d permission requests, want the clone and then the install asked", len(asked))
	}
	if tl := asked[2].ToolCall.Title; tl == nil || *tl != "Install skill greet?" || string(asked[2].ToolCall.ToolCallId) != "b-1" {
		t.Errorf("install question = %+v", asked[2].ToolCall)
	}
	if _, err := os.Stat(installed); err != nil {
		t.Errorf("not installed after the client allowed the clone: %v", err)
	}
}

// session/new advertises the permission modes; an unknown one is refused
// with the list; --permission-mode sets the starting one.
func TestModesAdvertised(t *testing.T) {
	w := newWorld(t)
	res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range res.Modes.AvailableModes {
		if m.Name == "" || m.Description == nil || *m.Description == "" {
			t.Errorf("mode %q has no name or description", m.Id)
		}
		ids = append(ids, string(m.Id))
	}
	if res.Modes == nil || res.Modes.CurrentModeId != "default" || strings.Join(ids, ",") != "default,accept-edits,plan,ask" {
		t.Fatalf("modes = %+v", res.Modes)
	}
	_, err = w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: res.SessionId, ModeId: "yolo"})
	if err == nil || !strings.Contains(err.Error(), "use one of default, accept-edits, plan, ask") {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: "session-nope", ModeId: "plan"}); err == nil {
		t.Error("set_mode on an unknown session succeeded")
	}

	testutil.RequireBwrap(t) // plan mode needs the sandbox
	w2 := newWorld(t)
	w2.mode = tool.ModePlan
	w2.connect(t)
	res2, err := w2.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w2.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Modes.CurrentModeId != "plan" {
		t.Errorf("starting mode %q, want plan", res2.Modes.CurrentModeId)
	}
}

// Plan mode: the prompt says so, a write is refused without asking (the
// model is told to plan); leaving it, the next prompt says the workspace
// is writable again and the write goes through.
func TestPlanMode(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t,
		llmtest.BashTurn("p", "write plan.txt 'x'"), llmtest.TextTurn("Here is my plan."),
		llmtest.BashTurn("d", "write plan.txt 'x'"), llmtest.TextTurn("Done."))
	w.cl.answer = optOnce // would allow, were it asked
	id := w.newSession(t)
	if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	w.prompt(t, id, "make a plan")
	target := filepath.Join(w.proj, "plan.txt")
	if _, err := os.Stat(target); err == nil {
		t.Fatal("plan mode wrote a file")
	}
	if n := len(w.cl.askedNow()); n != 0 {
		t.Errorf("plan mode asked %d questions; it refuses without asking", n)
	}
	reqs := w.srv.Requests()
	if !strings.Contains(reqs[0].LastUserText(), "[Plan mode") {
		t.Errorf("the plan-mode prompt does not say so: %q", reqs[0].LastUserText())
	}
	if tr, _ := reqs[1].ToolResult("p-1"); !strings.Contains(tr.Content, "plan mode") {
		t.Errorf("the refused write's result does not tell the model it is in plan mode: %q", tr.Content)
	}

	if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "default"}); err != nil {
		t.Fatal(err)
	}
	w.prompt(t, id, "go ahead")
	if last := w.srv.Requests()[2].LastUserText(); !strings.Contains(last, "plan mode has ended") || strings.Contains(last, "[Plan mode") {
		t.Errorf("the prompt after plan mode = %q", last)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "x" {
		t.Errorf("after leaving plan mode: %q, %v", b, err)
	}
}

// Ask mode: a command that may write is put to the client first: denied,
// it does not run; "always" runs it and the same command word is not
// asked again; a read-only command and a write to the session's /tmp are
// never asked.
func TestAskMode(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t,
		llmtest.BashTurn("a", "touch one"),
		llmtest.BashTurn("b", "ls"),
		llmtest.BashTurn("c", "touch two"),
		llmtest.BashTurn("d", "touch three"),
		llmtest.BashTurn("e", "echo s > /tmp/s && cat /tmp/s"),
		llmtest.TextTurn("ok"))
	var mu sync.Mutex
	answers := []string{optDeny, optAlways}
	w.cl.decide = func(sdk.RequestPermissionRequest) string {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return ""
		}
		a := answers[0]
		answers = answers[1:]
		return a
	}
	id := w.newSession(t)
	if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: id, ModeId: "ask"}); err != nil {
		t.Fatal(err)
	}
	w.prompt(t, id, "make files")
	asked := w.cl.askedNow()
	if len(asked) != 2 {
		t.Fatalf("%d questions, want 2 (touch one, touch two): %+v", len(asked), asked)
	}
	for i, want := range []string{"a-1", "c-1"} {
		if string(asked[i].ToolCall.ToolCallId) != want || len(asked[i].Options) != 3 || !strings.Contains(*asked[i].ToolCall.Title, "touch") {
			t.Errorf("question %d = %+v, want about %s", i, asked[i].ToolCall, want)
		}
	}
	for name, want := range map[string]bool{"one": false, "two": true, "three": true} {
		if _, err := os.Stat(filepath.Join(w.proj, name)); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", name, err == nil, want)
		}
	}
	if tr, _ := w.srv.Requests()[5].ToolResult("e-1"); strings.TrimSpace(tr.Content) != "s" {
		t.Errorf("the /tmp write's result = %q", tr.Content)
	}
	if tr, _ := w.srv.Requests()[1].ToolResult("a-1"); !strings.Contains(tr.Content, "declined") {
		t.Errorf("the denied command's result = %q", tr.Content)
	}
}

// accept-edits: a write elsewhere in the project (the session runs in a
// subdirectory of a repository) is granted without asking; in the default
// mode the same write is asked about.
func TestAcceptEditsMode(t *testing.T) {
	testutil.RequireBwrap(t)
	for _, mode := range []string{"accept-edits", "default"} {
		t.Run(mode, func(t *testing.T) {
			w := newWorldIn(t, testutil.OutsideTmp(t), llmtest.BashTurn("e", "write ../other.txt 'hi'"), llmtest.TextTurn("ok"))
			if err := os.MkdirAll(filepath.Join(w.proj, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			sub := filepath.Join(w.proj, "sub")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: sub, McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: res.SessionId, ModeId: sdk.SessionModeId(mode)}); err != nil {
				t.Fatal(err)
			}
			w.cl.answer = optDeny
			w.prompt(t, res.SessionId, "write next door")
			_, err = os.Stat(filepath.Join(w.proj, "other.txt"))
			asked := len(w.cl.askedNow())
			if mode == "accept-edits" && (err != nil || asked != 0) {
				t.Errorf("accept-edits: written %v, asked %d; want written without asking", err == nil, asked)
			}
			if mode == "default" && (err == nil || asked != 1) {
				t.Errorf("default: written %v, asked %d; want asked and (denied) not written", err == nil, asked)
			}
		})
	}
}

// The mode is also a session config option (category mode): setting either
// form switches it, and the client is told in both forms.
func TestModeConfigOption(t *testing.T) {
	w := newWorld(t)
	res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	current := func(opts []sdk.SessionConfigOption) (string, int) {
		t.Helper()
		cur, values, o := option(t, opts, modeConfigID)
		if o.Category == nil || *o.Category != sdk.SessionConfigOptionCategoryMode {
			t.Fatalf("mode option = %+v", o)
		}
		return cur, len(values)
	}
	if cur, n := current(res.ConfigOptions); cur != "default" || n != 4 {
		t.Errorf("new session: mode %q of %d", cur, n)
	}
	set, err := w.conn.SetSessionConfigOption(context.Background(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: res.SessionId, ConfigId: modeConfigID, Value: "ask"}})
	if err != nil {
		t.Fatal(err)
	}
	if cur, _ := current(set.ConfigOptions); cur != "ask" {
		t.Errorf("after set_config_option: mode %q", cur)
	}
	if _, err := w.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: res.SessionId, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	var modes, configs []string
	for _, u := range w.cl.snapshot() {
		if u.CurrentModeUpdate != nil {
			modes = append(modes, string(u.CurrentModeUpdate.CurrentModeId))
		}
		if u.ConfigOptionUpdate != nil {
			cur, _ := current(u.ConfigOptionUpdate.ConfigOptions)
			configs = append(configs, cur)
		}
	}
	if strings.Join(modes, ",") != "ask,accept-edits" || strings.Join(configs, ",") != "ask,accept-edits" {
		t.Errorf("mode updates %v, config option updates %v; want ask then accept-edits in both", modes, configs)
	}
	_, err = w.conn.SetSessionConfigOption(context.Background(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: res.SessionId, ConfigId: "effort", Value: "x"}})
	if err == nil || !strings.Contains(err.Error(), `the session config options are \"mode\"`) {
		t.Errorf("unknown option: %v", err)
	}
}
