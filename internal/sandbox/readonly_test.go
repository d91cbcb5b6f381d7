package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A read-only sandbox (task:explore) gets a private /tmp instead of the host
// temp directory, so nothing of the host is writable, not even a project that
// lives under the host temp directory. The in-process check agrees.
func TestReadOnlySandboxPrivateTmp(t *testing.T) {
	requireBwrap(t)
	// The project, the host temp dir and the home all live under one host
	// temp directory: the case where the old policy left the project writable.
	hostTmp := t.TempDir()
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
	for _, c := range []string{
		"echo x > README",
		"echo x > new.txt",
		"mkdir " + proj + "/d",
		"sed -i s/hello/bye/ README",
		"echo x >> .git/config",
		"echo x > " + home + "/planted",
	} {
		if _, errOut, code, _ := run(c); code == 0 {
			t.Errorf("%q succeeded in a read-only sandbox (stderr %q)", c, errOut)
		}
	}
	// The private /tmp is writable, TMPDIR points at it, and the host's
	// temp files are not in it.
	out, errOut, code, _ := run(`echo "$TMPDIR"; f=$(mktemp) && echo scratch > "$f" && cat "$f"`)
	if code != 0 || out != "/tmp\nscratch" {
		t.Errorf("private tmp: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	marker := filepath.Join(hostTmp, "host-marker")
	writeFile(t, marker, "host")
	before := hostOnly(snapshot(t, hostTmp))
	out, _, _, _ = run("cat " + marker + " 2>/dev/null; echo planted > " + marker + " 2>/dev/null; echo x > " + hostTmp + "/planted 2>/dev/null; true")
	if strings.HasPrefix(hostTmp, PrivateTmp+"/") && out != "" {
		t.Errorf("host temp files are visible in the private /tmp: %q", out)
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
