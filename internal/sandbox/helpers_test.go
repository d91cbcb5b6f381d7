package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// requireBwrap skips without bubblewrap, except under CI where it fails.
func requireBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is required under CI: %v", err)
		}
		t.Skipf("bwrap not installed: %v", err)
	}
	if err := probePlatform(context.Background(), "linux", nil); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap cannot sandbox under CI: %v", err)
		}
		t.Skipf("bwrap cannot sandbox here: %v", err)
	}
}

// fixture is a manager with the real local provider, bwrap and the real
// shell over a temp workspace; home is a fake user home for the secrets.
type fixture struct {
	ws, home, tmp, cfgPath string
	m                      *Manager
}

func newFixture(t testing.TB, mutate func(*ManagerOptions)) *fixture {
	t.Helper()
	requireBwrap(t)
	root := t.TempDir()
	f := &fixture{ws: filepath.Join(root, "work space"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{f.ws, f.home, f.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.cfgPath = filepath.Join(f.home, ".synapse", "sandbox.json")
	opts := ManagerOptions{
		ConfigPath:   f.cfgPath,
		Config:       Config{Enabled: true, Provider: "local"},
		Cwd:          f.ws,
		Env:          []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "LANG=C"},
		TempDir:      f.tmp,
		StartSession: realShell,
	}
	if mutate != nil {
		mutate(&opts)
	}
	m, err := NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	t.Cleanup(func() { _ = m.Shutdown() })
	return f
}

func (f *fixture) run(t testing.TB, c string) command.Result {
	t.Helper()
	res, err := f.m.Execute(context.Background(), c, "")
	if err != nil {
		t.Fatalf("execute %q: %v", c, err)
	}
	res.Stdout = strings.TrimRight(res.Stdout, "\n")
	return res
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// requireTool skips without a program, except under CI where it fails.
func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
}
