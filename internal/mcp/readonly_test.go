package mcp

import (
	"context"
	"testing"
)

// TestReadOnlyFollowsTheServersAnnotations: against the real test server,
// tools annotated readOnlyHint (echo, add), listings and help are
// read-only, and so are the resource and prompt commands; other tools,
// unknown ones and unknown servers are not.
func TestReadOnlyFollowsTheServersAnnotations(t *testing.T) {
	_, h := newManager(t, Options{}, stdioServer(t, "test"))
	ctx := context.Background()
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"mcp:test:echo hi", true},
		{"mcp:test:add 1 2", true},
		{"mcp:test:patch --path f --edits '[]'", false},
		{"mcp:test:crash", false},
		{"mcp:test:patch --help", true},
		{"mcp:test", true},
		{"mcp:", true},
		{"mcp:test:nosuch", false},
		{"mcp:other:echo hi", false},
		{"mcp:test:@resources", true},
		{"mcp:test:@read mem://docs/readme", true},
		{"mcp:test:@read 'mem://notes/{id}' id=1", true},
		{"mcp:test:@prompts", true},
		{"mcp:test:@prompt greet name=a", true},
	} {
		if got := h.ReadOnly(ctx, tt.line); got != tt.want {
			t.Errorf("ReadOnly(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
