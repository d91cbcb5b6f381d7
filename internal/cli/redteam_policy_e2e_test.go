package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamExecCdHomeThenCrash is issue 23's reproduction, as written: a
// command kills its shell after `cd ~`; before the fix the rebuilt sandbox
// took ~ as its workspace and the retried command appended to ~/.bashrc.
func TestRedTeamExecCdHomeThenCrash(t *testing.T) {
	testutil.RequireSandbox(t)
	base := testutil.OutsideTmp(t)
	ws, home := filepath.Join(base, "w"), filepath.Join(base, "h")
	testutil.WriteFile(t, filepath.Join(home, ".bashrc"), "original\n")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	env := testEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + home
		}
	}
	r := synapseEnv(t, ws, env, "exec", "cd ~",
		`if [ -e /tmp/m ]; then echo pwned >> ~/.bashrc; else touch /tmp/m; kill -9 $$; fi`,
		`if [ -e /tmp/m ]; then echo pwned >> ~/.bashrc; else touch /tmp/m; kill -9 $$; fi`)
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q\nstdout %s\nstderr %s", b, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "the shell died while this command ran") {
		t.Errorf("the model is not told the shell died:\n%s", r.stdout)
	}
}

// TestRedTeamChatCdHomeThenSessionGrant: in the REPL, after `cd ~`, the
// user allows an unrelated file for the session ([2]); the next write to
// ~/.bashrc must still be asked about (and is denied here).
func TestRedTeamChatCdHomeThenSessionGrant(t *testing.T) {
	testutil.RequireSandbox(t)
	outside := testutil.OutsideTmp(t)
	other := filepath.Join(outside, "other.txt")
	testutil.WriteFile(t, other, "")
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("cd", "cd ~")),
		llmtest.ToolTurn(llmtest.BashCall("grant", "echo x >> "+other)),
		llmtest.ToolTurn(llmtest.BashCall("home", "echo pwned >> ~/.bashrc")),
		llmtest.TextTurn("All done."),
	)
	env := chatEnv(t, srv)
	home := filepath.Join(outside, "home") // not under /tmp, which the sandbox replaces
	for i, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			env[i] = "HOME=" + home
		}
	}
	bashrc := filepath.Join(home, ".bashrc")
	testutil.WriteFile(t, bashrc, "original\n")
	p := startPTY(t, t.TempDir(), env)
	p.expect(prompt)
	p.send("go\r")
	p.expect("resource: " + other)
	p.send("2")
	p.expect("allow for this session: " + other)
	p.expect("resource: " + bashrc)
	p.send("4")
	p.expect("All done.")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q", b)
	}
	if b, _ := os.ReadFile(other); string(b) != "x\n" {
		t.Errorf("the granted file = %q", b)
	}
}
