package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

var (
	mcpServerOnce sync.Once
	mcpServerBin  string
	mcpServerErr  error
)

// mcpTestServer builds the stdio MCP test server (internal/mcp/mcptest) once,
// next to the synapse binary.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	mcpServerOnce.Do(func() {
		bin := filepath.Join(filepath.Dir(synapseBin), "mcptestserver")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/synapse-agent/synapse/internal/mcp/mcptest/mcptestserver").CombinedOutput()
		if err != nil {
			mcpServerErr = fmt.Errorf("build the MCP test server: %v\n%s", err, out)
			return
		}
		mcpServerBin = bin
	})
	if mcpServerErr != nil {
		t.Fatal(mcpServerErr)
	}
	return mcpServerBin
}

// installExtensions puts a skill with a shell script in $SYNAPSE_HOME/skills
// and the stdio test server, as "docs", in $SYNAPSE_HOME/mcp/mcp_servers.json.
func installExtensions(t *testing.T, synapseHome string) {
	t.Helper()
	files := map[string]string{
		"skills/pdf-kit/SKILL.md": "---\nname: pdf-kit\ndescription: Inspect PDF files (page counts).\n---\n\n# PDF kit\n\nRun `skill:pdf-kit:pages <file.pdf>`.\n",
		"skills/pdf-kit/scripts/pages.sh": "#!/usr/bin/env bash\n# Count the pages of a PDF file.\n# Usage: pages.sh <file.pdf>\n" +
			"for a in \"$@\"; do printf 'arg=%s\\n' \"$a\"; done\nprintf 'key=[%s]\\n' \"$ANTHROPIC_API_KEY\"\npwd\n",
		"mcp/mcp_servers.json": fmt.Sprintf(`{"mcpServers": {"docs": {"command": %q, "env": {"DOCS_TOKEN": "own-token"}}}}`, mcpTestServer(t)),
	}
	for name, content := range files {
		p := filepath.Join(synapseHome, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunUsesExtensions is the built binary's synapse run with a skill and an
// MCP server installed: the model searches (command:search pdf), runs the
// skill's script and two MCP tools, and the results it receives are right;
// neither the script nor the server sees the agent's API key, while the
// server gets its own configured env.
func TestRunUsesExtensions(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t,
		llmtest.BashTurn("s", "command:search pdf"),
		llmtest.BashTurn("k", `skill:pdf-kit:pages 'report one.pdf' '$(touch pwned)'`),
		llmtest.BashTurn("m", "mcp:docs:pdf_to_text --path report.pdf", "mcp:docs:env ANTHROPIC_API_KEY", "mcp:docs:env DOCS_TOKEN"),
		llmtest.TextTurn("done"),
	)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	installExtensions(t, e.home)
	r := e.run(t, "", "run", "use the extensions")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "done" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "synapse: MCP: loaded 11 tools from 1 servers") {
		t.Errorf("stderr lacks the MCP start-up report:\n%s", r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	result := func(req int, id string) string {
		t.Helper()
		tr, ok := reqs[req].ToolResult(id)
		if !ok {
			t.Fatalf("request %d has no result for %s", req, id)
		}
		return tr.Content
	}
	search := result(1, "s-1")
	for _, want := range []string{"skill:load pdf-kit", "skill:pdf-kit:pages", "mcp:docs:pdf_to_text"} {
		if !strings.Contains(search, want) {
			t.Errorf("command:search pdf lacks %s:\n%s", want, search)
		}
	}
	if got, want := strings.TrimSpace(result(2, "k-1")), "arg=report one.pdf\narg=$(touch pwned)\nkey=[]\n"+e.dir; got != want {
		t.Errorf("skill script result %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pwned")); err == nil {
		t.Error("an argument of the skill script was executed")
	}
	for id, want := range map[string]string{
		"m-1": "text of report.pdf",
		"m-2": "|" + e.dir, // empty: no agent key
		"m-3": "own-token|" + e.dir,
	} {
		if got := strings.TrimSpace(result(3, id)); got != want {
			t.Errorf("%s result %q, want %q", id, got, want)
		}
	}
}

// TestExecUsesExtensions: synapse exec runs command:search, skill scripts and
// MCP tools too; it stays quiet about extensions that work and reports a
// server that fails.
func TestExecUsesExtensions(t *testing.T) {
	testutil.RequireBwrap(t)
	dir := t.TempDir()
	env := testEnv(t)
	home := envValue(env, "SYNAPSE_HOME")
	installExtensions(t, home)
	execIn := func(t *testing.T, args ...string) runResult {
		t.Helper()
		c := exec.Command(synapseBin, append([]string{"exec"}, args...)...)
		c.Dir, c.Env = dir, env
		var out, errb strings.Builder
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return runResult{out.String(), errb.String(), code}
	}

	r := execIn(t, "command:search pdf")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"skill:load pdf-kit", "skill:pdf-kit:pages", "mcp:docs:pdf_to_text"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("command:search pdf lacks %s:\n%s", want, r.stdout)
		}
	}

	r = execIn(t, "skill:pdf-kit:pages a.pdf", "mcp:docs:add 40 2")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "arg=a.pdf\nkey=[]\n"+dir+"\n") || !strings.Contains(r.stdout, "42\n") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	broken := `{"mcpServers": {"gone": {"command": "synapse-no-such-server"}}}`
	if err := os.WriteFile(filepath.Join(dir, "mcp_servers.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	// A project file is used once the user approved it.
	if r := synapseEnv(t, dir, env, "mcp", "approve", "--yes"); r.code != 0 {
		t.Fatalf("mcp approve: %+v", r)
	}
	r = execIn(t, "command:search pdf")
	if r.code != 0 || !strings.Contains(r.stderr, `MCP server "gone" failed to start`) || !strings.Contains(r.stdout, "mcp:docs:pdf_to_text") {
		t.Errorf("with a broken server: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// mcp: lists both servers; --help of the down one's tool says what it can, exit 0.
	r = execIn(t, "mcp:")
	if r.code != 0 || !strings.Contains(r.stdout, "docs (stdio) — not started yet: it starts on first use") || !strings.Contains(r.stdout, "gone (stdio) —") {
		t.Errorf("mcp: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = execIn(t, "mcp:gone:search --help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: mcp:gone:search") || !strings.Contains(r.stdout, `MCP server "gone" is down`) || !strings.Contains(r.stdout, "synapse-no-such-server") {
		t.Errorf("help of a down server's tool: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestChatUsesExtensions: the REPL's banner reports the MCP start-up, /tools
// lists the installed skill's script and the server's tools, and the model's
// mcp: and skill script calls work in a chat turn.
func TestChatUsesExtensions(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t,
		llmtest.BashTurn("c", "mcp:docs:add 40 2", "skill:pdf-kit:pages x.pdf"),
		llmtest.TextTurn("Both ran."),
	)
	env := chatEnv(t, srv)
	installExtensions(t, envValue(env, "SYNAPSE_HOME"))
	dir := t.TempDir()
	p := startPTY(t, dir, env)
	p.expect("MCP: loaded 11 tools from 1 servers")
	p.expect(prompt)
	p.send("/tools\r")
	p.expect("skill:pdf-kit:pages")
	p.expect("Count the pages of a PDF file.")
	p.expect("docs (stdio, 11 tools)")
	p.expect("mcp:docs:pdf_to_text")
	p.expect(prompt)
	p.send("run them\r")
	p.expect("Both ran.")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for id, want := range map[string]string{"c-1": "42", "c-2": "arg=x.pdf\nkey=[]\n" + dir} {
		if r, ok := reqs[1].ToolResult(id); !ok || strings.TrimSpace(r.Content) != want {
			t.Errorf("%s result = %+v, want %q", id, r, want)
		}
	}
}

// An MCP tool's image reaches the model as an image block in the tool
// result (Anthropic wire format), its text naming it; and an
// array-of-object parameter called exactly as the tool's help example
// shows reaches the server as objects.
func TestRunMCPImageAndHelpExample(t *testing.T) {
	testutil.RequireBwrap(t)
	// The help is read first (without a model) to script the call it shows.
	e0 := newRunEnv(t, llmtest.New(t), llmtest.FormatAnthropic)
	installExtensions(t, e0.home)
	help := e0.run(t, "", "exec", "mcp:docs:patch --help")
	_, example, ok := strings.Cut(help.stdout, "\nExample:\n  ")
	if help.code != 0 || !ok {
		t.Fatalf("help: exit %d\n%s%s", help.code, help.stdout, help.stderr)
	}
	example = strings.TrimSpace(example)
	srv := llmtest.New(t,
		llmtest.BashTurn("i", "mcp:docs:image"),
		llmtest.BashTurn("p", example),
		llmtest.TextTurn("done"),
	)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	installExtensions(t, e.home)
	r := e.run(t, "", "run", "look at the picture")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "done" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	tr, ok := reqs[1].ToolResult("i-1")
	if !ok {
		t.Fatal("no result for the image call")
	}
	want := mcptest.PNG()
	if len(tr.Images) != 1 || tr.Images[0].MediaType != "image/png" || !bytes.Equal(tr.Images[0].Data, want) {
		t.Fatalf("tool result images = %+v, want the server's png", tr.Images)
	}
	if !strings.Contains(tr.Content, "[image: image/png, ") || !strings.Contains(tr.Content, "caption") {
		t.Errorf("tool result text = %q", tr.Content)
	}
	// The image is kept in the history: the next request still carries it.
	if tr2, _ := reqs[2].ToolResult("i-1"); len(tr2.Images) != 1 {
		t.Errorf("the image was dropped from the history on the next request")
	}
	pr, ok := reqs[2].ToolResult("p-1")
	if !ok || pr.IsError || !strings.Contains(pr.Content, `"edits":[{"newText":"example new text","oldText":"example old text"}]`) {
		t.Errorf("the help's example %q gave %+v", example, pr)
	}
}
