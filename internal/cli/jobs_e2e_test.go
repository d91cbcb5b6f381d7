package cli

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// liveCmdlines lists running (not zombie) processes whose command line
// holds tag.
func liveCmdlines(tag string) []string {
	var out []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		line := strings.ReplaceAll(string(b), "\x00", " ")
		if err != nil || !strings.Contains(line, tag) {
			continue
		}
		st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(st), ')'); i >= 0 && strings.HasPrefix(string(st[i+1:]), " Z") {
			continue
		}
		out = append(out, line)
	}
	return out
}

// waitUntil polls cond until it holds; the deadline only catches a hang.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(ptyDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sleepTag is a sleep duration unique to the test ("1000.<digits>"), to
// find its processes by command line.
func sleepTag(t *testing.T) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	n, _ := strconv.ParseUint(hex.EncodeToString(b[:]), 16, 64)
	return "1000." + strconv.FormatUint(n, 10)
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func toolResult(t *testing.T, srv *llmtest.Server, id string) string {
	t.Helper()
	reqs := srv.Requests()
	tr, ok := reqs[len(reqs)-1].ToolResult(id)
	if !ok {
		t.Fatalf("no result for call %s", id)
	}
	return tr.Content
}

// The model starts a web server as a job, fetches from it in a later call,
// reads the job's log and stops it: nothing of it is left.
func TestJobsPTYServerCurlReadStop(t *testing.T) {
	testutil.RequireTool(t, "python3")
	testutil.RequireTool(t, "curl")
	port := freePort(t)
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("j1", "job:start python3 -m http.server "+port+" --bind 127.0.0.1")),
		llmtest.ToolTurn(llmtest.BashCall("j2", "job:wait 1 --for 'Serving HTTP' --timeout 20s")),
		llmtest.ToolTurn(llmtest.BashCall("j3", "curl -s http://127.0.0.1:"+port+"/marker.txt")),
		llmtest.ToolTurn(llmtest.BashCall("j4", "job:read 1")),
		llmtest.ToolTurn(llmtest.BashCall("j5", "job:stop 1")),
		llmtest.TextTurn("Server checked."),
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte("served-by-the-job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("Serve the folder and check it\r")
	p.expect("Server checked.")
	p.expect(prompt)
	p.send("/jobs\r")
	p.expect("1  stopped")
	p.expect(prompt)

	if got := toolResult(t, srv, "j1"); !strings.Contains(got, "job 1 started") {
		t.Errorf("job:start result = %q", got)
	}
	if got := toolResult(t, srv, "j2"); !strings.Contains(got, "Serving HTTP") || !strings.Contains(got, "pattern found") {
		t.Errorf("job:wait result = %q", got)
	}
	if got := toolResult(t, srv, "j3"); !strings.Contains(got, "served-by-the-job") {
		t.Errorf("curl result = %q, want the file the job serves", got)
	}
	if got := toolResult(t, srv, "j4"); !strings.Contains(got, "GET /marker.txt") {
		t.Errorf("job:read result = %q, want the server's request log", got)
	}
	if got := toolResult(t, srv, "j5"); !strings.Contains(got, "[job 1 stopped") {
		t.Errorf("job:stop result = %q", got)
	}
	if left := liveCmdlines("http.server " + port); len(left) > 0 {
		t.Errorf("processes left after job:stop: %q", left)
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("/exit: status %d", code)
	}
}

// Ctrl+B during a running command gives the prompt back while the command
// keeps running, and the model's result names the job.
func TestJobsPTYCtrlBMovesCommand(t *testing.T) {
	tag := sleepTag(t)
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("b1", "touch moved.started && sleep "+tag)),
		llmtest.TextTurn("It runs in the background now."),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("Run the long one\r")
	p.expect("sleep " + tag)
	waitForFile(t, filepath.Join(dir, "moved.started"))
	waitUntil(t, "the sleep to run", func() bool { return len(liveCmdlines("sleep "+tag)) > 0 })
	start := time.Now()
	p.send("\x02") // Ctrl+B
	p.expect("moved to the background as job 1")
	p.expect("It runs in the background now.")
	p.expect(prompt)
	t.Logf("Ctrl+B during `sleep` → prompt back in %v", time.Since(start).Round(time.Millisecond))
	if len(liveCmdlines("sleep "+tag)) == 0 {
		t.Error("the moved command is not running")
	}
	got := toolResult(t, srv, "b1")
	if !strings.Contains(got, "background as job 1") || !strings.Contains(got, "job:read 1") {
		t.Errorf("the moved command's result = %q, want the job id", got)
	}
	p.send("/jobs\r")
	p.expect("1  running (moved)")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("/exit: status %d", code)
	}
	waitUntil(t, "the moved command to end with the session", func() bool { return len(liveCmdlines("sleep "+tag)) == 0 })
}

// The end of the session kills a job's whole process tree, a child that
// made a process group of its own included.
func TestJobsPTYSessionEndKillsTree(t *testing.T) {
	tag := sleepTag(t)
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("k1", "job:start 'set -m; sleep "+tag+" & set +m; bash -c \"sleep "+tag+" & sleep "+tag+"\"'")),
		llmtest.TextTurn("Started."),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("Start it\r")
	p.expect("Started.")
	p.expect(prompt)
	waitUntil(t, "the job's three sleeps", func() bool { return len(liveCmdlines("sleep "+tag)) >= 3 })
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("/exit: status %d", code)
	}
	waitUntil(t, "every process of the job to end", func() bool { return len(liveCmdlines("sleep "+tag)) == 0 })
}

// TestJobExitStatusInTheSandbox: a job's exit status reaches the model
// under the sandbox, whose mounts keep the agent's scratch directory
// read-only to commands (it was written to a file there, which failed:
// "status unknown" and a "Read-only file system" line in the job's log).
// make test-landlock runs it under Landlock too.
func TestJobExitStatusInTheSandbox(t *testing.T) {
	testutil.RequireSandbox(t)
	r := synapse(t, t.TempDir(), "exec", `job:start echo hello; exit 3`, "job:wait 1 --timeout 20", "job:list")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "hello") || !strings.Contains(r.stdout, "status 3") || strings.Contains(r.stdout, "Read-only") || strings.Contains(r.stdout, "Permission denied") {
		t.Errorf("the job's status or output did not come through:\n%s", r.stdout)
	}
}
