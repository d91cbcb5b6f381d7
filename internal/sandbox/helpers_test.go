package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// requireBwrap skips without bubblewrap, except under CI where it fails.
func requireBwrap(t testing.TB) {
	t.Helper()
	testutil.RequireTool(t, "bwrap")
	// The package's own probe, so a test skips exactly when the manager would
	// report the sandbox unsupported.
	if err := probePlatform(context.Background(), "linux", nil); err != nil {
		testutil.SkipOrFail(t, "bwrap cannot sandbox here: %v", err)
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
