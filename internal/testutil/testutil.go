// Package testutil holds the requirement checks tests in several packages
// share. Tests use real tools (bash, bubblewrap, python3, …): on a developer
// machine a missing one skips the test with the reason, but under CI
// (CI=true) every requirement is mandatory and the test fails instead.
// Import it from _test.go files only.
package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// SkipOrFail skips t with the formatted reason, or fails it under CI.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("required under CI (CI=true): %s", msg)
	}
	t.Skip(msg)
}

// RequireTool returns the path of the program name found on PATH; without
// it the test is skipped, or fails under CI.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		SkipOrFail(t, "%s not installed: %v", name, err)
	}
	return p
}

// RequireBwrap checks that bubblewrap is installed and can sandbox here (it
// runs /bin/true with every namespace unshared, as the sandbox does);
// otherwise the test is skipped, or fails under CI.
func RequireBwrap(t testing.TB) {
	t.Helper()
	path := RequireTool(t, "bwrap")
	out, err := exec.Command(path, "--die-with-parent", "--unshare-all", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "/bin/true").CombinedOutput()
	if err != nil {
		SkipOrFail(t, "bwrap cannot sandbox here: %v: %s", err, out)
	}
}

// UnderLandlock reports whether the tests run under the Landlock backend
// (SYNAPSE_SANDBOX_BACKEND=landlock, set by make test-landlock, which runs
// them where bubblewrap cannot start).
func UnderLandlock() bool { return os.Getenv("SYNAPSE_SANDBOX_BACKEND") == "landlock" }

// RequireSandbox checks that the backend the tests run under can sandbox
// here: bubblewrap, or under make test-landlock the Landlock backend (the
// product chooses it itself there, as bubblewrap cannot start).
func RequireSandbox(t testing.TB) {
	t.Helper()
	if UnderLandlock() {
		return
	}
	RequireBwrap(t)
}

// WriteFile writes content to path (mode 0644), creating its directories;
// any failure fails the test.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// OutsideTmp returns a new directory, removed after the test, that is not
// under /tmp: the sandbox mounts its private temp directory over /tmp, so
// a directory there (t.TempDir) is invisible to sandboxed commands rather
// than merely read-only. Tests that need "a place outside the sandbox that
// commands can see" use this one. It falls back to t.TempDir when
// /var/tmp is not writable.
func OutsideTmp(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "synapse-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// MapEnv adapts a map to a getenv func (config.Getenv), for a test's own
// environment.
func MapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// NodeModules returns the node_modules folder of testdata/npm/<name> (set up
// by scripts/node-deps.sh, which `make test` runs), after checking that
// node is installed and that module (a package name such as
// "@anthropic-ai/claude-agent-sdk") is there; otherwise the test is skipped,
// or fails under CI.
func NodeModules(t testing.TB, name, module string) string {
	t.Helper()
	RequireTool(t, "node")
	dir, err := repoRoot()
	if err != nil {
		SkipOrFail(t, "cannot find the repository root: %v", err)
	}
	nm := filepath.Join(dir, "testdata", "npm", name, "node_modules")
	if _, err := os.Stat(filepath.Join(nm, filepath.FromSlash(module), "package.json")); err != nil {
		SkipOrFail(t, "npm package %s is not installed in %s: run scripts/node-deps.sh (make test does)", module, nm)
	}
	return nm
}

// repoRoot is the nearest parent of the working directory (a test's package
// folder) that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
