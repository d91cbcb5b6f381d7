package mcp

import (
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestLoadConfigPrecedenceAndProblems(t *testing.T) {
	home := filepath.Join(t.TempDir(), "mcp", "mcp_servers.json")
	cwd := t.TempDir()
	testutil.WriteFile(t, home, `{"mcpServers": {
		"shared": {"command": "from-home"},
		"homeonly": {"command": "h", "args": ["--token=${TOKEN}", "${MISSING:-fallback}"], "env": {"K": "${TOKEN}"}},
		"remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
		"events": {"url": "http://127.0.0.1:1/sse"},
		"typed": {"type": "sse", "url": "http://127.0.0.1:1/events"},
		"net": {"command": "n", "sandbox": {"network": true}},
		"off": {"command": "x", "disabled": true},
		"both": {"command": "x", "url": "http://x"},
		"neither": {"args": ["x"]},
		"bad:name": {"command": "x"},
		"badtype": {"type": "carrier-pigeon", "command": "x"},
		"badjson": {"command": 42}
	}}`)
	testutil.WriteFile(t, filepath.Join(cwd, ".mcp.json"), `{"mcpServers": {"shared": {"command": "from-dot-mcp"}, "dot": {"command": "d"}}}`)
	testutil.WriteFile(t, filepath.Join(cwd, "mcp_servers.json"), `{"mcpServers": {"shared": {"command": "from-cwd", "cwd": "sub"}}}`)
	getenv := func(k string) string { return map[string]string{"TOKEN": "s3cret"}[k] }

	servers, problems := LoadConfig(ConfigFiles(home, cwd), getenv)
	var names []string
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	if want := []string{"dot", "events", "homeonly", "net", "remote", "shared", "typed"}; !reflect.DeepEqual(names, want) {
		t.Errorf("servers = %v, want %v", names, want)
	}
	if c := servers["shared"]; c.Command != "from-cwd" || c.Cwd != "sub" || c.File != filepath.Join(cwd, "mcp_servers.json") {
		t.Errorf("shared = %+v: ./mcp_servers.json should win", c)
	}
	if c := servers["homeonly"]; !reflect.DeepEqual(c.Args, []string{"--token=s3cret", "fallback"}) || c.Env["K"] != "s3cret" || c.Kind() != KindStdio {
		t.Errorf("homeonly = %+v", c)
	}
	if c := servers["remote"]; c.Headers["Authorization"] != "Bearer s3cret" || c.Kind() != KindHTTP {
		t.Errorf("remote = %+v", c)
	}
	if servers["events"].Kind() != KindSSE || servers["typed"].Kind() != KindSSE {
		t.Error("SSE not inferred from /sse or type")
	}
	if !servers["net"].Sandbox.Network || servers["shared"].Sandbox.Network {
		t.Error("sandbox.network not read")
	}
	joined := strings.Join(problems, "\n")
	for _, want := range []string{`server "both" has both command and url`, `server "neither" needs either "command"`, `invalid server name "bad:name"`, `unknown type "carrier-pigeon"`, `MCP server "badjson"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	if len(problems) != 5 {
		t.Errorf("want 5 problems, got %d:\n%s", len(problems), joined)
	}
	for _, p := range problems {
		if strings.Contains(p, "\n") {
			t.Errorf("problem is not one line: %q", p)
		}
	}
}

func TestLoadConfigBrokenFileSkipped(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	testutil.WriteFile(t, bad, "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"a\",}\n  }\n}")
	noKey := filepath.Join(dir, "nokey.json")
	testutil.WriteFile(t, noKey, `{"servers": {}}`)
	good := filepath.Join(dir, "good.json")
	testutil.WriteFile(t, good, `{"mcpServers": {"ok": {"command": "a"}}}`)
	empty := filepath.Join(dir, "empty.json")
	testutil.WriteFile(t, empty, "  \n")
	servers, problems := LoadConfig([]string{bad, filepath.Join(dir, "missing.json"), noKey, good, empty}, nil)
	if _, ok := servers["ok"]; !ok || len(servers) != 1 {
		t.Errorf("servers = %v", servers)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], bad+": invalid JSON: line 3") || !strings.Contains(problems[1], `no "mcpServers"`) {
		t.Errorf("problems = %q", problems)
	}
}
