package web

import (
	"context"
	"fmt"
	"github.com/synapse-agent/synapse/internal/testutil"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Scenario 启动后即时可观测: the state frame comes first, then a non-blank handshake line.
func TestTerminalStateFrameFirstAndHandshake(t *testing.T) {
	for _, engine := range []string{"codex-tui", "gemini-tui", "iflow-tui"} {
		t.Run(engine, func(t *testing.T) {
			e := newTestEnv(t)
			st := e.start(engine)
			c := e.dial(st.ID)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			kind, m, err := c.next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if kind != "text" || m["type"] != "state" {
				t.Fatalf("first frame is %s %v, want the state frame", kind, m)
			}
			fs := decodeState(t, m["session"])
			if fs.ID != st.ID || fs.Status != StatusRunning || fs.Engine != engine || fs.SandboxStatus == "" {
				t.Fatalf("state frame = %+v", fs)
			}
			handshake := fmt.Sprintf("[session %s] engine=%s started", st.ID, engine)
			c.waitOutput(handshake)
			if strings.TrimSpace(handshake) == "" {
				t.Fatal("blank handshake")
			}
			// Then the program's own drawing, raw escape sequences and all.
			c.waitOutput("\x1b[1;32mSTANDIN ")
			e.stop(st.ID)
		})
	}
}

// Scenario 命令入口约束: only the three engine ids start anything.
func TestStartWhitelist(t *testing.T) {
	e := newTestEnv(t)
	bad := []struct {
		name string
		body any
	}{
		{"bare command", map[string]any{"engine": "codex"}},
		{"shell", map[string]any{"engine": "bash"}},
		{"command line as id", map[string]any{"engine": "codex --version"}},
		{"login mode", map[string]any{"engine": "codex-login"}},
		{"path", map[string]any{"engine": "../../bin/sh"}},
		{"empty", map[string]any{"engine": ""}},
		{"command field", map[string]any{"engine": "codex-tui", "command": "rm -rf /"}},
		{"args field", map[string]any{"engine": "codex-tui", "args": []string{"login"}}},
		{"not an object", []string{"codex-tui"}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			code, body := e.do("POST", "/api/sessions", tt.body)
			if code != http.StatusBadRequest {
				t.Fatalf("HTTP %d %v, want 400", code, body)
			}
			if msg, _ := body["error"].(string); msg == "" {
				t.Fatalf("no error message: %v", body)
			}
		})
	}
	if entries, _ := os.ReadDir(e.sessionsDir()); len(entries) != 0 {
		t.Fatalf("rejected starts created %d session directories", len(entries))
	}
	// The page lists exactly the three engines.
	code, body := e.do("GET", "/api/engines", nil)
	if code != http.StatusOK {
		t.Fatalf("engines: HTTP %d", code)
	}
	var ids, labels []string
	for _, v := range body["engines"].([]any) {
		m := v.(map[string]any)
		ids = append(ids, m["id"].(string))
		labels = append(labels, m["label"].(string))
		if m["installed"] != true {
			t.Errorf("%s not detected as installed with the stand-ins on PATH", m["id"])
		}
	}
	if got := strings.Join(ids, ","); got != "codex-tui,gemini-tui,iflow-tui" {
		t.Fatalf("engine ids = %s", got)
	}
	if got := strings.Join(labels, ","); got != "Codex TUI,Gemini TUI,iFlow TUI" {
		t.Fatalf("engine labels = %s", got)
	}
}

// Installed detection follows PATH; a missing engine gives a clear error and creates nothing.
func TestEngineInstalledDetection(t *testing.T) {
	only := t.TempDir()
	if err := os.Symlink(filepath.Join(standinBin(t), "gemini"), filepath.Join(only, "gemini")); err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, func(o *Options) { o.Env[0] = "PATH=" + only + ":/usr/bin:/bin" })
	_, body := e.do("GET", "/api/engines", nil)
	got := map[string]bool{}
	for _, v := range body["engines"].([]any) {
		m := v.(map[string]any)
		got[m["id"].(string)] = m["installed"].(bool)
	}
	if got["codex-tui"] || !got["gemini-tui"] || got["iflow-tui"] {
		t.Fatalf("installed = %v, want only gemini-tui", got)
	}
	code, resp := e.do("POST", "/api/sessions", map[string]any{"engine": "codex-tui"})
	if code != http.StatusUnprocessableEntity || resp["code"] != "not_installed" || !strings.Contains(resp["error"].(string), "npm install -g @openai/codex") {
		t.Fatalf("start of a missing engine: HTTP %d %v", code, resp)
	}
	if entries, _ := os.ReadDir(e.sessionsDir()); len(entries) != 0 {
		t.Fatalf("a failed start left %d session directories", len(entries))
	}
}

