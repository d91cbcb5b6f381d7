package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxWithRealShell runs the manager the app builds over the real
// persistent shell inside real bubblewrap.
func TestSandboxWithRealShell(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("bwrap is required under CI")
		}
		t.Skip("bwrap not installed")
	}
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "sandbox.json"), []byte(`{"enabled": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := New(func(k string) string {
		switch k {
		case "SYNAPSE_HOME":
			return home
		case "HOME":
			return home
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.NewSandbox(SandboxOptions{Cwd: ws})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	ctx := context.Background()
	if !m.Enabled() {
		t.Fatalf("sandbox off: %s", m.Status().Reason)
	}
	res, err := m.Execute(ctx, "cd /tmp && export FOO=bar", "")
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	res, err = m.Execute(ctx, `echo "$(pwd) $FOO"; touch /etc/synapse-app-test`, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "/tmp bar\n" && res.Stdout != "/tmp bar" {
		t.Fatalf("stdout = %q", res.Stdout)
	}
	if !res.Blocked || res.BlockedResource != "/etc/synapse-app-test" {
		t.Fatalf("write outside not reported blocked: %+v", res)
	}
	if m.Cwd() != "/tmp" {
		t.Fatalf("Cwd = %q", m.Cwd())
	}
	// A shell that dies under a command is reported, not re-run (issue 23),
	// and the next command gets a new one.
	marker := filepath.Join(ws, "crashed")
	res, err = m.Execute(ctx, "if [ ! -e "+marker+" ]; then touch "+marker+"; kill -9 $$; fi; echo survived", "")
	if err != nil || strings.Contains(res.Stdout, "survived") || !strings.Contains(res.Stderr, "the shell died while this command ran") {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if res, err = m.Execute(ctx, "echo next", ""); err != nil || strings.TrimSpace(res.Stdout) != "next" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
}

// Every Bash tool runs its native commands through an executor (the sandbox
// manager): there is no unsandboxed fallback shell to build one without.
func TestNewToolNeedsAnExecutor(t *testing.T) {
	a, err := New(func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if tl, err := a.NewTool(context.Background(), ToolSetup{Cwd: t.TempDir()}); err == nil || tl != nil {
		t.Fatalf("NewTool without Exec = %v, %v; want an error", tl, err)
	}
}
