package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// The deadline of every wait below is generous: these tests check that
// things happen, not how fast (figures are logged and reported instead).
const ptyDeadline = 20 * time.Second

// ptyProc is the built binary running on a real pseudo-terminal.
type ptyProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	done chan struct{} // closed when the output ends

	mu  sync.Mutex
	raw bytes.Buffer
	pos int // how far expect has consumed the plain text
}

// startPTY runs synapse with args in dir on a 120×40 terminal.
func startPTY(t *testing.T, dir string, env []string, args ...string) *ptyProc {
	t.Helper()
	c := exec.Command(synapseBin, args...)
	c.Dir = dir
	c.Env = append(env, "TERM=xterm-256color")
	f, err := pty.StartWithSize(c, &pty.Winsize{Cols: 120, Rows: 40})
	if err != nil {
		t.Fatalf("start synapse on a pty: %v", err)
	}
	p := &ptyProc{t: t, cmd: c, tty: f, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			p.mu.Lock()
			p.raw.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return // EIO once the child has exited and closed its side
			}
		}
	}()
	t.Cleanup(func() {
		if c.ProcessState == nil {
			_ = c.Process.Kill()
			_, _ = c.Process.Wait()
		}
		_ = f.Close()
	})
	return p
}

var escapes = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\r`)

// screen is everything written so far, without escape sequences.
func (p *ptyProc) screen() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return escapes.ReplaceAllString(p.raw.String(), "")
}

// expect waits until want appears after what earlier expects consumed, and
// consumes up to its end.
func (p *ptyProc) expect(want string) {
	p.t.Helper()
	deadline := time.Now().Add(ptyDeadline)
	for {
		s := p.screen()
		if i := strings.Index(s[min(p.pos, len(s)):], want); i >= 0 {
			p.pos += i + len(want)
			return
		}
		select {
		case <-p.done:
			if s2 := p.screen(); strings.Contains(s2[min(p.pos, len(s2)):], want) {
				continue
			}
			p.t.Fatalf("synapse ended before showing %q; screen after the last match:\n%s", want, tail(s, p.pos))
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %q; screen after the last match:\n%s", want, tail(s, p.pos))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tail(s string, pos int) string {
	if pos > len(s) {
		pos = len(s)
	}
	return s[pos:]
}

// send types s (a \r is Enter).
func (p *ptyProc) send(s string) {
	p.t.Helper()
	if _, err := io.WriteString(p.tty, s); err != nil {
		p.t.Fatalf("type %q: %v", s, err)
	}
}

// rss reports the process's resident memory (figures for the report, not assertions).
func (p *ptyProc) rss() string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/status")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	var parts []string
	for _, l := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "VmRSS" || k == "VmHWM") {
			parts = append(parts, k+" "+strings.Join(strings.Fields(v), " "))
		}
	}
	return strings.Join(parts, ", ")
}

// wait returns the exit status once the process ends.
func (p *ptyProc) wait() int {
	p.t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			p.t.Fatalf("wait: %v", err)
		}
		return 0
	case <-time.After(ptyDeadline):
		p.t.Fatalf("synapse did not exit; screen:\n%s", tail(p.screen(), p.pos))
		return -1
	}
}

// chatEnv is a private HOME and SYNAPSE_HOME with the fake server as the
// Anthropic endpoint.
func chatEnv(t *testing.T, srv *llmtest.Server) []string {
	return append(testEnv(t), "ANTHROPIC_BASE_URL="+srv.URL(), "ANTHROPIC_API_KEY=test")
}

const prompt = "› "

func TestChatPTYTurnInterruptResumeExit(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Text: "Let me *check* the shell first.", ToolCalls: []llmtest.ToolCall{llmtest.BashCall("c1", "echo tool-says-$((40+2))")}},
		llmtest.TextTurn("The answer is **forty-two**, streamed."),
		llmtest.ToolTurn(llmtest.BashCall("c2", "touch sleep.started && sleep 30")),
	)
	dir := t.TempDir()
	env := chatEnv(t, srv)

	p := startPTY(t, dir, env)
	p.expect("Synapse " + Version)
	p.expect("model claude-sonnet-4-5")
	p.expect("cwd " + dir)
	p.expect("session new")
	p.expect("sandbox ")
	p.expect(prompt)
	t.Logf("idle at the first prompt: %s", p.rss())

	p.send("What is the answer?\r")
	p.expect("Let me check the shell first.")
	p.expect("echo tool-says-$((40+2))") // the tool line
	p.expect("tool-says-42")             // its output
	p.expect("The answer is forty-two, streamed.")
	p.expect(prompt)
	t.Logf("idle after a turn with a tool call: %s", p.rss())

	p.send("Now run the long one\r")
	p.expect("sleep 30")
	waitForFile(t, filepath.Join(dir, "sleep.started"))
	start := time.Now()
	p.send("\x03")
	p.expect("Interrupted")
	p.expect(prompt)
	t.Logf("Ctrl+C during `sleep 30` → prompt back in %v", time.Since(start).Round(time.Millisecond))

	p.send("/exit\r")
	if os.Getenv("SYNAPSE_E2E_SHOW") != "" {
		t.Logf("screen:\n%s", p.raw.String())
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("/exit: status %d, want 0; screen:\n%s", code, p.screen())
	}

	hist, err := os.ReadFile(filepath.Join(envValue(env, "SYNAPSE_HOME"), "prompt_history.jsonl"))
	if err != nil || !strings.Contains(string(hist), `"What is the answer?"`) || !strings.Contains(string(hist), `"/exit"`) {
		t.Errorf("prompt history = %q, %v", hist, err)
	}

	// A second process resumes the conversation from the sessions directory.
	srv.Script(llmtest.TextTurn("Still here after the resume."))
	p2 := startPTY(t, dir, env)
	p2.expect(prompt)
	p2.send("\x1b[A\x1b[A") // history from the first run: Up twice
	p2.expect("Now run the long one")
	p2.send("\x03") // clear the line (the prompt stays where it is, a hint under it)
	p2.expect("press Ctrl+C again")
	p2.send("/resume\r")
	p2.expect("Recent sessions in project " + dir)
	p2.expect("What is the answer?") // the title
	p2.expect("just now")            // its age
	p2.expect("Resume which")
	p2.send("\r")
	p2.expect("Cancelled.")
	p2.expect(prompt)
	p2.send("/resume --latest\r")
	p2.expect("Resumed session ")
	p2.expect(": What is the answer? (")
	// The last turns come back on screen, tool lines folded to one each.
	p2.expect("── last 2 turns of this session ──")
	p2.expect("› What is the answer?")
	p2.expect("▸ echo tool-says-$((40+2))")
	p2.expect("› Now run the long one")
	p2.expect(prompt)
	p2.send("and now?\r")
	p2.expect("Still here after the resume.")
	p2.expect(prompt)
	p2.send("/exit\r")
	if code := p2.wait(); code != 0 {
		t.Fatalf("second /exit: status %d, want 0", code)
	}

	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if got := last.FirstUserText(); !strings.Contains(got, "What is the answer?") {
		t.Errorf("the resumed request starts with %q, want the first conversation", got)
	}
	// History stays consistent after the interrupt: every call kept has its
	// result (the interrupted step may be dropped or kept with its result).
	results := map[string]bool{}
	var calls []string
	for _, m := range last.Messages {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.ID)
		}
		for _, r := range m.ToolResults {
			results[r.ToolCallID] = true
		}
	}
	if len(calls) == 0 || calls[0] != "c1" {
		t.Errorf("resumed request's tool calls = %q, want the first turn's c1 first", calls)
	}
	for _, id := range calls {
		if !results[id] {
			t.Errorf("resumed request has call %s without a result", id)
		}
	}
}

// waitForFile waits until path exists (a command has reached that point).
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(ptyDeadline)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestChatPipedStdinIsPlain(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", "echo piped-$((1+1))")),
		llmtest.TextTurn("Plain answer."),
	)
	dir, env := t.TempDir(), chatEnv(t, srv)
	c := exec.Command(synapseBin)
	c.Dir, c.Env = dir, env
	c.Stdin = strings.NewReader("hello from a pipe\n/cost\n/exit\n")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("synapse with piped stdin: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	s := out.String()
	for _, want := range []string{"Synapse " + Version, "▸ echo piped-$((1+1))", "✓ echo piped-$((1+1))", "piped-2", "Plain answer.", "Tokens: "} {
		if !strings.Contains(s, want) {
			t.Errorf("stdout lacks %q:\n%s", want, s)
		}
	}
	if strings.ContainsAny(s, "\x1b\r") {
		t.Errorf("plain mode wrote escape sequences or carriage returns:\n%q", s)
	}

	// --continue picks the conversation up again.
	c = exec.Command(synapseBin, "chat", "--continue")
	c.Dir, c.Env = dir, env
	c.Stdin = strings.NewReader("/context\n")
	out.Reset()
	c.Stdout = &out
	if err := c.Run(); err != nil {
		t.Fatalf("synapse chat --continue: %v\n%s", err, out.String())
	}
	if s := out.String(); strings.Contains(s, "session new") || !strings.Contains(s, "Messages: 4 · tool calls: 1") {
		t.Errorf("--continue did not resume the conversation:\n%s", s)
	}
}

func TestChatStartupErrors(t *testing.T) {
	tests := []struct {
		name     string
		settings string // written to $SYNAPSE_HOME/settings.json when set
		env      []string
		want     []string
	}{
		{name: "missing API key", want: []string{"no API key", "ANTHROPIC_API_KEY", "settings.json"}},
		{name: "broken settings.json", settings: `{"model": "x",}`, env: []string{"ANTHROPIC_API_KEY=test"},
			want: []string{"settings.json", "line 1"}},
		{name: "unknown provider", env: []string{"ANTHROPIC_API_KEY=test", "SYNAPSE_PROVIDER=bard"},
			want: []string{`"bard"`, "anthropic, openai, gemini, bedrock or vertex"}},
		{name: "bedrock without a region", env: []string{"CLAUDE_CODE_USE_BEDROCK=1", "AWS_EC2_METADATA_DISABLED=true"},
			want: []string{"bedrock", "set AWS_REGION"}},
		{name: "vertex without a project", env: []string{"CLAUDE_CODE_USE_VERTEX=1", "CLOUD_ML_REGION=us-east5"},
			want: []string{"vertex", "ANTHROPIC_VERTEX_PROJECT_ID"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(testEnv(t), tt.env...)
			home := envValue(env, "SYNAPSE_HOME")
			if tt.settings != "" {
				if err := os.MkdirAll(home, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(tt.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c := exec.Command(synapseBin, "chat")
			c.Dir = t.TempDir()
			c.Env = env
			c.Stdin = strings.NewReader("should never be sent\n")
			var out, errb bytes.Buffer
			c.Stdout, c.Stderr = &out, &errb
			err := c.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit = %v, want a non-zero status; stdout:\n%s", err, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb.String())
				}
			}
			if strings.Contains(out.String(), "Synapse ") {
				t.Errorf("a banner was shown despite the error:\n%s", out.String())
			}
			if tt.settings == "" {
				// First run creates nothing secret (and no settings file at all).
				if _, err := os.Stat(filepath.Join(home, "settings.json")); !os.IsNotExist(err) {
					t.Errorf("settings.json was created: %v", err)
				}
			}
		})
	}
}

func TestChatFirstRunWritesNoSecrets(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("hi"))
	env := chatEnv(t, srv)
	c := exec.Command(synapseBin)
	c.Dir = t.TempDir()
	c.Env = env
	c.Stdin = strings.NewReader("hello\n/exit\n")
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	home := envValue(env, "SYNAPSE_HOME")
	// The first run writes the defaults, so the user sees what to change;
	// the key stays in the environment (checked below for every file).
	data, err := os.ReadFile(filepath.Join(home, "settings.json"))
	if err != nil || !bytes.Contains(data, []byte(`"skillEnhance"`)) {
		t.Errorf("settings.json after the first run: %v\n%s", err, data)
	}
	err = filepath.Walk(home, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("ANTHROPIC_API_KEY")) {
			t.Errorf("%s mentions the API key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// TestChatPermissionPrompt drives the sandbox permission prompt: a command
// writing outside the writable paths is blocked, the user is asked, and the
// answer decides: once (retried, not kept), permanently (written to
// sandbox.json for exactly that path), for the session (a file that does not
// exist yet: created by the retry, its directory still read-only) or deny
// (the model is told).
func TestChatPermissionPrompt(t *testing.T) {
	testutil.RequireBwrap(t)
	outside := testutil.OutsideTmp(t) // not the cwd, not the child's temp dir; visible to commands
	files := map[string]string{}
	for _, n := range []string{"once.txt", "perm.txt", "deny.txt"} {
		files[n] = filepath.Join(outside, n)
		if err := os.WriteFile(files[n], nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	newFile, sibling := filepath.Join(outside, "new.txt"), filepath.Join(outside, "sibling.txt")
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("once", "echo granted-once >> "+files["once.txt"])),
		llmtest.ToolTurn(llmtest.BashCall("perm", "echo granted-perm >> "+files["perm.txt"])),
		llmtest.ToolTurn(llmtest.BashCall("new", "echo created > "+newFile)),
		llmtest.ToolTurn(llmtest.BashCall("again", "echo again >> "+newFile), llmtest.BashCall("sib", "echo x > "+sibling)),
		llmtest.ToolTurn(llmtest.BashCall("deny", "echo nope >> "+files["deny.txt"])),
		llmtest.TextTurn("All answered."),
	)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(chatEnv(t, srv), "TMPDIR="+tmp)
	p := startPTY(t, dir, env)
	p.expect(prompt)
	if strings.Contains(p.screen(), "sandbox OFF") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is off on CI:\n%s", p.screen())
		}
		t.Skip("the sandbox cannot run here (bwrap without user namespaces)")
	}
	p.send("append to the three files\r")

	p.expect("The sandbox blocked")
	p.expect("resource: " + files["once.txt"])
	p.expect("[4] deny")
	p.send("1")
	p.expect("allow once: " + files["once.txt"])

	p.expect("resource: " + files["perm.txt"])
	p.send("3")
	p.expect("allow permanently: " + files["perm.txt"])

	p.expect("resource: " + newFile)
	p.send("2")
	p.expect("allow for this session: " + newFile)
	// The session grant holds for the next write; the file beside it is
	// still blocked (asked about, denied).
	p.expect("resource: " + sibling)
	p.send("4")
	p.expect("deny: " + sibling)

	p.expect("resource: " + files["deny.txt"])
	p.send("4")
	p.expect("deny: " + files["deny.txt"])
	p.expect("✗ echo nope >> " + files["deny.txt"])
	p.expect("blocked by the sandbox")
	p.expect("All answered.")
	p.expect(prompt)
	p.send("/sandbox\r")
	p.expect("Session grants:")
	p.expect(files["perm.txt"] + " (allow permanently)")
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	for name, want := range map[string]string{"once.txt": "granted-once\n", "perm.txt": "granted-perm\n", "deny.txt": "", "new.txt": "created\nagain\n"} {
		path := filepath.Join(outside, name)
		if got, _ := os.ReadFile(path); string(got) != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if _, err := os.Stat(sibling); err == nil {
		t.Error("the grant of new.txt widened to its directory: sibling.txt was written")
	}
	reqs := srv.Requests()
	if r, ok := reqs[3].ToolResult("new"); !ok || strings.Contains(r.Content, "blocked") || strings.Contains(r.Content, "ask the user") {
		t.Errorf("the allowed new-file write's result = %+v", r)
	}
	if r, ok := reqs[len(reqs)-1].ToolResult("deny"); !ok || !strings.Contains(r.Content, "The user denied access to "+files["deny.txt"]) {
		t.Errorf("the denied call's result = %+v", r)
	}
	cfg, _, err := sandbox.LoadConfig(filepath.Join(envValue(env, "SYNAPSE_HOME"), "sandbox.json"))
	if err != nil {
		t.Fatalf("sandbox.json: %v", err)
	}
	if len(cfg.Policy.Whitelist) != 1 || cfg.Policy.Whitelist[0] != files["perm.txt"] {
		t.Errorf("sandbox.json whitelist = %q, want exactly [%s]", cfg.Policy.Whitelist, files["perm.txt"])
	}
}

// TestChatPTYNoColorAndResize checks that NO_COLOR turns colours off on a
// terminal, and that a resize (SIGWINCH) reaches the renderer: the same
// tool line is cut to the new, narrower width.
func TestChatPTYNoColorAndResize(t *testing.T) {
	long := "printf %s done-wide # " + strings.Repeat("x", 60) + " TAILMARK"
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("w1", long)),
		llmtest.TextTurn("wide done"),
		llmtest.ToolTurn(llmtest.BashCall("w2", long)),
		llmtest.TextTurn("narrow done"),
	)
	p := startPTY(t, t.TempDir(), append(chatEnv(t, srv), "NO_COLOR=1"))
	p.expect(prompt)
	p.send("wide\r")
	p.expect("wide done")
	p.expect(prompt)
	if err := pty.Setsize(p.tty, &pty.Winsize{Cols: 50, Rows: 40}); err != nil {
		t.Fatal(err)
	}
	p.send("narrow\r")
	p.expect("narrow done")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	var toolLines []string
	for _, l := range strings.Split(p.screen(), "\n") {
		if strings.HasPrefix(l, "✓ printf") {
			toolLines = append(toolLines, l)
		}
	}
	if len(toolLines) != 2 {
		t.Fatalf("want 2 finished tool lines, got %q", toolLines)
	}
	if !strings.HasSuffix(toolLines[0], "TAILMARK") {
		t.Errorf("at 120 columns the tool line is cut: %q", toolLines[0])
	}
	if n := len([]rune(toolLines[1])); n > 50 || strings.Contains(toolLines[1], "TAILMARK") {
		t.Errorf("after resizing to 50 columns the tool line is %d cells: %q", n, toolLines[1])
	}
	p.mu.Lock()
	raw := p.raw.String()
	p.mu.Unlock()
	if m := regexp.MustCompile(`\x1b\[[0-9;]*m`).FindAllString(raw, -1); len(m) > 0 {
		// The line editor's own sequences move the cursor; none set colours.
		for _, s := range m {
			if s != "\x1b[0m" {
				t.Errorf("NO_COLOR output has the SGR sequence %q", s)
				break
			}
		}
	}
}

// TestChatPTYKeysAndBang covers the keys that leave (Ctrl+C clears the line,
// a second one exits; Ctrl+D exits) and `!` commands, which never reach the model.
func TestChatPTYKeysAndBang(t *testing.T) {
	tests := []struct {
		name string
		keys func(p *ptyProc)
	}{
		{"Ctrl+C clears, a second Ctrl+C exits", func(p *ptyProc) {
			p.send("half a prompt")
			p.send("\x03")
			p.expect("press Ctrl+C again or Ctrl+D to exit")
			p.send("\x03")
		}},
		{"Ctrl+D exits", func(p *ptyProc) { p.send("\x04") }},
		{"/quit exits", func(p *ptyProc) { p.send("/quit\r") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t) // any request would fail the test
			p := startPTY(t, t.TempDir(), chatEnv(t, srv))
			p.expect(prompt)
			p.send("!echo bang-$((2+3)); exit 4\r")
			p.expect("bang-5")
			p.expect("exit code 4")
			p.expect(prompt)
			p.send("!\r")
			p.expect("Usage: !<command>")
			p.expect(prompt)
			p.send("/nosuch\r")
			p.expect("unknown command /nosuch: type /help")
			p.expect(prompt)
			p.send("\r") // empty input does nothing
			p.expect(prompt)
			tt.keys(p)
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d, want 0; screen:\n%s", code, p.screen())
			}
			if n := srv.Count(); n != 0 {
				t.Errorf("the model got %d requests", n)
			}
			// The terminal is left as it was found: cooked, echoing.
			tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), reqGetTermios)
			if err != nil {
				t.Fatal(err)
			}
			if tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != unix.ICANON|unix.ECHO|unix.ISIG {
				t.Errorf("terminal left in raw mode: lflag %#x", tio.Lflag)
			}
		})
	}
}

// TestChatSignalAtIdlePrompt: SIGTERM at an idle prompt (and SIGINT in plain
// mode, where Ctrl+C is a signal) ends synapse with 130, terminal restored.
func TestChatSignalAtIdlePrompt(t *testing.T) {
	t.Run("SIGTERM on a terminal", func(t *testing.T) {
		p := startPTY(t, t.TempDir(), chatEnv(t, llmtest.New(t)))
		p.expect(prompt)
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(); code != 130 {
			t.Fatalf("exit %d, want 130", code)
		}
		tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), reqGetTermios)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ICANON == 0 {
			t.Errorf("terminal left in raw mode: lflag %#x", tio.Lflag)
		}
	})
	t.Run("SIGINT with stdin from a pipe", func(t *testing.T) {
		c := exec.Command(synapseBin)
		c.Dir = t.TempDir()
		c.Env = chatEnv(t, llmtest.New(t))
		stdin, err := c.StdinPipe() // kept open: no end of input
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		out := &syncWriter{}
		c.Stdout = out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(ptyDeadline); !strings.Contains(out.String(), "Ctrl+D to exit."); {
			if time.Now().After(deadline) {
				_ = c.Process.Kill()
				t.Fatalf("no banner: %q", out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := c.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- c.Wait() }()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Errorf("exit = %v, want status 130", err)
			}
		case <-time.After(ptyDeadline):
			_ = c.Process.Kill()
			t.Fatal("SIGINT did not end synapse waiting on a pipe")
		}
	})
}

type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// BenchmarkChatStartupToExit is a whole process: start, build the agent,
// show the banner, read /exit, shut down (no model request is made).
//
//	go test ./internal/cli -run '^$' -bench ChatStartup -benchtime 30x
func BenchmarkChatStartupToExit(b *testing.B) {
	home := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + filepath.Join(home, ".synapse"),
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=http://127.0.0.1:9"}
	dir := b.TempDir()
	for b.Loop() {
		c := exec.Command(synapseBin)
		c.Dir, c.Env = dir, env
		c.Stdin = strings.NewReader("/exit\n")
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// BenchmarkVersion is `synapse --version`, the floor of any start.
func BenchmarkVersion(b *testing.B) {
	for b.Loop() {
		if out, err := exec.Command(synapseBin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// TestChatPTYEnterDuringStartSubmits: a prompt typed with Enter while
// Synapse is still starting (here: an MCP server that takes its time) is
// sent when the REPL is up, not left in the editor as a line break.
func TestChatPTYEnterDuringStartSubmits(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t, llmtest.TextTurn("Got it."))
	env := chatEnv(t, srv)
	dir := testutil.OutsideTmp(t) // the server runs sandboxed: it can write here, not in the host /tmp
	started, release := filepath.Join(dir, "started"), filepath.Join(dir, "release")
	testutil.WriteFile(t, filepath.Join(envValue(env, "SYNAPSE_HOME"), "mcp", "mcp_servers.json"), fmt.Sprintf(
		`{"mcpServers": {"slow": {"command": "sh", "args": ["-c", %q]}}}`,
		"touch "+started+"; while [ ! -e "+release+" ]; do sleep 0.05; done; exit 1"))
	p := startPTY(t, dir, env)
	for { // the server runs: Synapse is starting, the REPL not yet up
		if _, err := os.Stat(started); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.send("hello from the start\r")
	testutil.WriteFile(t, release, "")
	p.expect("Got it.")
	p.expect(prompt)
	if req, ok := srv.LastRequest(); !ok || !strings.HasSuffix(req.LastUserText(), "\n\nhello from the start") {
		t.Errorf("the model got %q", req.LastUserText())
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