// Scenario 启动会话时创建隔离目录: the CLI runs in data/ui_shell_sessions/<id> with HOME in agent_home.
func TestSessionDirectoryAndHome(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	want := filepath.Join(e.sessionsDir(), st.ID)
	if st.SessionDir != want {
		t.Fatalf("session_dir = %s, want %s", st.SessionDir, want)
	}
	if fi, err := os.Stat(want); err != nil || !fi.IsDir() {
		t.Fatalf("session directory not created: %v", err)
	}
	c := e.dial(st.ID)
	c.waitOutput("cwd=" + want + "\r\n")
	c.waitOutput("home=" + e.agentHome() + "\r\n")
	c.waitOutput("tmp=" + filepath.Join(want, ".tmp") + "\r\n")
	e.stop(st.ID)
}

// Scenario 并发启动: a second start while one runs is busy and creates nothing.
func TestSecondStartIsBusy(t *testing.T) {
	e := newTestEnv(t)
	first := e.start("codex-tui")
	for _, engine := range []string{"gemini-tui", "codex-tui"} {
		code, body := e.do("POST", "/api/sessions", map[string]any{"engine": engine})
		if code != http.StatusConflict || body["code"] != "busy" {
			t.Fatalf("second start of %s: HTTP %d %v, want 409 busy", engine, code, body)
		}
		if !strings.Contains(body["error"].(string), first.ID) {
			t.Fatalf("busy error does not name the running session: %v", body["error"])
		}
	}
	entries, err := os.ReadDir(e.sessionsDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != first.ID {
		t.Fatalf("session directories = %v, want only %s", entries, first.ID)
	}
	if st := e.stop(first.ID); st.Status != StatusEnded {
		t.Fatalf("after stop: %+v", st)
	}
	second := e.start("gemini-tui")
	if second.ID == first.ID {
		t.Fatal("new session reused the id")
	}
	e.stop(second.ID)
}

// processesWith lists live (non-zombie) processes whose command line contains needle.
func processesWith(t *testing.T, needle string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), needle) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
		if err != nil {
			continue
		}
		// Field 3 (after "pid (comm)") is the state; Z is a zombie: dead.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// Scenario 用户主动停止: Stop ends the CLI and its children, the state becomes ended, and a new session may start.
func TestStopKillsProcessGroup(t *testing.T) {
	cases := []struct {
		name string
		opts []serverOpt
	}{
		{"unconfined", nil},
		{"sandboxed", []serverOpt{withRealSandbox()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "sandboxed" {
				requireTool(t, "bwrap")
			}
			marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
			e := newTestEnv(t, append(tc.opts, withEnv("STANDIN_SLEEP="+marker))...)
			st := e.start("codex-tui")
			c := e.dial(st.ID)
			c.waitOutput("CHILDREN-STARTED")
			needle := "sleep\x00" + marker
			testutil.WaitFor(t, "the stand-in's child and grandchild", func() bool { return len(processesWith(t, needle)) == 2 })

			ended := e.stop(st.ID)
			if ended.Status != StatusEnded || ended.EndReason != EndStopped || ended.ExitCode == nil || ended.EndSummary != "stopped by you" {
				t.Fatalf("state after stop = %+v", ended)
			}
			if pids := processesWith(t, needle); len(pids) != 0 {
				t.Fatalf("children still alive after stop: %v", pids)
			}
			exit := c.waitExit()
			if exit["reason"] != EndStopped {
				t.Fatalf("exit frame = %v", exit)
			}
			if out := c.out.String(); !strings.Contains(out, "ended: stopped by you\r\n") || rawCode143.MatchString(out) {
				t.Fatalf("the terminal's last line should say in words that the user stopped it:\n%q", out)
			}
			if code, body := e.do("GET", "/api/sessions/current", nil); code != 200 || body["session"].(map[string]any)["status"] != StatusEnded {
				t.Fatalf("current session after stop: %d %v", code, body)
			}
			next := e.start("iflow-tui")
			e.stop(next.ID)
		})
	}
}

