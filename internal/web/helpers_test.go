package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const testToken = "test-token-0123456789abcdef"

// standinBin is the directory of the stand-in engines (codex, gemini, iflow).
func standinBin(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requireTool skips when a tool is missing, except under CI where it fails.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := lookPath(name, os.Getenv("PATH"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI but is not on PATH", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

type testEnv struct {
	t       testing.TB
	srv     *Server
	ts      *httptest.Server
	dataDir string
	home    string // the user's (fake) home directory
}

type serverOpt func(*Options)

func withProbe(status, msg string) serverOpt {
	return func(o *Options) {
		o.Probe = func(context.Context) ProbeResult { return ProbeResult{status, msg} }
	}
}

// withRealSandbox confines engines with bubblewrap and probes it for real.
func withRealSandbox() serverOpt {
	return func(o *Options) {
		o.Wrap = SandboxWrap(envValue(o.Env, "HOME"), o.Env)
		o.Probe = nil
	}
}

// outsideTmp returns a base directory under /var/tmp rather than /tmp, which
// the sandbox replaces with a private tmpfs: there, writes outside the
// boundary must fail outright, not just miss the host.
func outsideTmp(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "synapse-web-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// withEnv adds kv to the server's environment and maps the variables to
// every engine, as a user's settings.json "consoleEnv" would.
func withEnv(kv ...string) serverOpt {
	return func(o *Options) {
		o.Env = append(o.Env, kv...)
		if o.EngineEnv == nil {
			o.EngineEnv = map[string][]string{}
		}
		for _, e := range Engines() {
			for _, v := range kv {
				name, _, _ := strings.Cut(v, "=")
				o.EngineEnv[e.ID] = append(o.EngineEnv[e.ID], name)
			}
		}
	}
}

func withLimits(f func(*Limits)) serverOpt {
	return func(o *Options) { f(&o.Limits) }
}

// newTestEnv starts a console on an httptest server with the stand-in engines
// first on PATH. By default the probe reports unsupported and engines run
// unconfined (fast); tests of the boundary use withRealSandbox.
func newTestEnv(t testing.TB, opts ...serverOpt) *testEnv {
	t.Helper()
	return newTestEnvAt(t, t.TempDir(), opts...)
}

// newTestEnvAt is newTestEnv with the home and data directories under base.
func newTestEnvAt(t testing.TB, base string, opts ...serverOpt) *testEnv {
	t.Helper()
	home := filepath.Join(base, "home")
	dataDir := filepath.Join(base, "data")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	o := Options{
		DataDir: dataDir,
		Env: []string{
			"PATH=" + standinBin(t) + ":/usr/local/bin:/usr/bin:/bin",
			"HOME=" + home,
			"LANG=C.UTF-8",
		},
		Auth:   Auth{Token: testToken},
		Limits: Limits{HardTTL: time.Hour, IdleTTL: time.Hour, Retention: time.Hour, KeepSessions: 20, StopGrace: 2 * time.Second},
		Probe:  func(context.Context) ProbeResult { return ProbeResult{SandboxUnsupported, "test: no sandbox"} },
	}
	for _, f := range opts {
		f(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
		ts.Close()
	})
	return &testEnv{t: t, srv: srv, ts: ts, dataDir: dataDir, home: home}
}

func (e *testEnv) sessionsDir() string { return filepath.Join(e.dataDir, "ui_shell_sessions") }
func (e *testEnv) agentHome() string   { return filepath.Join(e.dataDir, "agent_home") }

// do sends an authenticated request with a JSON body (nil for none).
func (e *testEnv) do(method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.ts.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		e.t.Fatalf("%s %s: not JSON: %q", method, path, raw)
	}
	return resp.StatusCode, out
}

// start starts engine and returns the session state; it fails the test unless 201.
func (e *testEnv) start(engine string) SessionState {
	e.t.Helper()
	code, body := e.do("POST", "/api/sessions", map[string]any{"engine": engine, "cols": 80, "rows": 24})
	if code != http.StatusCreated {
		e.t.Fatalf("start %s: HTTP %d %v", engine, code, body)
	}
	return decodeState(e.t, body["session"])
}

func (e *testEnv) stop(id string) SessionState {
	e.t.Helper()
	code, body := e.do("POST", "/api/sessions/"+id+"/stop", map[string]any{})
	if code != http.StatusOK {
		e.t.Fatalf("stop: HTTP %d %v", code, body)
	}
	return decodeState(e.t, body["session"])
}

func decodeState(t testing.TB, v any) SessionState {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var st SessionState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("session state %s: %v", b, err)
	}
	return st
}

// termClient is a test client of the terminal protocol.
type termClient struct {
	t    testing.TB
	conn *websocket.Conn
	out  bytes.Buffer // every output byte received
	msgs []map[string]any
	// autoAck acknowledges output as it arrives (what the page does).
	autoAck bool
}

func (e *testEnv) wsURL(id string) string {
	return "ws" + strings.TrimPrefix(e.ts.URL, "http") + "/api/sessions/" + id + "/terminal"
}

func (e *testEnv) dial(id string) *termClient {
	e.t.Helper()
	h := http.Header{}
	h.Set("Origin", e.ts.URL)
	h.Set("Authorization", "Bearer "+testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, e.wsURL(id), &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		e.t.Fatalf("dial terminal: %v (%v)", err, resp)
	}
	conn.SetReadLimit(4 << 20)
	c := &termClient{t: e.t, conn: conn, autoAck: true}
	e.t.Cleanup(func() { _ = conn.CloseNow() })
	return c
}

// next reads one frame: ("text", msg) or ("binary", nil) with bytes appended to out.
func (c *termClient) next(ctx context.Context) (string, map[string]any, error) {
	typ, data, err := c.conn.Read(ctx)
	if err != nil {
		return "", nil, err
	}
	if typ == websocket.MessageBinary {
		c.out.Write(data)
		if c.autoAck {
			c.send(map[string]any{"type": "ack", "bytes": len(data)})
		}
		return "binary", nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return "", nil, fmt.Errorf("bad text frame %q: %w", data, err)
	}
	c.msgs = append(c.msgs, m)
	return "text", m, nil
}

// waitOutput reads until the output so far contains want.
func (c *termClient) waitOutput(want string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !strings.Contains(c.out.String(), want) {
		if _, _, err := c.next(ctx); err != nil {
			c.t.Fatalf("waiting for %q: %v; output so far:\n%q", want, err, c.out.String())
		}
	}
}

// waitOutputAny reads until the output contains one of wants.
func (c *termClient) waitOutputAny(wants ...string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		for _, w := range wants {
			if strings.Contains(c.out.String(), w) {
				return
			}
		}
		if _, _, err := c.next(ctx); err != nil {
			c.t.Fatalf("waiting for one of %q: %v; output so far:\n%q", wants, err, c.out.String())
		}
	}
}

// waitExit reads until the exit frame and returns it.
func (c *termClient) waitExit() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		kind, m, err := c.next(ctx)
		if err != nil {
			c.t.Fatalf("waiting for the exit frame: %v; output:\n%q", err, c.out.String())
		}
		if kind == "text" && m["type"] == "exit" {
			return m
		}
	}
}

func (c *termClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

// typeLine sends keystrokes as a binary input frame.
func (c *termClient) typeLine(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageBinary, []byte(s+"\r")); err != nil {
		c.t.Fatalf("type: %v", err)
	}
}
