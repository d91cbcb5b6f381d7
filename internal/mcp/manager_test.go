package mcp

import (
	"context"
	"encoding/json"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files")

func newManager(t testing.TB, opts Options, cfgs ...ServerConfig) (*Manager, *Handler) {
	t.Helper()
	m := map[string]ServerConfig{}
	for _, c := range cfgs {
		m[c.Name] = c
	}
	mgr := NewManager(m, opts)
	t.Cleanup(func() { mgr.Close() })
	return mgr, &Handler{M: mgr, Timeout: time.Minute}
}

func runOK(t *testing.T, h *Handler, line string) string {
	t.Helper()
	r := h.Run(context.Background(), line)
	if r.ExitCode != 0 {
		t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", line, r.ExitCode, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

func TestStdioServerRoundTrip(t *testing.T) {
	mgr, h := newManager(t, Options{}, stdioServer(t, "test"))
	rep := mgr.Start(context.Background())
	if got := rep.Lines(); len(got) != 1 || got[0] != "MCP: loaded 11 tools from 1 servers" {
		t.Fatalf("start report = %q", got)
	}
	out := runOK(t, h, `mcp:test:typed "Ann Lee" 3 --ratio=0.5 --verbose --tags=a --tags 'b c' --sizes=[4,5] --options='{"deep":{"x":[1,null]}}' --mode slow --note null`)
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := map[string]any{"name": "Ann Lee", "count": float64(3), "ratio": 0.5, "verbose": true,
		"tags": []any{"a", "b c"}, "sizes": []any{float64(4), float64(5)},
		"options": map[string]any{"deep": map[string]any{"x": []any{float64(1), nil}}}, "mode": "slow", "note": nil}
	if !jsonEqual(got, want) {
		t.Errorf("server received %v\nwant %v", got, want)
	}
	if out := runOK(t, h, "mcp:test:echo '$(touch /tmp/pwned) `id`'"); out != "$(touch /tmp/pwned) `id`\n" {
		t.Errorf("echo = %q", out)
	}
	if out := runOK(t, h, "mcp:test:add 40 2"); out != "42\n" {
		t.Errorf("add = %q", out)
	}
	// A bare operator is not sent as an argument (the model meant the shell
	// to act on it); quoted, it is one.
	if r := h.Run(context.Background(), "mcp:test:echo hi && echo after"); r.ExitCode == 0 || !strings.Contains(r.Stderr, "shell operator") {
		t.Errorf("bare &&: exit %d stdout %q stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	if out := runOK(t, h, "mcp:test:echo '&&'"); out != "&&\n" {
		t.Errorf("quoted && = %q", out)
	}
	out = runOK(t, h, "mcp:test:image")
	for _, want := range []string{"caption\n", "[image: image/png, ", "attached as image 1]", "[resource link: file:///tmp/report.pdf (report), application/pdf, 47.1 KB] The quarterly report.\n  read it: mcp:test:@read file:///tmp/report.pdf", "[embedded resource mem://note, text/plain]\nembedded text"} {
		if !strings.Contains(out, want) {
			t.Errorf("image output lacks %q:\n%s", want, out)
		}
	}
	tests := []struct {
		line     string
		exit     int
		contains []string
	}{
		{"mcp:test:fail", 1, []string{"it failed on purpose"}},
		{"mcp:test:typed --count=x", 1, []string{"invalid arguments (nothing was sent)", "missing required argument --name (string)", `--count: expected an integer, got "x"`, "mcp:test:typed --help"}},
		{"mcp:test:nosuch", 1, []string{`MCP server "test" has no tool "nosuch"`, "add, crash, dial, echo, env, fail, image, patch, pdf_to_text, pid, typed"}},
		{"mcp:other:echo", 1, []string{`Unknown MCP server "other"`, "Configured servers: test"}},
		{"mcp:test", 0, []string{`MCP server "test" has 11 tools`, "mcp:test:pdf_to_text  Convert a PDF document to plain text.", "mcp:test:typed        Return the arguments it received as JSON."}},
		{"mcp:", 0, []string{"test (stdio) — connected, 11 tools, 3 resources, 1 templates, 2 prompts"}},
		{"mcp:test:echo 'open", 1, []string{"Unclosed quote"}},
	}
	for _, tt := range tests {
		r := h.Run(context.Background(), tt.line)
		if r.ExitCode != tt.exit {
			t.Errorf("%s: exit %d, want %d (%s%s)", tt.line, r.ExitCode, tt.exit, r.Stdout, r.Stderr)
		}
		for _, c := range tt.contains {
			if !strings.Contains(r.Stdout+r.Stderr, c) {
				t.Errorf("%s: output lacks %q:\n%s%s", tt.line, c, r.Stdout, r.Stderr)
			}
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestToolHelpGolden(t *testing.T) {
	mgr, h := newManager(t, Options{}, stdioServer(t, "test"))
	mgr.Start(context.Background())
	for _, tc := range []struct{ line, file string }{
		{"mcp:test:typed --help", "typed.txt"},
		{"mcp:test:add -h", "add.txt"},
		{"mcp:test:image --help", "image.txt"},
		{"mcp:test:patch --help", "patch.txt"},
	} {
		got := runOK(t, h, tc.line)
		path := filepath.Join("testdata", "golden", tc.file)
		if *update {
			testutil.WriteFile(t, path, got)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", tc.line, path, got, want)
		}
	}
}

// The example at the end of every tool's help is a call Synapse accepts:
// run exactly as printed against the real server, it reaches the tool (for
// patch, an array-of-object parameter, the server gets the objects).
func TestToolHelpExampleRuns(t *testing.T) {
	mgr, h := newManager(t, Options{}, stdioServer(t, "test"))
	mgr.Start(context.Background())
	for _, tool := range []string{"patch", "typed", "add", "echo"} {
		help := runOK(t, h, "mcp:test:"+tool+" --help")
		_, ex, ok := strings.Cut(help, "\nExample:\n  ")
		if !ok {
			t.Fatalf("%s help has no example:\n%s", tool, help)
		}
		ex = strings.TrimSuffix(ex, "\n")
		r := h.Run(context.Background(), ex)
		if r.ExitCode != 0 {
			t.Errorf("the help's example %q fails: %s", ex, r.Stderr)
			continue
		}
		if tool == "patch" {
			var got struct {
				Path  string
				Edits []map[string]any
			}
			if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || got.Path == "" || len(got.Edits) != 1 ||
				got.Edits[0]["oldText"] == nil || got.Edits[0]["newText"] == nil {
				t.Errorf("patch example sent %s (%v)", r.Stdout, err)
			}
		}
	}
}

func pidOf(t *testing.T, h *Handler) (int, command.Result) {
	t.Helper()
	r := h.Run(context.Background(), "mcp:test:pid")
	if r.ExitCode != 0 {
		t.Fatalf("pid: %d %s", r.ExitCode, r.Stderr)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if err != nil {
		t.Fatalf("pid output %q", r.Stdout)
	}
	return pid, r
}

func TestStdioConnectionReusedCrashReportedAndReconnected(t *testing.T) {
	mgr, h := newManager(t, Options{}, stdioServer(t, "test"))
	mgr.Start(context.Background())
	p1, _ := pidOf(t, h)
	if p2, _ := pidOf(t, h); p2 != p1 {
		t.Fatalf("connection not reused: pid %d then %d", p1, p2)
	}
	r := h.Run(context.Background(), "mcp:test:crash")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, `MCP server "test" stopped responding during the call`) || !strings.Contains(r.Stderr, "restarted on the next call") {
		t.Fatalf("crash: exit %d stderr %q", r.ExitCode, r.Stderr)
	}
	p3, res := pidOf(t, h)
	if p3 == p1 || !strings.Contains(res.Stderr, "was restarted") {
		t.Errorf("after crash: pid %d (old %d), stderr %q", p3, p1, res.Stderr)
	}
	// Killed from outside between calls: the next call restarts it.
	if err := syscall.Kill(p3, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mgr.Status()[0].Connected && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // wait until the exit is noticed, so the next call is not mid-crash
	}
	p4, res := pidOf(t, h)
	if p4 == p3 || !strings.Contains(res.Stderr, "was restarted") {
		t.Errorf("after kill: pid %d (old %d) stderr %q", p4, p3, res.Stderr)
	}
}

func TestStartReportsBrokenServersAndLoadsTheRest(t *testing.T) {
	dir := t.TempDir()
	mgr, h := newManager(t, Options{StartTimeout: 2 * time.Second, ConnectTimeout: 2 * time.Second, Cwd: dir},
		stdioServer(t, "good"),
		ServerConfig{Name: "missing", Command: "synapse-no-such-command", File: "cfg.json"},
		ServerConfig{Name: "exits", Command: "sh", Args: []string{"-c", "echo boom >&2; exit 7"}},
		ServerConfig{Name: "silent", Command: "sleep", Args: []string{"60"}},
		ServerConfig{Name: "http-down", URL: "http://127.0.0.1:1/mcp"},
	)
	rep := mgr.Start(context.Background())
	lines := rep.Lines()
	if lines[0] != "MCP: loaded 11 tools from 1 servers" || len(lines) != 5 {
		t.Fatalf("report:\n%s", strings.Join(lines, "\n"))
	}
	joined := strings.Join(lines, "\n")
	for _, want := range []string{
		`MCP server "missing" failed to start: command "synapse-no-such-command" not found on PATH`,
		`MCP server "exits" failed to start: connect:`,
		"boom", // the server's own last words say why (was cut at the first line break)
		`MCP server "silent" failed to start: not ready after 2s`,
		`MCP server "http-down" failed to start: connect:`,
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("report lacks %q:\n%s", want, joined)
		}
	}
	runOK(t, h, "mcp:good:echo still-works")
	// --help of a tool of a down server: what is known, that it is down and why, exit 0.
	help := runOK(t, h, "mcp:exits:search --help")
	for _, want := range []string{"Usage: mcp:exits:search [--<argument> <value> …]", `MCP server "exits" is down`, "Why: ", "boom", "started again on the next call"} {
		if !strings.Contains(help, want) {
			t.Errorf("help while down lacks %q:\n%s", want, help)
		}
	}
	if help := runOK(t, h, "mcp:missing:x -h"); !strings.Contains(help, "synapse-no-such-command") || !strings.Contains(help, "cfg.json") {
		t.Errorf("help while down does not say why or where:\n%s", help)
	}
	r := h.Run(context.Background(), "mcp:exits:anything")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, `MCP server "exits" is not available`) || !strings.Contains(r.Stderr, "boom") {
		t.Errorf("call to broken server: %d %q", r.ExitCode, r.Stderr)
	}
}

func TestEnvAndCwdOfStdioServer(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := stdioServer(t, "test")
	c.Env["GREETING"] = "hi there"
	c.Cwd = "sub"
	_, h := newManager(t, Options{Cwd: base}, c)
	if out := runOK(t, h, "mcp:test:env GREETING"); out != "hi there|"+filepath.Join(base, "sub")+"\n" {
		t.Errorf("env = %q", out)
	}
}

// httpServer serves the test server; it counts tools/call requests and
// requires the configured Authorization header.
func httpServer(t testing.TB, sse bool, ln net.Listener) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	inner := mcptest.HTTPHandler(func() {})
	if sse {
		inner = mcptest.SSEHandler(func() {})
	}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.ContentLength != 0 {
			body := make([]byte, r.ContentLength)
			n, _ := r.Body.Read(body)
			for n < len(body) {
				m, err := r.Body.Read(body[n:])
				n += m
				if err != nil {
					break
				}
			}
			if strings.Contains(string(body[:n]), `"tools/call"`) {
				calls.Add(1)
			}
			r.Body = readCloser(body[:n])
		}
		inner.ServeHTTP(w, r)
	}))
	if ln != nil {
		hs.Listener.Close()
		hs.Listener = ln
	}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections() // the client's event stream would keep Close waiting
		hs.Close()
	})
	return hs, &calls
}