// The program's own exit ends the session with its code, reported in the exit frame.
func TestExitFrameCarriesExitCode(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("gemini-tui")
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	c.typeLine("exit 7")
	exit := c.waitExit()
	if exit["code"] != float64(7) || exit["reason"] != EndExited {
		t.Fatalf("exit frame = %v", exit)
	}
	if want := fmt.Sprintf("[session %s] ended: the program exited with an error (status 7)", st.ID); !strings.Contains(c.out.String(), want) {
		t.Fatalf("terminal lacks %q before the exit frame:\n%q", want, c.out.String())
	}
	fs := decodeState(t, exit["session"])
	if fs.Status != StatusEnded || fs.ExitCode == nil || *fs.ExitCode != 7 {
		t.Fatalf("final state = %+v", fs)
	}
	// The connection then closes normally.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.next(ctx)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after exit: %v, want a normal close", err)
	}
	e.start("codex-tui") // the slot is free again
}

// Input reaches the program, and resize changes the PTY size the program sees.
func TestInputEchoAndResize(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("size=80x24")
	c.typeLine("hello there")
	c.waitOutput("echo: hello there\r\n")
	c.send(map[string]any{"type": "input", "data": "as text\r"})
	c.waitOutput("echo: as text\r\n")
	c.send(map[string]any{"type": "resize", "cols": 132, "rows": 43})
	c.waitOutput("size=132x43") // from the program's SIGWINCH trap
	testutil.WaitFor(t, "the state to follow the resize", func() bool {
		_, body := e.do("GET", "/api/sessions/current", nil)
		s := decodeState(t, body["session"])
		return s.Cols == 132 && s.Rows == 43
	})
	e.stop(st.ID)
}

