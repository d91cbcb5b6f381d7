// Package sandboxtest lets a package's test binary stand in for synapse as
// the Landlock launcher (the sandbox re-executes the running binary to
// restrict itself), so that its tests run under either backend (make
// test-landlock). Import it from _test.go files only.
package sandboxtest

import (
	"os"
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// Main is a TestMain: it runs the launcher when the binary was started as
// one, else the tests.
func Main(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherCommand {
		os.Exit(sandbox.Launch(os.Args[2:]))
	}
	os.Exit(m.Run())
}
