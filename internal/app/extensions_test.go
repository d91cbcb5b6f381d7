package app

import (
	"context"
	"fmt"
	"github.com/synapse-agent/synapse/internal/testutil"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/sandbox"
)

func requireTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI", name)
		}
		t.Skipf("%s not installed", name)
	}
}

// copyDir copies the skills package's test skills (real folders with Python
// and shell scripts) into dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// buildTestServer builds the stdio MCP test server (internal/mcp/mcptest).
func buildTestServer(t *testing.T) string {
	t.Helper()
	requireTool(t, "go")
	bin := filepath.Join(t.TempDir(), "mcptestserver")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/synapse-agent/synapse/internal/mcp/mcptest/mcptestserver").CombinedOutput()
	if err != nil {
		t.Fatalf("build the MCP test server: %v\n%s", err, out)
	}
	return bin
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func testApp(t *testing.T, home string) *App {
	t.Helper()
	a, err := New(func(k string) string {
		switch k {
		case "SYNAPSE_HOME", "HOME":
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestExtensionsUnderTheRealSandbox wires everything from files as a user
// would: skills in $SYNAPSE_HOME/skills, MCP servers in mcp_servers.json (an
// HTTP one and stdio ones run under bubblewrap through sandbox.WrapArgv), a
// broken server and a broken project file, sandbox.json enabled.
func TestExtensionsUnderTheRealSandbox(t *testing.T) {
	requireTool(t, "bwrap")
	requireTool(t, "python3")
	bin := buildTestServer(t)
	home := t.TempDir()
	cwd := t.TempDir()
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": true}`)
	copyDir(t, filepath.Join("..", "skills", "testdata", "skills"), filepath.Join(home, "skills"))

	hs := httptest.NewServer(mcptest.HTTPHandler(func() {}))
	defer hs.Close()
	writeTestFile(t, filepath.Join(home, "mcp", "mcp_servers.json"), fmt.Sprintf(`{"mcpServers": {
		"web": {"url": %q},
		"local": {"command": %q},
		"localnet": {"command": %q, "sandbox": {"network": true}},
		"broken": {"command": "synapse-no-such-server"}
	}}`, hs.URL, bin, bin))
	writeTestFile(t, filepath.Join(cwd, "mcp_servers.json"), `{"mcpServers": {`)

	a := testApp(t, home)
	ctx := context.Background()
	// Generous: a loaded CI machine may start three servers under bwrap slowly.
	ext, err := a.Extensions(ctx, cwd, ExtensionOptions{StartTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	report := strings.Join(ext.Report(), "\n")
	for _, want := range []string{
		"MCP: loaded 33 tools from 3 servers",
		`MCP server "broken" failed to start: command "synapse-no-such-server" not found on PATH`,
		filepath.Join(cwd, "mcp_servers.json") + ": invalid JSON",
		"skills: ",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	h := ext.Handlers()
	run := func(fam router.Family, line string) string {
		t.Helper()
		r := h[fam].Run(ctx, line)
		if r.ExitCode != 0 {
			t.Fatalf("%s: exit %d\n%s%s", line, r.ExitCode, r.Stdout, r.Stderr)
		}
		return r.Stdout
	}

	out := run(router.FamilySearch, "command:search pdf")
	for _, want := range []string{"skill:load pdf-tools", "skill:pdf-tools:extract", "mcp:web:pdf_to_text", "mcp:local:pdf_to_text"} {
		if !strings.Contains(out, want) {
			t.Errorf("command:search pdf lacks %s:\n%s", want, out)
		}
	}
	if out := run(router.FamilySearch, "command:search --type=mcp pdf"); strings.Contains(out, "skill:") {
		t.Errorf("--type=mcp shows skills:\n%s", out)
	}

	marker := filepath.Join(cwd, "pwned")
	_ = os.Remove("/tmp/pwned")
	out = run(router.FamilySkillScript, "skill:pdf-tools:count '$(touch /tmp/pwned)' \"`touch "+marker+"`\"")
	if want := "arg=$(touch /tmp/pwned)\narg=`touch " + marker + "`\n" + cwd + "\n"; out != want {
		t.Errorf("script output %q, want %q", out, want)
	}
	for _, p := range []string{marker, "/tmp/pwned"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: an argument was executed", p)
		}
	}
	outside := fmt.Sprintf("/etc/synapse-ext-probe-%d", os.Getpid())
	writeTestFile(t, filepath.Join(home, "skills", "hello", "scripts", "probe.sh"), "touch inside && echo ok-inside\ntouch "+outside+" 2>/dev/null || echo blocked-outside\n")
	if out := run(router.FamilySkillScript, "skill:hello:probe"); out != "ok-inside\nblocked-outside\n" {
		t.Errorf("probe: %q", out)
	}
	if _, err := os.Stat(outside); err == nil {
		os.Remove(outside)
		t.Error("a skill script wrote outside the sandbox")
	}

	ln := testutil.Listener(t)
	if out := run(router.FamilyMCP, "mcp:local:dial "+ln.Addr().String()); !strings.HasPrefix(out, "dial failed") {
		t.Errorf("stdio server without \"network\" reached the network: %q", out)
	}
	if out := run(router.FamilyMCP, "mcp:localnet:dial "+ln.Addr().String()); out != "dial ok\n" {
		t.Errorf("stdio server with network: %q", out)
	}
	if out := run(router.FamilyMCP, "mcp:web:add 40 2"); out != "42\n" {
		t.Errorf("add = %q", out)
	}
	if out := run(router.FamilySkill, "skill:list"); !strings.Contains(out, "pdf-tools (1.2.0)") {
		t.Errorf("skill:list:\n%s", out)
	}
}

// TestExtensionsFollowTheSandboxCwd checks that skill scripts run in the
// current directory of the sandbox manager they are built with, and that
// project skills in .synapse/skills are found.
func TestExtensionsFollowTheSandboxCwd(t *testing.T) {
	home := t.TempDir()
	cwd := t.TempDir()
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": false}`)
	writeTestFile(t, filepath.Join(cwd, ".synapse", "skills", "where", "SKILL.md"), "---\nname: where\ndescription: Print the directory\n---\n")
	writeTestFile(t, filepath.Join(cwd, ".synapse", "skills", "where", "scripts", "pwd.sh"), "# Print the working directory.\npwd\n")
	a := testApp(t, home)
	ext, err := a.Extensions(context.Background(), cwd, ExtensionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if r := ext.Report(); len(r) != 1 || r[0] != "MCP: loaded 0 tools from 0 servers" {
		t.Errorf("report = %q", r)
	}
	if n := ext.Notices(); len(n) != 0 {
		t.Errorf("notices without any MCP server configured = %q, want none", n)
	}
	h := ext.Handlers()[router.FamilySkillScript]
	if r := h.Run(context.Background(), "skill:where:pwd"); r.Stdout != cwd+"\n" {
		t.Errorf("without the agent's sandbox: %q %q", r.Stdout, r.Stderr)
	}
	other := t.TempDir()
	mgr, err := sandbox.NewManager(sandbox.ManagerOptions{Config: sandbox.Config{Enabled: false}, Cwd: other})
	if err != nil {
		t.Fatal(err)
	}
	bound, err := a.Extensions(context.Background(), cwd, ExtensionOptions{Sandbox: mgr})
	if err != nil {
		t.Fatal(err)
	}
	defer bound.Close()
	if r := bound.Handlers()[router.FamilySkillScript].Run(context.Background(), "skill:where:pwd"); r.Stdout != other+"\n" {
		t.Errorf("with the agent's sandbox: %q %q", r.Stdout, r.Stderr)
	}
	if r := ext.Handlers()[router.FamilySearch].Run(context.Background(), "command:search directory"); !strings.Contains(r.Stdout, "skill:where:pwd") {
		t.Errorf("search: %s", r.Stdout)
	}
}

// TestToolsTextListsTheRealCommands: /tools shows each layer with the
// installed skills' scripts and the MCP servers' tools, and a server that
// failed with its error.
func TestToolsTextListsTheRealCommands(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": false}`)
	writeTestFile(t, filepath.Join(home, "skills", "pdf-kit", "SKILL.md"), "---\nname: pdf-kit\ndescription: Inspect PDF files.\n---\n")
	writeTestFile(t, filepath.Join(home, "skills", "pdf-kit", "scripts", "pages.sh"), "# Count the pages of a PDF file.\necho 1\n")
	hs := httptest.NewServer(mcptest.HTTPHandler(func() {}))
	defer hs.Close()
	writeTestFile(t, filepath.Join(home, "mcp", "mcp_servers.json"), fmt.Sprintf(`{"mcpServers": {
		"web": {"url": %q},
		"gone": {"command": "synapse-no-such-server"}
	}}`, hs.URL))
	a := testApp(t, home)
	ext, err := a.Extensions(context.Background(), cwd, ExtensionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	text := toolsText(mgr, ext, a.Config.MCPServersPath())
	for _, want := range []string{
		"Native:      any shell command",
		"without an OS sandbox",
		"Agent Shell: read, write, edit, bash <cmd>, TodoWrite, command:search <words>",
		"task:explore",
		"skills (1 installed",
		"  pdf-kit: Inspect PDF files.\n",
		"skill:pdf-kit:pages",
		"Count the pages of a PDF file.",
		"MCP servers (2 configured)",
		"  web (http, 11 tools)\n",
		"mcp:web:pdf_to_text",
		"Convert a PDF document to plain text.",
		`  gone (stdio): not connected: command "synapse-no-such-server" not found on PATH`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/tools lacks %q:\n%s", want, text)
		}
	}
}

// unsandboxedHome makes a home with $HOME/.synapse/sandbox.json turning the OS
// sandbox off (these tests are about wiring, not the sandbox) and an empty
// project beside it; it returns home, project and the .synapse directory.
func unsandboxedHome(t *testing.T) (home, proj, syn string) {
	t.Helper()
	base := t.TempDir()
	home, proj = filepath.Join(base, "home"), filepath.Join(base, "proj")
	syn = filepath.Join(home, ".synapse")
	writeTestFile(t, filepath.Join(syn, "sandbox.json"), `{"enabled": false}`)
	return home, proj, syn
}

// A server's resource and prompt commands are found by command:search and
// listed by /tools; the MCP handler saves blobs to the OutputDir it is given.
func TestMCPResourceCommandsAreDiscoverable(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": false}`)
	hs := httptest.NewServer(mcptest.HTTPHandler(func() {}))
	defer hs.Close()
	writeTestFile(t, filepath.Join(home, "mcp", "mcp_servers.json"), fmt.Sprintf(`{"mcpServers": {"web": {"url": %q}}}`, hs.URL))
	a := testApp(t, home)
	out := t.TempDir()
	ext, err := a.Extensions(context.Background(), cwd, ExtensionOptions{OutputDir: out})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if ext.Tools.OutputDir != out {
		t.Errorf("MCP handler OutputDir = %q, want %q", ext.Tools.OutputDir, out)
	}
	search := ext.Handlers()[router.FamilySearch]
	for _, tc := range []struct{ query, want string }{
		{"resource read", "mcp:web:@read <uri>"},
		{"resources", "mcp:web:@resources"},
		{"greet", "mcp:web:@prompt greet"},
		{"prompts", "mcp:web:@prompts"},
	} {
		if r := search.Run(context.Background(), "command:search "+tc.query); !strings.Contains(r.Stdout, tc.want) {
			t.Errorf("command:search %s lacks %q:\n%s%s", tc.query, tc.want, r.Stdout, r.Stderr)
		}
	}
	mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown()
	text := toolsText(mgr, ext, a.Config.MCPServersPath())
	for _, want := range []string{"mcp:web:@resources", "mcp:web:@read <uri>", "mcp:web:@prompt greet", "Greet someone."} {
		if !strings.Contains(text, want) {
			t.Errorf("/tools lacks %q:\n%s", want, text)
		}
	}
}
