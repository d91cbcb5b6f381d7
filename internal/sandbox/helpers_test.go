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

// testBackend is the backend the sandbox tests run under:
// SYNAPSE_SANDBOX_BACKEND=landlock runs them under Landlock (make
// test-landlock), anything else under bubblewrap.
func testBackend() string {
	if os.Getenv("SYNAPSE_SANDBOX_BACKEND") == BackendLandlock {
		return BackendLandlock
	}
	return BackendBwrap
}

// underLandlock reports whether the tests run under the Landlock backend.
func underLandlock() bool { return testBackend() == BackendLandlock }

// skipUnderLandlock skips an attack the Landlock backend cannot stop by
// design; why names the line of docs/security.md's table for it.
func skipUnderLandlock(t testing.TB, why string) {
	t.Helper()
	if underLandlock() {
		t.Skipf("not enforced by the Landlock backend (docs/security.md, \"What each backend enforces\"): %s", why)
	}
}

// testLauncher is this test binary, which TestMain turns into the
// Landlock launcher.
func testLauncher(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// requireBackend skips (fails under CI) when the test backend cannot run.
func requireBackend(t testing.TB) {
	t.Helper()
	if underLandlock() {
		if _, err := probeLandlock(context.Background(), testLauncher(t)); err != nil {
			testutil.SkipOrFail(t, "Landlock cannot sandbox here: %v", err)
		}
		return
	}
	requireBwrap(t)
}

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
	requireBackend(t)
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
		Config:       Config{Enabled: true, Provider: testBackend()},
		Launcher:     testLauncher(t),
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
