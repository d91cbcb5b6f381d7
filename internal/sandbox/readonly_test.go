package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// A read-only sandbox (task:explore) gets a private /tmp instead of the host
// temp directory, so nothing of the host is writable, not even a project that
// lives under the host temp directory. The in-process check agrees.
func TestReadOnlySandboxPrivateTmp(t *testing.T) {
	requireBackend(t)
	// The project, the host temp dir and the home all live under one host
	// temp directory: the case where the old policy left the project writable.
	// It is not under /tmp: writable sandboxes of tests running at the same
	// time (other packages) scan /tmp and make .git/hooks in repositories
	// there, which would muddle the check below.
	hostTmp, err := os.MkdirTemp("/var/tmp", "synapse-readonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(hostTmp) })
	proj := filepath.Join(hostTmp, "proj")
	home := filepath.Join(hostTmp, "home")
	writeFile(t, filepath.Join(proj, "README"), "hello from the project")
	writeFile(t, filepath.Join(proj, ".git", "config"), "[core]")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(ManagerOptions{
		Config:       Config{Enabled: true, Provider: "local"},
		Cwd:          proj,
		Env:          []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C", "TMPDIR=" + hostTmp},
		TempDir:      hostTmp,
		ReadOnly:     true,
		StartSession: realShell,
		Launcher:     testLauncher(t),
		Backend:      testBackend(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	run := func(c string) (string, string, int, bool) {
		t.Helper()
		res, err := m.Execute(t.Context(), c, "")
		if err != nil {
			t.Fatalf("execute %q: %v", c, err)
		}
		return strings.TrimSpace(res.Stdout), res.Stderr, res.ExitCode, res.Blocked
	}

	// Reading the project works.
	if out, errOut, code, _ := run("cat README"); code != 0 || out != "hello from the project" {
		t.Fatalf("read the project: %d %q %q", code, out, errOut)
	}
	// Writes to the project fail: files, new files, directories, sed -i,
	// git metadata.
	for _, tt := range []struct{ cmd, resource string }{
		{"echo x > README", filepath.Join(proj, "README")},
		{"echo x > new.txt", filepath.Join(proj, "new.txt")},
		{"mkdir " + proj + "/d", filepath.Join(proj, "d")},
		{"sed -i s/hello/bye/ README", proj}, // sed names its temp file; the directory is the resource
		{"echo x >> .git/config", filepath.Join(proj, ".git", "config")},
		{"echo x > " + home + "/planted", ""}, // not in the sandbox at all (under the private /tmp): no such directory
	} {
		res, err := m.Execute(t.Context(), tt.cmd, "")
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case res.ExitCode == 0:
			t.Errorf("%q succeeded in a read-only sandbox", tt.cmd)
		case tt.resource != "" && (!res.Blocked || res.BlockedResource != tt.resource || !strings.Contains(res.BlockedReason, "read-only")):
			t.Errorf("%q: blocked=%v resource %q reason %q (stderr %q); want blocked on %s as read-only",
				tt.cmd, res.Blocked, res.BlockedResource, res.BlockedReason, res.Stderr, tt.resource)
		}
	}
	// The private /tmp is writable, TMPDIR points at it, and the host's
	// temp files are not in it.
	out, errOut, code, _ := run(`echo "$TMPDIR"; f=$(mktemp) && echo scratch > "$f" && cat "$f"`)
	wantTmp := "/tmp"
	if underLandlock() {
		wantTmp = strings.SplitN(out, "\n", 2)[0] // a scratch directory of the backend (no /tmp remap)
		if !within(wantTmp, hostTmp) || wantTmp == hostTmp {
			t.Errorf("TMPDIR %q is not a scratch directory under %s", wantTmp, hostTmp)
		}
	}
	if code != 0 || out != wantTmp+"\nscratch" {
		t.Errorf("private tmp: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	marker := filepath.Join(hostTmp, "host-marker")
	writeFile(t, marker, "host")
	before := hostOnly(snapshot(t, hostTmp))
	run("echo planted > " + marker + " 2>/dev/null; echo x > " + hostTmp + "/planted 2>/dev/null; true")
	// The host's /tmp is not the sandbox's.
	hostDir, err := os.MkdirTemp("/tmp", "synapse-host-only-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(hostDir) })
	hostFile := filepath.Join(hostDir, "host-only")
	writeFile(t, hostFile, "host")
	if out, _, _, _ := run("cat " + hostFile + " 2>/dev/null; true"); out != "" {
		t.Errorf("host /tmp files are visible in the private /tmp: %q", out)
	}
	if d := diffSnapshots(before, hostOnly(snapshot(t, hostTmp))); len(d) != 0 {
		t.Errorf("the read-only sandbox changed the host: %v", d)
	}
	// Creating the sandbox left the project as it was (no hooks directory
	// made for mounting over, as a writable workspace gets).
	if _, err := os.Stat(filepath.Join(proj, ".git", "hooks")); err == nil {
		t.Error("creating a read-only sandbox changed the project (.git/hooks created)")
	}

	// The in-process check denies writes everywhere, the temp dirs included.
	for _, p := range []string{filepath.Join(proj, "README"), "new.txt", filepath.Join(hostTmp, "x"), "/tmp/x", filepath.Join(os.TempDir(), "x")} {
		blocked, reason, resource := m.CheckPath(p, true)
		if !blocked || !strings.Contains(reason, "read-only") || resource == "" {
			t.Errorf("CheckPath(%s, write) = %v %q %q, want blocked as read-only", p, blocked, reason, resource)
		}
	}
	if blocked, _, _ := m.CheckPath("README", false); blocked {
		t.Error("CheckPath refused reading the project")
	}
}

// hostOnly drops the agent's own sandbox state directory (made by the agent,
// outside the sandbox) from a snapshot.
func hostOnly(snap map[string]string) map[string]string {
	for k := range snap {
		if strings.Contains(k, "synapse-sandbox-") {
			delete(snap, k)
		}
	}
	return snap
}

// Writes to git hooks and config fail inside a writable workspace (read-only
// mounts; renames over the bind-mounted config fail with EBUSY) and are
// reported as blocked with reason and resource; in-process writes agree.
func TestGitMetadataWritesReportedBlocked(t *testing.T) {
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	if out, err := exec.Command("git", "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cfg := filepath.Join(f.ws, ".git", "config")
	hook := filepath.Join(f.ws, ".git", "hooks", "pre-commit")
	before, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ cmd, resource string }{
		{"git config core.hooksPath /tmp/evil", cfg},
		{"echo '[x]' >> .git/config", cfg},
		{"sed -i s/core/evil/ .git/config", cfg},
		{"echo x > f && mv f .git/config", cfg},
		{"rm .git/config", cfg},
		{"printf '#!/bin/sh\\n' > .git/hooks/pre-commit", hook},
	}
	for _, tt := range tests {
		res := f.run(t, tt.cmd)
		// Under Landlock the write happens and is undone after the command
		// (the repository guard), so the command itself may succeed.
		if (res.ExitCode == 0 && !underLandlock()) || !res.Blocked || res.BlockedResource != tt.resource || !strings.Contains(res.BlockedReason, "git and Mercurial control files") {
			t.Errorf("%q: exit %d blocked=%v resource %q reason %q (stderr %q); want blocked on %s",
				tt.cmd, res.ExitCode, res.Blocked, res.BlockedResource, res.BlockedReason, res.Stderr, tt.resource)
		}
	}
	if after, _ := os.ReadFile(cfg); string(after) != string(before) {
		t.Errorf(".git/config changed:\n%s", after)
	}
	for _, p := range []string{".git/config", ".git/hooks/pre-commit", cfg} {
		if blocked, reason, _ := f.m.CheckPath(p, true); !blocked || !strings.Contains(reason, "git and Mercurial control files") {
			t.Errorf("CheckPath(%s, write) = %v %q, want blocked", p, blocked, reason)
		}
	}
	if blocked, _, _ := f.m.CheckPath(".git/HEAD", true); blocked {
		t.Error("CheckPath refused .git/HEAD: only hooks and config are protected")
	}
	if res := f.run(t, "git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m ok && echo committed"); res.Stdout != "committed" {
		t.Errorf("ordinary git work failed: %+v", res)
	}
}