// A dropped connection leaves the session running; reconnecting replays recent output.
func TestReconnectReplaysOutput(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	c.typeLine("before the drop")
	c.waitOutput("echo: before the drop")
	_ = c.conn.CloseNow()

	_, body := e.do("GET", "/api/sessions/current", nil)
	if s := decodeState(t, body["session"]); s.Status != StatusRunning {
		t.Fatalf("session after the client dropped: %+v", s)
	}
	c2 := e.dial(st.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if kind, m, err := c2.next(ctx); err != nil || kind != "text" || m["type"] != "state" {
		t.Fatalf("first frame after reconnect: %s %v %v", kind, m, err)
	}
	c2.waitOutput("echo: before the drop")
	for _, want := range []string{fmt.Sprintf("[session %s] engine=codex-tui started", st.ID), "STANDIN codex"} {
		if !strings.Contains(c2.out.String(), want) {
			t.Fatalf("replay lacks %q:\n%q", want, c2.out.String())
		}
	}
	c2.typeLine("after")
	c2.waitOutput("echo: after")

	// A third client takes over; the second is told why.
	c3 := e.dial(st.ID)
	c3.waitOutput("echo: after")
	for {
		_, _, err := c2.next(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != closeTakenOver {
				t.Fatalf("old client closed with %v, want %d", err, closeTakenOver)
			}
			break
		}
	}
	e.stop(st.ID)
}

// The replay is bounded: after lots of output only the ring's worth comes back.
func TestReplayIsBounded(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	c.typeLine(fmt.Sprintf("flood %d", 3*ringSize))
	c.waitOutput("FLOOD-DONE")
	_ = c.conn.CloseNow()
	c2 := e.dial(st.ID)
	c2.waitOutput("FLOOD-DONE")
	if n := c2.out.Len(); n > ringSize {
		t.Fatalf("replay sent %d bytes, more than the %d-byte ring", n, ringSize)
	}
	e.stop(st.ID)
}

// Flow control: a client that stops acknowledging stalls the program instead
// of growing server memory; once it acknowledges again, nothing is lost.
func TestFlowControlBoundsBuffering(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	c.autoAck = false
	unacked := c.out.Len()
	c.send(map[string]any{"type": "ack", "bytes": unacked})
	flood := 8 * ringSize
	c.typeLine(fmt.Sprintf("flood %d", flood))

	sess := e.srv.mgr.Get(st.ID)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Read what the window allows, without acknowledging.
	for c.out.Len()-unacked < sendWindow {
		if _, _, err := c.next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The pump may now fill the ring, and no more.
	testutil.WaitFor(t, "the ring to fill", func() bool { return sess.out.Total() >= int64(unacked+sendWindow+ringSize/2) })
	for range 20 {
		if total := sess.out.Total(); total > int64(unacked+sendWindow+ringSize) {
			t.Fatalf("server buffered %d bytes for a client that stopped acknowledging (bound %d)", total, unacked+sendWindow+ringSize)
		}
		if strings.Contains(c.out.String(), "FLOOD-DONE") {
			t.Fatal("the flood finished although the client acknowledged nothing")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Acknowledge again: everything arrives, in order, nothing dropped.
	c.send(map[string]any{"type": "ack", "bytes": c.out.Len() - unacked})
	c.autoAck = true
	c.waitOutput("FLOOD-DONE")
	if n := strings.Count(c.out.String(), "y"); n < flood {
		t.Fatalf("received %d of %d flood bytes", n, flood)
	}
	e.stop(st.ID)
}

// Scenario sandbox 探测为 unsupported/unknown: the session still starts, the
// status is recorded and the response carries a warning for the page.
func TestProbeStatusRecordedAndNotBlocking(t *testing.T) {
	for _, status := range []string{SandboxUnsupported, SandboxUnknown, SandboxSupported} {
		t.Run(status, func(t *testing.T) {
			e := newTestEnv(t, withProbe(status, "probe said "+status), func(o *Options) {
				// A "supported" probe needs a wrapper; a transparent one keeps this test about the record.
				o.Wrap = func(_ []string, _ string, argv []string) ([]string, error) { return argv, nil }
			})
			code, body := e.do("POST", "/api/sessions", map[string]any{"engine": "codex-tui"})
			if code != http.StatusCreated {
				t.Fatalf("start: HTTP %d %v", code, body)
			}
			st := decodeState(t, body["session"])
			if st.SandboxStatus != status || st.SandboxMessage != "probe said "+status {
				t.Fatalf("recorded sandbox_status=%q message=%q", st.SandboxStatus, st.SandboxMessage)
			}
			warning, _ := body["warning"].(string)
			if status == SandboxSupported && warning != "" {
				t.Fatalf("warning for a supported sandbox: %q", warning)
			}
			if status != SandboxSupported && !strings.Contains(warning, status) {
				t.Fatalf("warning = %q, want one naming %s", warning, status)
			}
			c := e.dial(st.ID)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, m, err := c.next(ctx)
			if err != nil || decodeState(t, m["session"]).SandboxStatus != status {
				t.Fatalf("state frame: %v %v", m, err)
			}
			e.stop(st.ID)
		})
	}
}

// Scenario 点击后失败反馈 (server side): with --require-sandbox an unusable
// sandbox is an immediate error that names the cause, and nothing starts.
func TestRequireSandboxRefusesStart(t *testing.T) {
	e := newTestEnv(t, withProbe(SandboxUnsupported, "bwrap is not installed"), func(o *Options) { o.RequireSandbox = true })
	code, body := e.do("POST", "/api/sessions", map[string]any{"engine": "codex-tui"})
	if code != http.StatusServiceUnavailable || body["code"] != "sandbox_unavailable" || !strings.Contains(body["error"].(string), "bwrap is not installed") {
		t.Fatalf("HTTP %d %v", code, body)
	}
	if sb, _ := body["sandbox"].(map[string]any); sb["status"] != SandboxUnsupported {
		t.Fatalf("sandbox in the error = %v", body["sandbox"])
	}
	if entries, _ := os.ReadDir(e.sessionsDir()); len(entries) != 0 {
		t.Fatalf("refused start created %d session directories", len(entries))
	}
	if e.srv.mgr.Active() != nil {
		t.Fatal("refused start left an active session")
	}
}

// Scenario sandbox 探测为 supported + 写入边界约束: under the real sandbox the
// CLI writes only in its session directory and agent_home.
func TestWriteBoundary(t *testing.T) {
	requireTool(t, "bwrap")
	project, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnvAt(t, outsideTmp(t), withRealSandbox())
	if r := e.srv.mgr.sandboxStatus(context.Background()); r.Status != SandboxSupported {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox probe under CI: %+v", r)
		}
		t.Skipf("bubblewrap does not work here: %s", r.Message)
	}
	// Another session's directory must be out of reach too.
	other := e.start("gemini-tui")
	e.stop(other.ID)

	st := e.start("codex-tui")
	if st.SandboxStatus != SandboxSupported {
		t.Fatalf("sandbox_status = %q (%s)", st.SandboxStatus, st.SandboxMessage)
	}
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	hostTmp := filepath.Join("/tmp", fmt.Sprintf("synapse-boundary-%d", time.Now().UnixNano()))
	cases := []struct {
		path  string
		allow bool // the program's write succeeds and lands on the host
	}{
		{filepath.Join(st.SessionDir, "notes.txt"), true},
		{filepath.Join(st.SessionDir, ".tmp", "scratch"), true},
		{filepath.Join(e.agentHome(), ".config", "cli.json"), true},
		{filepath.Join(e.dataDir, "outside.txt"), false},
		{filepath.Join(e.sessionsDir(), other.ID, "intrude.txt"), false},
		{filepath.Join(e.home, "dotfile"), false},
		{filepath.Join(project, "testdata", "planted.txt"), false},
		{"/etc/synapse-boundary", false},
		{"/usr/local/bin/synapse-boundary", false},
	}
	for _, tc := range cases {
		c.typeLine("write " + tc.path)
		switch {
		case tc.allow:
			c.waitOutput("WRITE-OK " + tc.path)
		case within(tc.path, "/tmp"):
			// Under /tmp (where the tests keep their data dir) the program
			// writes into its private tmpfs: it may succeed, but the host
			// file must not appear.
			c.waitOutputAny("WRITE-OK "+tc.path, "WRITE-DENIED "+tc.path)
		default:
			c.waitOutput("WRITE-DENIED " + tc.path)
		}
		_, err := os.Stat(tc.path)
		if exists := err == nil; exists != tc.allow {
			t.Errorf("%s: file exists on the host = %v, want %v", tc.path, exists, tc.allow)
		}
		if !tc.allow {
			_ = os.Remove(tc.path)
		}
	}
	// /tmp is the program's own tmpfs: writing there works (CLIs need it)
	// but nothing reaches the host's /tmp.
	c.typeLine("write " + hostTmp)
	c.waitOutput("WRITE-OK " + hostTmp)
	if _, err := os.Stat(hostTmp); err == nil {
		_ = os.Remove(hostTmp)
		t.Errorf("a write to /tmp inside the sandbox reached the host: %s", hostTmp)
	}
	// The TUI keeps its terminal inside the sandbox: resize still reaches it.
	c.send(map[string]any{"type": "resize", "cols": 90, "rows": 30})
	c.waitOutput("size=90x30")
	e.stop(st.ID)
}

// The real probe on this machine, and its failure modes with broken wrappers.
func TestProbeSandbox(t *testing.T) {
	tests := []struct {
		name    string
		wrap    WrapFunc
		timeout time.Duration
		want    string
		msg     string
	}{
		{"no backend", nil, 0, SandboxUnsupported, "no sandbox backend"},
		{"wrapper error", func([]string, string, []string) ([]string, error) {
			return nil, fmt.Errorf("bwrap is required")
		}, 0, SandboxUnsupported, "bwrap is required"},
		{"missing binary", func(_ []string, _ string, argv []string) ([]string, error) {
			return append([]string{"/nonexistent/bwrap"}, argv...), nil
		}, 0, SandboxUnsupported, "not installed"},
		{"does not confine", func(_ []string, _ string, argv []string) ([]string, error) {
			return argv, nil
		}, 0, SandboxUnsupported, "did not block"},
		{"fails to start", func(_ []string, _ string, argv []string) ([]string, error) {
			return []string{"/bin/sh", "-c", "echo 'bwrap: No permissions to create new namespace' >&2; exit 1"}, nil
		}, 0, SandboxUnsupported, "No permissions"},
		{"hangs", func(_ []string, _ string, argv []string) ([]string, error) {
			return []string{"/bin/sleep", "30"}, nil
		}, 300 * time.Millisecond, SandboxUnknown, "did not finish"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			r := ProbeSandbox(ctx, tt.wrap, t.TempDir())
			if r.Status != tt.want || !strings.Contains(r.Message, tt.msg) {
				t.Fatalf("probe = %+v, want %s with %q", r, tt.want, tt.msg)
			}
		})
	}
	t.Run("real bubblewrap", func(t *testing.T) {
		requireTool(t, "bwrap")
		r := ProbeSandbox(context.Background(), SandboxWrap(t.TempDir(), nil), t.TempDir())
		if r.Status != SandboxSupported {
			if os.Getenv("CI") == "true" {
				t.Fatalf("probe = %+v", r)
			}
			t.Skipf("bubblewrap does not work here: %+v", r)
		}
	})
}

// rawCode143 finds 128+SIGTERM said as a number (a session id or temp path
// that merely contains the digits does not count).
var rawCode143 = regexp.MustCompile(`\b143\b`)

// The hard and idle limits end forgotten sessions, with a line saying why.
func TestSessionTimeLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits func(*Limits)
		reason string
		notice string
	}{
		{"hard", func(l *Limits) { l.HardTTL = 300 * time.Millisecond }, EndHardTTL, "ended: stopped after reaching the session time limit (300ms)"},
		{"idle", func(l *Limits) { l.IdleTTL = 300 * time.Millisecond }, EndIdle, "ended: stopped after 300ms with no input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, withLimits(tt.limits))
			st := e.start("codex-tui")
			c := e.dial(st.ID)
			exit := c.waitExit()
			if exit["reason"] != tt.reason {
				t.Fatalf("exit frame = %v, want reason %s", exit, tt.reason)
			}
			if !strings.Contains(c.out.String(), tt.notice) {
				t.Fatalf("no notice %q in the terminal:\n%q", tt.notice, c.out.String())
			}
			if n := strings.Count(c.out.String(), "ended:"); n != 1 {
				t.Fatalf("%d end notices in the terminal, want 1:\n%q", n, c.out.String())
			}
			if e.srv.mgr.Active() != nil {
				t.Fatal("the slot is still taken")
			}
		})
	}
}

