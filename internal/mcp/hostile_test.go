package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
)

// A server's tool names become commands the model types and lines of its
// command list: a name with a terminal escape, a line break (a second line
// of instructions in the command list), whitespace or shell syntax, an
// empty or a huge name is not offered; descriptions lose their escapes.
// Names with '.', '-', '_', '/' and ':' still work.
func TestHostileToolNames(t *testing.T) {
	mgr, h := newManager(t, Options{}, hostileServer(t, "evil", mcptest.HostileNames))
	if rep := mgr.Start(context.Background()); len(rep.Failures) != 0 {
		t.Fatalf("start: %v", rep.Failures)
	}
	var names []string
	for _, tl := range mgr.Tools() {
		names = append(names, tl.Name)
		if strings.ContainsAny(tl.Description, "\x1b\x07") {
			t.Errorf("tool %q: the description keeps terminal escapes: %q", tl.Name, tl.Description)
		}
	}
	if got, want := strings.Join(names, " "), "a:b desc dots.and-dashes_ok ns/read ok"; got != want {
		t.Errorf("tools offered: %q, want %q", got, want)
	}
	list := runOK(t, h, "mcp:evil")
	for _, bad := range []string{"\x1b", "IGNORE", strings.Repeat("n", 100)} {
		if strings.Contains(list, bad) {
			t.Errorf("the tool list holds %q:\n%s", bad, list)
		}
	}
	if !strings.Contains(list, "6 tools are not offered") {
		t.Errorf("the tool list does not say tools were left out:\n%s", list)
	}
	if out := runOK(t, h, "mcp:evil:ns/read --help"); !strings.Contains(out, "A slash.") {
		t.Errorf("help of ns/read: %q", out)
	}
	if out := runOK(t, h, "mcp:evil:desc --help"); strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("help keeps escapes: %q", out)
	}
}

// A server whose tools/list never ends (a next cursor on every page) is
// listed up to a bound, quickly, instead of for as long as the connect
// timeout lets it grow the list.
func TestHostileEndlessToolList(t *testing.T) {
	mgr, h := newManager(t, Options{StartTimeout: 20 * time.Second}, hostileServer(t, "endless", mcptest.HostileEndlessList))
	rep := mgr.Start(context.Background())
	if len(rep.Failures) != 0 {
		t.Fatalf("start: %v", rep.Failures)
	}
	if n := len(mgr.Tools()); n == 0 || n > maxToolPages {
		t.Errorf("%d tools kept, want 1..%d", n, maxToolPages)
	}
	if list := runOK(t, h, "mcp:endless"); !strings.Contains(list, "more pages") {
		t.Errorf("the tool list does not say it was cut:\n%.500s", list)
	}
}

// tools/list_changed sent thousands of times: the list is fetched again a
// few times, not once a notification (each was a goroutine and a request).
func TestHostileListChangedSpam(t *testing.T) {
	_, h := newManager(t, Options{}, hostileServer(t, "spam", mcptest.HostileCalls))
	if out := runOK(t, h, "mcp:spam:spam"); out != "spammed\n" {
		t.Fatalf("spam = %q", out)
	}
	time.Sleep(time.Second) // let the refreshes run
	out := runOK(t, h, "mcp:spam:count")
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("count = %q", out)
	}
	if n > 20 {
		t.Errorf("%d tools/list requests after %d list_changed notifications", n, mcptest.ListChangedSpam)
	}
}

// Calls that misbehave: garbage lines before the answer, no answer, an
// exit mid-call, a stderr flood, a 12 MB answer. Each ends with a result
// or a clear error, within the timeout, and the server is usable after.
func TestHostileCalls(t *testing.T) {
	mgr, h := newManager(t, Options{}, hostileServer(t, "bad", mcptest.HostileCalls))
	h.Timeout = 3 * time.Second
	run := func(line string) (string, string, int) {
		r := h.Run(context.Background(), line)
		return r.Stdout, r.Stderr, r.ExitCode
	}
	// Lines that are not JSON-RPC end the session (the SDK's reading
	// stops): the call fails saying so, and the next call restarts it.
	out, errText, code := run("mcp:bad:garbage")
	if code == 0 && out != "after garbage\n" || code != 0 && !strings.Contains(errText, "restarted on the next call") {
		t.Errorf("garbage: exit %d, stdout %q, stderr %.300q", code, out, errText)
	}
	_, errText, code = run("mcp:bad:never") // the call's timeout ends it
	if code != 124 {
		t.Errorf("never: exit %d, stderr %q", code, errText)
	}
	_, errText, code = run("mcp:bad:exit")
	if code == 0 || !strings.Contains(errText, "stopped") || !strings.Contains(errText, "dying") || strings.ContainsAny(errText, "\x1b\x07") {
		t.Errorf("exit mid-call: exit %d, stderr %q", code, errText)
	}
	out, errText, code = run("mcp:bad:stderr")
	if code != 0 || out != "after stderr\n" {
		t.Errorf("stderr flood: exit %d, stdout %.100q, stderr %.300q", code, out, errText)
	}
	if st := mgr.servers["bad"].stderr; st != nil && len(st.String()) > 4096 {
		t.Errorf("the stderr tail holds %d bytes", len(st.String()))
	}
	// 12 MB of text is within the SDK's 16 MB message bound; the tool
	// layer cuts what the model gets. (Decoding it under -race on a busy
	// machine takes seconds: the 3 s timeout was for "never".)
	h.Timeout = time.Minute
	if out, errText, code = run("mcp:bad:huge"); code != 0 || len(out) < 12<<20 {
		t.Errorf("huge: exit %d, %d bytes out, stderr %.300q", code, len(out), errText)
	}
	if out, _, code := run("mcp:bad:count"); code != 0 || out == "" {
		t.Errorf("after the misbehaving calls: exit %d, %q", code, out)
	}
}

