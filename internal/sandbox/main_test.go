package sandbox

import (
	"fmt"
	"os"
	"testing"
)

// TestMain moves the tests' own temp directories (t.TempDir) out of /tmp
// when it can: the sandbox mounts its private temp directory over /tmp, so
// a directory there that is not a writable root is invisible to commands,
// while most tests need "a directory outside the sandbox" that commands
// see but cannot write. The red-team tests put workspaces under /tmp on
// purpose.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if base, err := os.MkdirTemp("/var/tmp", "synapse-sandbox-test-"); err == nil {
		defer os.RemoveAll(base)
		if err := os.Setenv("TMPDIR", base); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}
