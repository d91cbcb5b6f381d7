package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/headless"
	"github.com/synapse-agent/synapse/internal/mcp"
)

// mcp_set_servers entries: a process or remote server, the host's
// in-process one, and what is refused; a configuration that changed is
// another server (restarted), the host's in-process servers are alike.
func TestDynamicMCPConfig(t *testing.T) {
	h := &sdkHost{ctl: headless.NewControl(&strings.Builder{}, &strings.Builder{}, headless.Handlers{})}
	tests := []struct {
		raw, kind, err string
	}{
		{raw: `{"command":"srv","args":["-v"]}`, kind: mcp.KindStdio},
		{raw: `{"type":"http","url":"http://127.0.0.1:1/mcp"}`, kind: mcp.KindHTTP},
		{raw: `{"type":"sdk","name":"calc"}`, kind: mcp.KindHost},
		{raw: `{"type":"stdio"}`, err: "neither a command nor a url"},
		{raw: `{"command":3}`, err: "not an MCP server configuration"},
	}
	for _, tc := range tests {
		c, err := h.dynamicConfig("s", json.RawMessage(tc.raw))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || c.Name != "s" || c.Kind() != tc.kind || c.File != "mcp_set_servers" {
			t.Errorf("%s: %+v (kind %s), %v", tc.raw, c, c.Kind(), err)
		}
	}
	if _, err := (&sdkHost{}).dynamicConfig("s", json.RawMessage(`{"type":"sdk"}`)); err == nil {
		t.Error("an in-process server without the control protocol was accepted")
	}

	a := mcp.ServerConfig{Name: "s", Command: "srv", Args: []string{"-v"}, File: "mcp_set_servers"}
	b := a
	b.File = "other"
	if !sameServer(a, b) {
		t.Error("the same server differs by its file")
	}
	b.Args = []string{"-q"}
	if sameServer(a, b) {
		t.Error("changed arguments are the same server")
	}
	host := mcp.ServerConfig{Name: "s", Host: h.ctl}
	if !sameServer(host, host) || sameServer(host, a) {
		t.Error("in-process servers compare wrong")
	}
}
