package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// Files passed to SandboxWrap (Synapse's own settings.json with its keys) are
// unreadable to the engine, while the rest of the file system stays readable.
func TestSandboxWrapHidesAgentSecrets(t *testing.T) {
	testutil.RequireBwrap(t)
	// Not under /tmp: the engine gets a private /tmp of its own.
	dir, err := os.MkdirTemp("/var/tmp", "synapse-hide-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	secret := filepath.Join(dir, "settings.json")
	visible := filepath.Join(dir, "other.txt")
	for _, f := range []string{secret, visible} {
		if err := os.WriteFile(f, []byte("sk-secret-value"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	session := t.TempDir()
	wrap := SandboxWrap(t.TempDir(), os.Environ(), secret)
	for _, tc := range []struct {
		path string
		want bool
	}{{secret, false}, {visible, true}} {
		argv, err := wrap([]string{session}, session, []string{"/bin/cat", tc.path})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if got := strings.Contains(string(out), "sk-secret-value"); got != tc.want {
			t.Errorf("cat %s inside the engine sandbox: readable=%v, want %v (output %q)", tc.path, got, tc.want, out)
		}
	}
}