func TestHTTPTransports(t *testing.T) {
	for _, kind := range []string{KindHTTP, KindSSE} {
		t.Run(kind, func(t *testing.T) {
			hs, calls := httpServer(t, kind == KindSSE, nil)
			cfg := ServerConfig{Name: "web", URL: hs.URL + "/mcp", Type: kind, Headers: map[string]string{"Authorization": "Bearer tok"}}
			mgr, h := newManager(t, Options{}, cfg)
			if rep := mgr.Start(context.Background()); rep.Servers != 1 || rep.Tools != 11 {
				t.Fatalf("start: %q", rep.Lines())
			}
			out := runOK(t, h, `mcp:web:typed --name=x --count=2 --tags=[] --verbose=no --options={}`)
			if !jsonEqual(jsonMap(t, out), map[string]any{"name": "x", "count": 2, "tags": []any{}, "verbose": false, "options": map[string]any{}}) {
				t.Errorf("typed over %s = %s", kind, out)
			}
			before := calls.Load()
			r := h.Run(context.Background(), "mcp:web:add 1")
			if r.ExitCode != 1 || calls.Load() != before {
				t.Errorf("invalid args: exit %d, calls %d → %d (must not reach the server)", r.ExitCode, before, calls.Load())
			}
			runOK(t, h, "mcp:web:add 1 2")
			if calls.Load() != before+1 {
				t.Errorf("calls %d → %d, want one more", before, calls.Load())
			}
		})
	}
	t.Run("missing header", func(t *testing.T) {
		hs, _ := httpServer(t, false, nil)
		mgr, _ := newManager(t, Options{}, ServerConfig{Name: "web", URL: hs.URL + "/mcp"})
		if rep := mgr.Start(context.Background()); len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0], "Unauthorized") {
			t.Errorf("start without the header: %q", rep.Lines())
		}
	})
}

func jsonMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return m
}

func TestHTTPServerRestartIsReconnected(t *testing.T) {
	hs, _ := httpServer(t, false, nil)
	addr := hs.Listener.Addr().String()
	mgr, h := newManager(t, Options{ConnectTimeout: 5 * time.Second}, ServerConfig{Name: "web", URL: "http://" + addr + "/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}})
	mgr.Start(context.Background())
	runOK(t, h, "mcp:web:echo one")
	hs.CloseClientConnections()
	hs.Close()
	r := h.Run(context.Background(), "mcp:web:echo two")
	if r.ExitCode == 0 {
		t.Fatalf("call to a stopped server succeeded: %q", r.Stdout)
	}
	if !strings.Contains(r.Stderr, `MCP server "web"`) {
		t.Errorf("failure not reported: %q", r.Stderr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", addr, err)
	}
	httpServer(t, false, ln)
	if out := runOK(t, h, "mcp:web:echo three"); out != "three\n" {
		t.Errorf("after restart: %q", out)
	}
}

// TestStdioServerUnderBubblewrap runs the server in a real bwrap sandbox: the
// network is cut off unless the entry sets "sandbox": {"network": true}.
func TestStdioServerUnderBubblewrap(t *testing.T) {
	testutil.RequireBwrap(t)
	ln := testutil.Listener(t)
	var wrapped atomic.Int64
	wrap := func(argv []string, cwd string, network bool) ([]string, error) {
		wrapped.Add(1)
		pre := []string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--unshare-pid"}
		if !network {
			pre = append(pre, "--unshare-net")
		}
		return append(append(pre, "--"), argv...), nil
	}
	closed := stdioServer(t, "closed")
	open := stdioServer(t, "open")
	open.Sandbox.Network = true
	_, h := newManager(t, Options{Wrap: wrap}, closed, open)
	if out := runOK(t, h, "mcp:closed:dial "+ln.Addr().String()); !strings.HasPrefix(out, "dial failed") {
		t.Errorf("server without network could dial: %q", out)
	}
	if out := runOK(t, h, "mcp:open:dial "+ln.Addr().String()); out != "dial ok\n" {
		t.Errorf("server with network: %q", out)
	}
	if wrapped.Load() != 2 {
		t.Errorf("wrapper used %d times, want 2", wrapped.Load())
	}
}