func TestLimitsFromEnv(t *testing.T) {
	tests := []struct {
		env  map[string]string
		hard time.Duration
		idle time.Duration
		keep int
	}{
		{map[string]string{}, 1800 * time.Second, 900 * time.Second, 20},
		{map[string]string{EnvHardTTL: "120", EnvIdleTTL: "90"}, 120 * time.Second, 90 * time.Second, 20},
		{map[string]string{EnvHardTTL: "5", EnvIdleTTL: "0"}, 60 * time.Second, 60 * time.Second, 20},
		{map[string]string{EnvHardTTL: "-1", EnvKeep: "0"}, 60 * time.Second, 900 * time.Second, 1},
		{map[string]string{EnvHardTTL: "soon", EnvKeep: "x"}, 1800 * time.Second, 900 * time.Second, 20},
	}
	for _, tt := range tests {
		l := LimitsFromEnv(func(k string) string { return tt.env[k] })
		if l.HardTTL != tt.hard || l.IdleTTL != tt.idle || l.KeepSessions != tt.keep {
			t.Errorf("LimitsFromEnv(%v) = %+v", tt.env, l)
		}
	}
}

// Retention removes old and surplus session directories, never the active one.
func TestRetentionCleanup(t *testing.T) {
	e := newTestEnv(t, withLimits(func(l *Limits) { l.Retention = time.Hour; l.KeepSessions = 3 }))
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(e.sessionsDir(), name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	st := e.start("codex-tui")
	// The active session looks ancient, yet must survive.
	if err := os.Chtimes(st.SessionDir, now.Add(-48*time.Hour), now.Add(-48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	old := mk("20200101-000000-aaaaaa", 2*time.Hour)
	recent1 := mk("20200101-000001-bbbbbb", time.Minute)
	recent2 := mk("20200101-000002-cccccc", 2*time.Minute)
	surplus := mk("20200101-000003-dddddd", 3*time.Minute)
	e.srv.mgr.cleanup(now)
	for p, want := range map[string]bool{st.SessionDir: true, old: false, recent1: true, recent2: true, surplus: false} {
		_, err := os.Stat(p)
		if (err == nil) != want {
			t.Errorf("%s kept=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	// Once ended, the session's directory is subject to the rule like any other.
	e.stop(st.ID)
	if _, err := os.Stat(st.SessionDir); err == nil {
		t.Error("the ended, 48h-old session directory survived the cleanup that runs at the end")
	}
}

// Shutting the server down stops the running session.
func TestServerCloseStopsSession(t *testing.T) {
	marker := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	e := newTestEnv(t, withEnv("STANDIN_SLEEP="+marker))
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	sess := e.srv.mgr.Get(st.ID)
	if s := sess.State(); s.Status != StatusEnded || s.EndReason != EndShutdown || s.EndSummary != "stopped because the Synapse server shut down" {
		t.Fatalf("after Close: %+v", s)
	}
	if pids := processesWith(t, "sleep\x00"+marker); len(pids) != 0 {
		t.Fatalf("processes left after Close: %v", pids)
	}
}

func TestStopUnknownSession(t *testing.T) {
	e := newTestEnv(t)
	code, body := e.do("POST", "/api/sessions/nope/stop", map[string]any{})
	if code != http.StatusNotFound || body["code"] != "not_found" {
		t.Fatalf("HTTP %d %v", code, body)
	}
}

func TestTerminalUnknownSession(t *testing.T) {
	e := newTestEnv(t)
	h := http.Header{}
	h.Set("Origin", e.ts.URL)
	h.Set("Authorization", "Bearer "+testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, e.wsURL("nope"), &websocket.DialOptions{HTTPHeader: h})
	if err == nil {
		_ = conn.CloseNow()
		t.Fatal("the terminal of an unknown session was opened")
	}
	if resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("dial: %v (%v), want HTTP 404", err, resp)
	}
}

// The page is self-contained: every script, style and connection is on this server.
func TestPageUsesOnlyLocalAssets(t *testing.T) {
	e := newTestEnv(t)
	req, _ := http.NewRequest("GET", e.ts.URL+"/ui/engines", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("page: HTTP %d", resp.StatusCode)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	if len(refs) < 4 {
		t.Fatalf("expected the page to load xterm.js, its css, the fit add-on and the console script; found %v", refs)
	}
	for _, r := range refs {
		if !strings.HasPrefix(r[1], "/static/") {
			t.Errorf("page loads %q from outside the server's static path", r[1])
		}
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
	for _, asset := range []string{"/static/console.js", "/static/console.css", "/static/vendor/xterm.js", "/static/vendor/xterm.css", "/static/vendor/addon-fit.js"} {
		if strings.HasPrefix(asset, "/static/vendor/") && !e.srv.AssetsPresent() {
			if os.Getenv("CI") == "true" {
				t.Fatalf("xterm.js was not embedded: run scripts/web-assets.sh before go test")
			}
			t.Logf("skipping %s: xterm.js not embedded in this build (run make web-assets)", asset)
			continue
		}
		req, _ := http.NewRequest("GET", e.ts.URL+asset, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Errorf("%s: HTTP %d, %d bytes", asset, resp.StatusCode, len(body))
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Minute: "30 minutes", time.Hour: "1 hour", 2 * time.Hour: "2 hours",
		90 * time.Second: "90 seconds", time.Second: "1 second", 300 * time.Millisecond: "300ms",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// A session directory's modification time is the engine's to set (it owns
// the directory): one dated in the future must not make the directory
// outlive the retention rule or take a kept slot from the newest sessions.
// Its name, which Synapse chose, says when it started.
func TestRetentionIgnoresFutureModTimes(t *testing.T) {
	e := newTestEnv(t, withLimits(func(l *Limits) { l.Retention = time.Hour; l.KeepSessions = 2 }))
	now := time.Now()
	future := now.Add(75 * 365 * 24 * time.Hour)
	mk := func(name string, mod time.Time) string {
		p := filepath.Join(e.sessionsDir(), name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		return p
	}
	startedAt := func(d time.Duration) string { return now.Add(-d).UTC().Format("20060102-150405") }
	tests := []struct {
		path string
		keep bool
	}{
		{mk("20200101-000000-eeeeee", future), false},                       // started years ago
		{mk(startedAt(3*time.Hour)+"-ffffff", future), false},               // started before the retention period
		{mk("not-a-session-name", future), false},                           // no start time to go by
		{mk(startedAt(time.Minute)+"-111111", now.Add(-time.Minute)), true}, // the newest two
		{mk(startedAt(2*time.Minute)+"-222222", future), true},              // started recently: its start time counts
		{mk(startedAt(3*time.Minute)+"-333333", now.Add(-3*time.Minute)), false},
	}
	e.srv.mgr.cleanup(now)
	for _, tt := range tests {
		_, err := os.Stat(tt.path)
		if (err == nil) != tt.keep {
			t.Errorf("%s kept=%v, want %v", filepath.Base(tt.path), err == nil, tt.keep)
		}
	}
}

// agent_home is the engines' to write: a hostile one can leave a symlink
// or a file where the console makes the XDG directories. That must neither
// make the host create directories where the symlink points nor stop every
// later session from starting.
func TestAgentHomeEntriesLeftByAnEngine(t *testing.T) {
	tests := []struct {
		name  string
		entry string // below agent_home
		plant func(t *testing.T, p, outside string)
	}{
		{"dangling symlink", ".local", func(t *testing.T, p, outside string) {
			if err := os.Symlink(filepath.Join(outside, "made", "by", "host"), p); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink to a directory outside", ".local", func(t *testing.T, p, outside string) {
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"symlink below", filepath.Join(".local", "state"), func(t *testing.T, p, outside string) {
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}},
		{"file", ".config", func(t *testing.T, p, outside string) {
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", ".cache", func(t *testing.T, p, outside string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t)
			st := e.start("codex-tui") // makes agent_home
			e.stop(st.ID)
			outside := t.TempDir()
			p := filepath.Join(e.agentHome(), tt.entry)
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			tt.plant(t, p, outside)
			st = e.start("codex-tui")
			e.stop(st.ID)
			for _, d := range []string{".config", ".cache", ".local", ".local/share", ".local/state"} {
				if fi, err := os.Lstat(filepath.Join(e.agentHome(), d)); err != nil || !fi.IsDir() {
					t.Errorf("agent_home/%s is not a directory after the start: %v %v", d, fi, err)
				}
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("the host created %v in the directory the symlink named", entries)
			}
		})
	}
}

// A probe message that is a sentence of its own (bwrap's stderr ends in a
// period) makes a warning with one period, not two.
func TestProbeWarningHasOnePeriod(t *testing.T) {
	e := newTestEnv(t, withProbe(SandboxUnsupported, "the sandbox cannot start here: bwrap: No permissions to create a new namespace."))
	code, body := e.do("POST", "/api/sessions", map[string]any{"engine": "codex-tui"})
	if code != http.StatusCreated {
		t.Fatalf("start: HTTP %d %v", code, body)
	}
	warning, _ := body["warning"].(string)
	if want := "sandbox unsupported: the sandbox cannot start here: bwrap: No permissions to create a new namespace. The session runs without the write boundary."; warning != want {
		t.Errorf("warning = %q\nwant %q", warning, want)
	}
	e.stop(decodeState(t, body["session"]).ID)
}
