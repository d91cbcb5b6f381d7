package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestSandboxExecAndStatusBinary(t *testing.T) {
	testutil.RequireBwrap(t)
	bin := synapseBin // built once, static, by TestMain
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "work space")
	outside := t.TempDir()
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("TOPSECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "sandbox.json"), []byte(`{"enabled": true, "future": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The system temp dir is writable inside; give the binary its own so
	// that `outside` (under /tmp) is outside the policy.
	tmp := t.TempDir()
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "SYNAPSE_HOME="+home, "HOME="+home, "TMPDIR="+tmp)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}

	out, errOut, code := run("sandbox", "exec", "--", "sh", "-c", "echo inside; cat .env; echo x > '"+outside+"/f'; echo ok > in.txt; echo t > \"$TMPDIR/t\" && echo tmp=$TMPDIR; exit 7")
	if !strings.Contains(out, "tmp=/tmp") {
		t.Errorf("sandbox exec gave no private writable /tmp: %q %q", out, errOut)
	}
	if code != 7 || !strings.Contains(out, "inside") || strings.Contains(out+errOut, "TOPSECRET") {
		t.Fatalf("code=%d out=%q err=%q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Fatal("sandbox exec wrote outside the whitelist")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "in.txt")); string(b) != "ok\n" {
		t.Fatalf("workspace write failed: %q", b)
	}

	// No command: say what to give, as synapse exec does (cobra's own
	// "requires at least 1 arg(s), only received 0" named nothing).
	if _, errOut, code := run("sandbox", "exec"); code != 2 || !strings.Contains(errOut, "synapse sandbox exec -- ") {
		t.Errorf("sandbox exec without a command: code %d stderr %q", code, errOut)
	}

	out, _, code = run("sandbox", "status")
	for _, want := range []string{"Sandbox: ON (bubblewrap", "enabled in", ws, "Network: blocked", "**/.env"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status lacks %q (code %d):\n%s", want, code, out)
		}
	}
	out, _, _ = run("sandbox", "status", "--json")
	var st struct {
		Enabled bool   `json:"enabled"`
		Reason  string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || !st.Enabled {
		t.Fatalf("json status: %v %s", err, out)
	}

	// Broken sandbox.json: a warning naming file and field, defaults used, file kept.
	if err := os.WriteFile(filepath.Join(home, "sandbox.json"), []byte(`{"enabled": "yes"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = run("sandbox", "status")
	if !strings.Contains(out, "sandbox.json") || !strings.Contains(out, `"enabled"`) {
		t.Fatalf("no warning for a wrong type:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(home, "sandbox.json")); string(b) != `{"enabled": "yes"}` {
		t.Fatalf("sandbox.json rewritten: %s", b)
	}

	// No bwrap on PATH: the Landlock backend takes over (issue 24); the
	// command runs, confined to the workspace.
	cmd := exec.Command(bin, "sandbox", "exec", "--", "/bin/sh", "-c", `echo in > ran; echo t > "$TMPDIR/t" && echo "private tmp: $TMPDIR"; echo out > /etc/synapse-landlock-test`)
	cmd.Dir = ws
	cmd.Env = []string{"SYNAPSE_HOME=" + home, "HOME=" + home, "PATH=" + t.TempDir()}
	b, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "/etc/synapse-landlock-test") {
		t.Fatalf("the write to /etc was not refused: err=%v out=%s", err, b)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "ran")); string(got) != "in\n" {
		t.Fatalf("the workspace write under Landlock: %q (out %s)", got, b)
	}
	// Its own temp directory, writable, and gone afterwards.
	_, priv, ok := strings.Cut(string(b), "private tmp: ")
	priv, _, _ = strings.Cut(priv, "\n")
	if !ok || !strings.Contains(priv, "synapse-scratch-") {
		t.Fatalf("no private TMPDIR under Landlock:\n%s", b)
	}
	if _, err := os.Stat(priv); err == nil {
		t.Errorf("the private temp directory %s was left behind", priv)
	}
	if _, err := os.Stat("/etc/synapse-landlock-test"); err == nil {
		_ = os.Remove("/etc/synapse-landlock-test")
		t.Fatal("a command wrote /etc without bwrap")
	}
}
