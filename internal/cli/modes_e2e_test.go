package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Permission modes on `synapse run` (no person to ask): plan refuses a
// write and a redirection under the real read-only sandbox and tells the
// model why; accept-edits grants a write elsewhere in the repository
// without asking, which default mode leaves blocked.
func TestRunPermissionModes(t *testing.T) {
	testutil.RequireBwrap(t)
	t.Run("plan", func(t *testing.T) {
		srv := llmtest.New(t,
			llmtest.ToolTurn(llmtest.BashCall("c1", "write planned.txt 'content'")),
			llmtest.ToolTurn(llmtest.BashCall("c2", "echo x > f")),
			llmtest.ToolTurn(llmtest.BashCall("c3", "task:general write f for me")), // its own writable shell: refused
			llmtest.TextTurn("Plan: write planned.txt, then f."),
		)
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "--permission-mode", "plan", "make the files")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		for _, f := range []string{"planned.txt", "f"} {
			if _, err := os.Stat(filepath.Join(e.dir, f)); err == nil {
				t.Errorf("plan mode let %s be written", f)
			}
		}
		reqs := srv.Requests()
		if !strings.Contains(reqs[0].LastUserText(), "Plan mode") {
			t.Errorf("the model is not told it plans: %q", reqs[0].LastUserText())
		}
		for i, id := range []string{"c1", "c2", "c3"} {
			res, ok := reqs[i+1].ToolResult(id)
			if !ok || !strings.Contains(res.Content, tool.PlanModeNote) {
				t.Errorf("result of %s does not say plan mode: %+v", id, res)
			}
		}
	})

	for _, tt := range []struct {
		mode    string
		written bool
	}{{"accept-edits", true}, {"default", false}} {
		t.Run(tt.mode, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.ToolTurn(llmtest.BashCall("c1", "echo x > ../top.txt")),
				llmtest.TextTurn("done"),
			)
			e := newRunEnv(t, srv, llmtest.FormatAnthropic)
			e.dir = testutil.OutsideTmp(t) // /tmp is the sandbox's private one
			if err := exec.Command("git", "init", "-q", e.dir).Run(); err != nil {
				t.Skipf("git init: %v", err)
			}
			sub := filepath.Join(e.dir, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			e.dir = sub // run in a subdirectory of the repository
			r := e.run(t, "", "run", "--permission-mode", tt.mode, "write the top file")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			_, err := os.Stat(filepath.Join(filepath.Dir(sub), "top.txt"))
			if written := err == nil; written != tt.written {
				res, _ := srv.Requests()[1].ToolResult("c1")
				t.Errorf("%s: top.txt written = %v, want %v\n%s\n%s", tt.mode, written, tt.written, r.stdout, res.Content)
			}
		})
	}
	t.Run("unknown mode", func(t *testing.T) {
		e := newRunEnv(t, llmtest.New(t), llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "--permission-mode", "yolo", "x")
		if r.code != 2 || !strings.Contains(r.stderr, `unknown permission mode "yolo"`) {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

// TestChatPTYPlanMode: Shift+Tab cycles the mode (the prompt and the
// footer show it); in plan mode a redirection is refused under the real
// read-only sandbox; /approve switches to default and the same command
// then writes.
func TestChatPTYPlanMode(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", "echo planned > f")),
		llmtest.TextTurn("Plan: write f."),
		llmtest.ToolTurn(llmtest.BashCall("c2", "echo planned > f")),
		llmtest.TextTurn("Carried out."),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	if strings.Contains(p.screen(), "sandbox OFF") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is off on CI:\n%s", p.screen())
		}
		t.Skip("the sandbox cannot run here")
	}
	// The prompt shows the mode; the hint under it says what the mode does.
	p.send("\x1b[Z")
	p.expect("accept-edits " + prompt)
	p.expect("mode accept-edits:")
	p.send("\x1b[Z")
	p.expect("plan " + prompt)
	p.expect("mode plan:")
	p.send("make f\r")
	p.expect("mode plan · ") // the footer
	p.expect("plan mode: refused")
	p.expect("Plan: write f.")
	p.expect("plan " + prompt)
	if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
		t.Fatal("plan mode let the command write f")
	}
	p.send("/approve\r")
	p.expect("Plan approved")
	p.expect("Carried out.")
	p.expect(prompt)
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "planned\n" {
		t.Errorf("after /approve f = %q, %v", b, err)
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	reqs := srv.Requests()
	if res, ok := reqs[1].ToolResult("c1"); !ok || !strings.Contains(res.Content, tool.PlanModeNote) {
		t.Errorf("the refusal does not tell the model it is in plan mode: %+v", res)
	}
	if got := reqs[2].LastUserText(); !strings.Contains(got, "plan is approved") {
		t.Errorf("/approve sent %q", got)
	}
}

// TestChatPTYAskMode: in ask mode a write is put to the user before it
// runs: allowed once it writes; a redirection denied is not run and the
// model is told; a read-only command runs without a question.
func TestChatPTYAskMode(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", "write allowed.txt 'yes'")),
		llmtest.ToolTurn(llmtest.BashCall("c2", "echo no > denied.txt")),
		llmtest.ToolTurn(llmtest.BashCall("c3", "ls")),
		llmtest.TextTurn("Asked about both."),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv), "chat", "--permission-mode", "ask")
	p.expect("ask " + prompt)
	p.send("write the files\r")
	p.expect("Run this command? (permission mode ask)")
	p.expect("write allowed.txt 'yes'")
	p.expect("[3] deny")
	p.send("1")
	p.expect("Run this command? (permission mode ask)")
	p.expect("echo no > denied.txt")
	p.expect("[3] deny")
	p.send("3")
	p.expect("Asked about both.")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "allowed.txt")); err != nil || string(b) != "yes" {
		t.Errorf("allowed.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
	reqs := srv.Requests()
	if res, ok := reqs[2].ToolResult("c2"); !ok || !strings.Contains(res.Content, "declined") {
		t.Errorf("the model is not told of the denial: %+v", res)
	}
	if strings.Count(p.screen(), "Run this command?") != 2 {
		t.Errorf("ls asked too:\n%s", p.screen())
	}
}
