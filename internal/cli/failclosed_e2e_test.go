package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestSandboxFailsClosedWithoutBackend: where neither bubblewrap nor
// Landlock can run (a seccomp filter refusing user namespaces and the
// Landlock calls, as an old kernel or a strict container profile does),
// `sandbox status` fails and every command is refused with the reason and
// the fix (seed 000: fail closed, never degrade); with "enabled": false the
// user's explicit opt-out, the command runs.
func TestSandboxFailsClosedWithoutBackend(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux backends only")
	}
	testutil.RequireTool(t, "bash")
	// Everything the unprivileged user (nobody, when the test runs as
	// root) touches lives in world-readable directories outside /tmp.
	base := testutil.OutsideTmp(t)
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	nouserns := filepath.Join(base, "nouserns")
	if out, err := exec.Command("go", "build", "-o", nouserns, "github.com/synapse-agent/synapse/scripts/nouserns").CombinedOutput(); err != nil {
		t.Fatalf("build nouserns: %v\n%s", err, out)
	}
	bin := filepath.Join(base, "synapse")
	data, err := os.ReadFile(synapseBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	home, ws := filepath.Join(base, "home"), filepath.Join(base, "ws")
	for _, d := range []string{home, ws} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		c := exec.Command(nouserns, append([]string{"-no-landlock", "--", bin}, args...)...)
		c.Dir = ws
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + filepath.Join(home, ".synapse"), "LC_ALL=C"}
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	out, code := run("sandbox", "status")
	if code != 1 || !strings.Contains(out, "UNAVAILABLE") {
		t.Errorf("sandbox status with no backend: exit %d (want 1)\n%s", code, out)
	}
	out, code = run("exec", "echo ran > marker")
	if code == 0 || !strings.Contains(out, "not run") || !strings.Contains(out, `"enabled": false`) {
		t.Errorf("a command with no backend: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "marker")); err == nil {
		t.Fatal("the command ran without a sandbox")
	}

	testutil.WriteFile(t, filepath.Join(home, ".synapse", "sandbox.json"), `{"enabled": false}`)
	if err := os.Chmod(filepath.Join(home, ".synapse"), 0o777); err != nil {
		t.Fatal(err)
	}
	if out, code = run("exec", "echo ran > marker"); code != 0 {
		t.Errorf("with the sandbox turned off: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "marker")); string(b) != "ran\n" {
		t.Errorf("with the sandbox turned off the command did not run: %q", b)
	}
}