// A stdio server that stops reading (wedged) makes a call time out: the
// result says it is being restarted, its process is killed, and the next
// call gets a new process instead of waiting the whole timeout too.
func TestHostileWedgedServerIsRestarted(t *testing.T) {
	_, h := newManager(t, Options{}, hostileServer(t, "bad", mcptest.HostileCalls))
	pid := func() int {
		t.Helper()
		n, err := strconv.Atoi(strings.TrimSpace(runOK(t, h, "mcp:bad:pid")))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	old := pid()
	h.Timeout = 2 * time.Second
	r := h.Run(context.Background(), "mcp:bad:wedge")
	if r.ExitCode != 124 || !strings.Contains(r.Stderr, "timed out") || !strings.Contains(r.Stderr, "being restarted") {
		t.Fatalf("wedge: exit %d, stderr %q", r.ExitCode, r.Stderr)
	}
	// Generous: on today's code the wedged server never answers, and a
	// slow machine must not fail the test.
	h.Timeout = time.Minute
	if now := pid(); now == old {
		t.Errorf("the call after the timeout was answered by the wedged process %d", old)
	}
	// Killed and reaped; a hang here fails by the test timeout.
	for syscall.Kill(old, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
}

// An HTTP server answering a call with a JSON body that never ends: the
// SDK reads JSON answers whole (io.ReadAll), so the host's memory grew
// until the call's timeout, if there was one. The body is bounded.
func TestHostileHTTPEndlessBody(t *testing.T) {
	inner := mcptest.HTTPHandler(func() {})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Content-Type", "application/json")
				chunk := bytes.Repeat([]byte("x"), 64<<10)
				w.Write([]byte(`{"jsonrpc":"2.0","id":`))
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
					time.Sleep(time.Millisecond) // 64 MB/s: the test must not eat the machine
				}
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	_, h := newManager(t, Options{}, ServerConfig{Name: "web", Type: KindHTTP, URL: hs.URL})
	h.Timeout = time.Minute // the 32 MB bound, not the clock, must end it (it takes ~0.5 s; far longer under -race on a loaded machine)
	r := h.Run(context.Background(), "mcp:web:echo hi")
	if r.ExitCode == 0 || r.ExitCode == 124 || !strings.Contains(r.Stderr, "MB") {
		t.Errorf("endless answer: exit %d, stderr %.300q", r.ExitCode, r.Stderr)
	}
}

// A server's resources and prompts are its own words too: URIs with
// escapes or line breaks are not offered, names and descriptions lose
// their escapes, an endless resource list stops at the page bound, a
// templates list the server does not know is no error, and a link whose URI could not be
// typed back is named without a read command.
func TestHostileResourcesAndPrompts(t *testing.T) {
	mgr, h := newManager(t, Options{StartTimeout: 20 * time.Second}, hostileServer(t, "evil", mcptest.HostileResources))
	if rep := mgr.Start(context.Background()); len(rep.Failures) != 0 {
		t.Fatalf("start: %v", rep.Failures)
	}
	if n := len(mgr.CachedResources("evil").Resources); n != maxToolPages {
		t.Errorf("cached resources = %d, want one per page up to %d", n, maxToolPages)
	}
	tests := []struct {
		line string
		want []string
	}{
		{"mcp:evil:@resources", []string{"  (ok) — fine resource\n", "resources are not offered: their URIs are empty, over 4096 bytes or hold control characters",
			"more pages than 100"}},
		{"mcp:evil:@prompts", []string{"mcp:evil:@prompt good a=<a>", "1 prompts are not offered"}},
		{"mcp:evil:link", []string{"[resource link: mem://x (evil)]\n[resource link: mem://ok/1 (fine)]\n  read it: mcp:evil:@read mem://ok/1"}},
	}
	for _, tc := range tests {
		out := runOK(t, h, tc.line)
		if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "IGNORE") {
			t.Errorf("%s keeps escapes or a planted line:\n%q", tc.line, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", tc.line, w, out)
			}
		}
		if strings.Contains(out, "templates failed") {
			t.Errorf("%s calls a missing templates method a failure:\n%s", tc.line, out)
		}
	}
	// A server without the resources capability: the refusal says so.
	_, h2 := newManager(t, Options{}, hostileServer(t, "plain", mcptest.HostileCalls))
	r := h2.Run(context.Background(), "mcp:plain:@read mem://x")
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, `MCP server "plain" rejected reading mem://x: method not found`) || !strings.Contains(r.Stderr, "declares no resources") {
		t.Errorf("@read on a server without resources: exit %d\n%s", r.ExitCode, r.Stderr)
	}
	if out := runOK(t, h2, "mcp:plain:@resources"); !strings.Contains(out, "publishes no resources") {
		t.Errorf("@resources on a server without resources: %q", out)
	}
	if out := runOK(t, h2, "mcp:plain:@prompts"); !strings.Contains(out, "offers no prompts") {
		t.Errorf("@prompts on a server without prompts: %q", out)
	}
	for _, c := range mgr.ExtraCommands() {
		if strings.ContainsAny(c.Command+c.Description, "\x1b\x07\n") {
			t.Errorf("command:search entry keeps escapes: %q", c)
		}
	}
}
