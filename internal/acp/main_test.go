package acp

import (
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox/sandboxtest"
)

// The test binary is also the Landlock launcher its sandboxes start.
func TestMain(m *testing.M) { sandboxtest.Main(m) }
