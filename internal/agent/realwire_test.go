package agent

import (
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
)

// sentFirstUserText reads the first user text from a real-wire provider's server.
func sentFirstUserText(t *testing.T, p llm.Provider) string {
	t.Fatalf("no server behind provider %s", p.Name())
	return ""
}
