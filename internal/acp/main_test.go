package acp

import (
	"os"
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// TestMain lets the test binary stand in for synapse as the Landlock
// launcher (the sandbox re-executes the running binary), so that these
// tests run under either backend (make test-landlock).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.LauncherCommand {
		os.Exit(sandbox.Launch(os.Args[2:]))
	}
	os.Exit(m.Run())
}
