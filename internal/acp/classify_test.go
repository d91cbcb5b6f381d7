package acp

import (
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/router"
)

// A call's kind comes from its route; a file command's location is the path
// the agent shell reads from the line.
func TestClassifyByRoute(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		kind sdk.ToolKind
		path string
	}{
		{"read --offset 5 a.txt", sdk.ToolKindRead, "a.txt"},
		{"edit b.go old new", sdk.ToolKindEdit, "b.go"},
		{"TodoWrite '{}'", sdk.ToolKindThink, ""},
		{"task:explore look", sdk.ToolKindThink, ""},
		{"command:search pdf", sdk.ToolKindSearch, ""},
		{"job:start make", sdk.ToolKindExecute, ""},
		{"skill:load x", sdk.ToolKindOther, ""},
		{"mcp:s:t", sdk.ToolKindOther, ""},
		{"rg foo", sdk.ToolKindSearch, ""},
		{"go test", sdk.ToolKindExecute, ""},
	} {
		kind, path := classify(router.Classify(c.cmd), c.cmd)
		if kind != c.kind || path != c.path {
			t.Errorf("classify(%q) = %v, %q; want %v, %q", c.cmd, kind, path, c.kind, c.path)
		}
	}
}
