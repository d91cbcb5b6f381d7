package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// The editor's resource links are hostile input: each names a file the
// host-side `read` opens. Links to hidden files, links planted in the
// project that point at them, /proc/self (the agent's own environment
// holds the provider key), FIFOs, devices, the server's own stdin, a huge
// file, `..` and percent-encoding, a newline in the path: none reaches the
// model with what the sandbox hides, none hangs the server, and the prompt
// still runs.
func TestHostileResourceLinks(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorldIn(t, testutil.OutsideTmp(t), llmtest.TextTurn("read them"))
	id := w.newSession(t)
	const secretText = "PRIVATE-KEY-MATERIAL"
	secret := filepath.Join(w.env["HOME"], ".ssh", "id_rsa")
	testutil.WriteFile(t, secret, secretText+"\n")
	link := func(name, target string) string {
		p := filepath.Join(w.proj, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leak := link("leak.txt", secret)
	dirLeak := link("sshdir", filepath.Dir(secret))
	environ := link("env.txt", "/proc/self/environ")
	fifo := filepath.Join(w.proj, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(w.proj, "huge.log")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 100) + "\n"
	if _, err := f.WriteString(strings.Repeat(line, 20000)); err != nil { // 2 MB
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil { // then 4 GB of NULs
		t.Fatal(err)
	}
	f.Close()
	latin1 := filepath.Join(w.proj, "latin1.txt")
	testutil.WriteFile(t, latin1, "caf\xe9 cr\xe8me\n")

	blocks := []sdk.ContentBlock{sdk.TextBlock("look at these")}
	for _, uri := range []string{
		"file://" + secret,
		"file://" + leak,
		"file://" + dirLeak + "/id_rsa",
		"file://" + w.proj + "/../home/.ssh/id_rsa",
		"file://" + strings.ReplaceAll(secret, "/.ssh/", "/%2Essh/"),
		"file://" + environ,
		"file:///proc/self/environ",
		"/proc/1/environ",
		"file://" + fifo,
		"file:///dev/zero",
		"file:///dev/stdin",
		"file://" + huge,
		"file://" + latin1,
		"file://" + w.proj + "/a%0Aread%20" + secret,
		"file://evil.example/" + secret,
		"ssh://" + secret,
	} {
		blocks = append(blocks, sdk.ResourceLinkBlock("x", uri))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := w.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: blocks})
	if err != nil {
		t.Fatalf("prompt: %v (after %s)", err, time.Since(start))
	}
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	req := w.srv.Requests()[0]
	raw := string(req.Raw)
	for _, bad := range []string{secretText, "llmtest-key", "ANTHROPIC_API_KEY"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the model got %q", bad)
		}
	}
	text := req.LastUserText()
	if len(text) > maxContextBytes+64<<10 {
		t.Errorf("the prompt is %d bytes: attachments are not bounded", len(text))
	}
	for _, want := range []string{
		"[file " + fifo + ": could not be read",
		"[file /dev/zero: could not be read",
		"Content of " + huge,
		"caf\ufffd cr\ufffdme",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if t.Failed() || testing.Verbose() {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "[") || strings.HasPrefix(l, "Content of") {
				t.Log(l)
			}
		}
	}
}

// Session ids from the client name saved sessions only: a path, `..`, a
// huge id, "latest" or a prefix of another session's id is refused (a
// session loaded under an id the client did not send could not be
// addressed by it), and nothing outside the sessions directory is read
// or created.
func TestHostileSessionIDs(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.TextTurn("hi"), llmtest.TextTurn("hi again"))
	id := w.newSession(t)
	if res := w.prompt(t, id, "hello"); res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	outside := filepath.Join(w.base, "victim.jsonl")
	testutil.WriteFile(t, outside, `{"role":"user","message":{"role":"user","text":"planted"}}`+"\n")
	for _, bad := range []string{
		"../../victim", "../victim.jsonl", outside, strings.TrimSuffix(outside, ".jsonl"),
		"latest", "session-", string(id)[:len(id)-2], strings.Repeat("a", 1<<20), "session-\x00x", "\n",
	} {
		name := bad
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		_, lerr := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: sdk.SessionId(bad), Cwd: w.proj, McpServers: []sdk.McpServer{}})
		_, rerr := w.conn.ResumeSession(context.Background(), sdk.ResumeSessionRequest{SessionId: sdk.SessionId(bad), Cwd: w.proj, McpServers: []sdk.McpServer{}})
		if lerr == nil || rerr == nil {
			t.Errorf("%q: load %v, resume %v; want both refused", name, lerr, rerr)
		}
		if lerr != nil && len(lerr.Error()) > 4096 {
			t.Errorf("%q: the error echoes %d bytes", name, len(lerr.Error()))
		}
	}
	// The real id still loads, and the client addresses it by that id.
	if _, err := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	if res := w.prompt(t, id, "again"); res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("after load: stop reason %q", res.StopReason)
	}
	if b, _ := os.ReadFile(outside); !strings.Contains(string(b), "planted") || strings.Contains(string(b), "again") {
		t.Errorf("the file outside the sessions directory changed: %q", b)
	}
}

// cwd in session/new: what is not an existing directory is a clear
// invalid-params error; the connection lives on.
func TestHostileCwd(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t)
	file := filepath.Join(w.proj, "file.txt")
	testutil.WriteFile(t, file, "x")
	for _, tc := range []struct{ cwd, want string }{
		{"", "cwd"},
		{"rel/dir", "absolute"},
		{filepath.Join(w.proj, "missing"), "does not exist"},
		{file, "not a directory"},
		{w.proj + "/\x00", "invalid"},
	} {
		_, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: tc.cwd, McpServers: []sdk.McpServer{}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cwd %q: %v, want an error with %q", tc.cwd, err, tc.want)
		}
	}
	w.newSession(t)
}

// The editor's MCP servers are checked as the configured ones are: a name
// with a newline or a terminal escape would reach the model's command
// list, a url of another scheme or a stdio server without a command only
// fails later.
func TestHostileClientMCPServers(t *testing.T) {
	w := newWorld(t)
	stdio := func(name, cmd string) sdk.McpServer {
		return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: cmd, Args: []string{}, Env: []sdk.EnvVariable{}}}
	}
	http := func(name, url string) sdk.McpServer {
		return sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: name, Url: url, Headers: []sdk.HttpHeader{}, Type: "http"}}
	}
	for _, tc := range []struct {
		srv  sdk.McpServer
		want string
	}{
		{stdio("a\nb", "x"), "invalid server name"},
		{stdio("\x1b[2Jred", "x"), "invalid server name"},
		{stdio("ok", ""), "command"},
		{http("web", "file:///etc/passwd"), "http://"},
		{http("web", "unix:///run/docker.sock"), "http://"},
	} {
		_, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{tc.srv}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.srv, err, tc.want)
		}
	}
}
