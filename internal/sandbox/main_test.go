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
//
// The test binary is also the Landlock launcher (as synapse is), so that
// the Landlock backend runs for real here.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == LauncherCommand {
		os.Exit(Launch(os.Args[2:]))
	}
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
