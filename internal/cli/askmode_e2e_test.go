package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// askModeTurns are the model's commands in the ask-mode tests: a write to
// the private /tmp, one to the project, an MCP tool its server declares
// read-only (echo) and one it does not (pid).
func askModeTurns(more ...llmtest.Turn) []llmtest.Turn {
	turns := []llmtest.Turn{
		llmtest.ToolTurn(llmtest.BashCall("c1", "echo scratch > /tmp/a && cat /tmp/a")),
		llmtest.ToolTurn(llmtest.BashCall("c2", "echo project > f")),
		llmtest.ToolTurn(llmtest.BashCall("c3", "mcp:docs:echo hello")),
		llmtest.ToolTurn(llmtest.BashCall("c4", "mcp:docs:pid")),
	}
	return append(append(turns, more...), llmtest.TextTurn("All four tried."))
}

// TestChatPTYAskModeScratchAndMCP: in the REPL's ask mode, under the real
// sandbox and the real MCP test server, a write to /tmp and a read-only MCP
// tool run without a question; a write to the project and an MCP tool
// without readOnlyHint are asked about (allowed once, then denied).
func TestChatPTYAskModeScratchAndMCP(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t, askModeTurns()...)
	env := chatEnv(t, srv)
	installExtensions(t, envValue(env, "SYNAPSE_HOME"))
	dir := t.TempDir() // under the host's /tmp: bound over the private one, so not scratch
	p := startPTY(t, dir, env, "chat", "--permission-mode", "ask")
	p.expect("ask " + prompt)
	if strings.Contains(p.screen(), "sandbox OFF") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is off on CI:\n%s", p.screen())
		}
		t.Skip("the sandbox cannot run here")
	}
	p.send("try the four commands\r")
	p.expect("Run this command? (permission mode ask)")
	p.expect("echo project > f")
	p.expect("why: `echo` writes to f (outside the scratch list)")
	p.expect("[2] always for `echo` this session")
	p.send("1")
	p.expect("Run this command? (permission mode ask)")
	p.expect("mcp:docs:pid")
	p.expect("readOnlyHint")
	p.send("3")
	p.expect("All four tried.")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(p.screen(), "Run this command?"); n != 2 {
		t.Errorf("%d questions, want 2 (the /tmp write and the read-only tool ran without one):\n%s", n, p.screen())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "project\n" {
		t.Errorf("f = %q, %v (allowed once)", b, err)
	}
	reqs := srv.Requests()
	for id, want := range map[string]string{"c1": "scratch", "c3": "hello", "c4": "declined"} {
		var res llmtest.ToolResult
		for _, r := range reqs {
			if x, ok := r.ToolResult(id); ok {
				res = x
			}
		}
		if !strings.Contains(res.Content, want) {
			t.Errorf("result of %s = %q, want it to hold %q", id, res.Content, want)
		}
	}
}

// TestRunAskMode: `synapse run --permission-mode ask` has no one to ask:
// what the REPL would ask about is refused before it runs, and the model
// is told why and what to do; the rest runs, a write to a scratch path of
// settings.json ("permissions.scratch", made writable with --allow-path)
// included.
func TestRunAskMode(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t, askModeTurns(llmtest.ToolTurn(llmtest.BashCall("c5", "echo cached > ~/cache/x")))...)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	installExtensions(t, e.home)
	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(`{"permissions": {"scratch": ["$HOME/cache"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(envValue(e.env, "HOME"), "cache")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	e.dir = testutil.OutsideTmp(t)
	r := e.run(t, "", "run", "--permission-mode", "ask", "--allow-path", cache, "try the four commands")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "f")); err == nil {
		t.Error("the project write ran with no one to approve it")
	}
	reqs := srv.Requests()
	result := func(id string) string {
		for _, rq := range reqs {
			if x, ok := rq.ToolResult(id); ok {
				return x.Content
			}
		}
		return ""
	}
	if got := result("c1"); !strings.Contains(got, "scratch") {
		t.Errorf("the /tmp write: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "x")); err != nil || string(b) != "cached\n" {
		t.Errorf("the write to the settings' scratch path: %q, %v; result %q", b, err, result("c5"))
	}
	if got := result("c3"); !strings.Contains(got, "hello") {
		t.Errorf("the read-only MCP tool: %q", got)
	}
	for id, word := range map[string]string{"c2": "`echo` writes to f", "c4": "`mcp:docs:pid`"} {
		got := result(id)
		if !strings.Contains(got, "permission mode is ask") || !strings.Contains(got, word) || !strings.Contains(got, "scratch") {
			t.Errorf("the refusal of %s does not say why and what to do: %q", id, got)
		}
	}
}
