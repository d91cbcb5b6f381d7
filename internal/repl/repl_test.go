package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

// fakeAgent stands in for agent.Runner; run decides what a turn does.
type fakeAgent struct {
	mu       sync.Mutex
	inputs   []string
	model    string
	sessID   string
	history  []llm.Message
	usage    *session.Usage
	resets   int
	resumed  []string
	run      func(ctx context.Context, input string) (agent.Result, error)
	resumeFn func(id string) error
}

func (f *fakeAgent) Run(ctx context.Context, input string) (agent.Result, error) {
	f.mu.Lock()
	f.inputs = append(f.inputs, input)
	run := f.run
	f.mu.Unlock()
	if run != nil {
		return run(ctx, input)
	}
	return agent.Result{}, nil
}
func (f *fakeAgent) Reset() { f.mu.Lock(); f.resets++; f.history = nil; f.mu.Unlock() }
func (f *fakeAgent) Resume(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.resumeFn != nil {
		if err := f.resumeFn(id); err != nil {
			return err
		}
	}
	f.resumed = append(f.resumed, id)
	f.sessID = id
	return nil
}
func (f *fakeAgent) Model() string                { f.mu.Lock(); defer f.mu.Unlock(); return f.model }
func (f *fakeAgent) SetModel(m string)            { f.mu.Lock(); f.model = m; f.mu.Unlock() }
func (f *fakeAgent) SessionID() string            { f.mu.Lock(); defer f.mu.Unlock(); return f.sessID }
func (f *fakeAgent) SessionUsage() *session.Usage { return f.usage }
func (f *fakeAgent) History() []llm.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Message(nil), f.history...)
}

func (f *fakeAgent) Inputs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inputs...)
}

// waitInputs waits until n prompts have reached the agent and returns them.
func (f *fakeAgent) waitInputs(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		in := f.Inputs()
		if len(in) >= n || time.Now().After(deadline) {
			return in
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type fakeSessions []session.Entry

func (s fakeSessions) List() ([]session.Entry, error) { return s, nil }

// newREPL builds a REPL from o after tweak (may be nil) adjusted it.
func newREPL(t *testing.T, o Options, tweak func(*Options)) *REPL {
	t.Helper()
	if tweak != nil {
		tweak(&o)
	}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runPiped runs the REPL over piped input and returns its output and status.
func runPiped(t *testing.T, fa *fakeAgent, input string, tweak func(*Options)) (string, int) {
	t.Helper()
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	o := Options{In: strings.NewReader(input), Out: &out, Renderer: rd, View: view.New(rd), Agent: fa,
		Version: "test", Cwd: "/work"}
	code := newREPL(t, o, tweak).Run(context.Background())
	return out.String(), code
}

func TestPipedPromptsAndCommands(t *testing.T) {
	cases := []struct {
		name       string
		input      string
		wantInputs []string
		wantOut    []string
		code       int
	}{
		{"empty input does nothing", "\n   \n", nil, nil, 0},
		{"a prompt runs a turn", "hello\n", []string{"hello"}, nil, 0},
		{"backslash continues a line", "first \\\nsecond\n", []string{"first \nsecond"}, nil, 0},
		{"/exit stops reading", "/exit\nnot run\n", nil, nil, 0},
		{"/quit stops reading", "/quit\nnot run\n", nil, nil, 0},
		{"unknown command points to /help", "/nope\n", nil, []string{"unknown command /nope: type /help"}, 0},
		{"/help lists commands", "/help\n", nil, []string{"/clear", "/cost", "/context", "/model [name]", "/resume [--latest | --all | id]", "/sandbox", "/tools", "!<command>"}, 0},
		{"bare ! shows usage", "!\n", nil, []string{"Usage: !<command>"}, 0},
		{"/model shows and switches", "/model\n/model other-model\n/model\n", nil, []string{"Model: m1", "Model for this session: other-model", "Model: other-model"}, 0},
		{"last line without newline", "hi", []string{"hi"}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fa := &fakeAgent{model: "m1"}
			out, code := runPiped(t, fa, c.input, nil)
			if code != c.code {
				t.Errorf("exit code %d, want %d", code, c.code)
			}
			if got := fa.Inputs(); fmt.Sprint(got) != fmt.Sprint(c.wantInputs) {
				t.Errorf("turns %q, want %q", got, c.wantInputs)
			}
			for _, w := range c.wantOut {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "\x1b[") {
				t.Errorf("escape sequences in piped output:\n%q", out)
			}
		})
	}
}

func TestBangRunsShellOutsideConversation(t *testing.T) {
	fa := &fakeAgent{}
	var ran []string
	out, _ := runPiped(t, fa, "!echo hi\n!false\n", func(o *Options) {
		o.Shell = func(_ context.Context, cmd string) (command.Result, error) {
			ran = append(ran, cmd)
			if cmd == "false" {
				return command.Result{Stderr: "oops\n", ExitCode: 1}, nil
			}
			return command.Result{Stdout: "hi\n"}, nil
		}
	})
	if fmt.Sprint(ran) != "[echo hi false]" {
		t.Errorf("shell ran %q", ran)
	}
	for _, w := range []string{"hi\nexit code 0\n", "oops\nexit code 1\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if len(fa.Inputs()) != 0 {
		t.Errorf("! commands reached the model: %q", fa.Inputs())
	}
}

func TestClearCostContextResume(t *testing.T) {
	now := time.Date(2025, 1, 2, 12, 0, 0, 0, time.UTC)
	fa := &fakeAgent{model: "claude-x", sessID: "cur",
		history: []llm.Message{{Role: llm.RoleUser, Text: "q"}, {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1"}, {ID: "2"}}}},
		usage:   &session.Usage{InputTokens: 1000, OutputTokens: 250, CacheReadTokens: 3000, CacheCreationTokens: 1000, Priced: true, CostUSD: 0.0123, RoundCount: 2},
	}
	sessions := fakeSessions{
		{ID: "cur", Title: "current", UpdatedAt: now, MessageCount: 2},
		{ID: "abcdef0123456789", Title: "fix the parser", UpdatedAt: now.Add(-3 * time.Hour), MessageCount: 7},
		{ID: "older", Title: "", UpdatedAt: now.Add(-72 * time.Hour), MessageCount: 2},
	}
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	sink := view.New(rd)
	sink.Handle(agent.Event{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 500, CacheReadTokens: 49500}})
	r, err := New(Options{In: strings.NewReader("/cost\n/context\n/resume\n1\n/resume --latest\n/resume abc\n/clear\n"),
		Out: &out, Renderer: rd, View: sink, Agent: fa, Sessions: sessions, Now: func() time.Time { return now },
		ContextWindow: func(string) int { return 200000 }})
	if err != nil {
		t.Fatal(err)
	}
	if code := r.Run(context.Background()); code != 0 {
		t.Fatalf("exit %d", code)
	}
	s := out.String()
	for _, w := range []string{
		"Tokens: 5,000 in, 250 out", // 1,000 new + 3,000 read from the cache + 1,000 written to it
		"Cache: 3,000 read, 1,000 written, hit rate 60%",
		"Cost: $0.0123",
		"Context: 50,000 of 200,000 tokens (25%) for claude-x",
		"Messages: 2 · tool calls: 2",
		"1. abcdef0123456789  fix the parser  (3h ago, 7 messages)",
		"2. older  (untitled)  (3d ago, 2 messages)",
		"Resumed session abcdef0123456789: fix the parser (2 messages).",
		"Started a new conversation.",
	} {
		if !strings.Contains(s, w) {
			t.Errorf("output lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "current  (") {
		t.Errorf("/resume offers the current session:\n%s", s)
	}
	if fmt.Sprint(fa.resumed) != "[abcdef0123456789 cur abc]" || fa.resets != 1 {
		t.Errorf("resumed %q, resets %d", fa.resumed, fa.resets)
	}
}

func TestTurnErrorsShownOnce(t *testing.T) {
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	sink := view.New(rd)
	provErr := errors.New("model request failed: 401 invalid x-api-key")
	fa := &fakeAgent{run: func(ctx context.Context, input string) (agent.Result, error) {
		if input == "emitted" {
			sink.Handle(agent.Event{Kind: agent.Error, Err: provErr})
			return agent.Result{}, provErr
		}
		return agent.Result{}, errors.New("save session: disk full")
	}}
	r, _ := New(Options{In: strings.NewReader("emitted\nsilent\n"), Out: &out, Renderer: rd, View: sink, Agent: fa})
	r.Run(context.Background())
	s := out.String()
	if strings.Count(s, "401 invalid x-api-key") != 1 || strings.Count(s, "disk full") != 1 {
		t.Errorf("each error should show exactly once:\n%s", s)
	}
}

// ptyREPL runs a REPL on the slave side of a real pseudo-terminal in raw mode.
type ptyREPL struct {
	t      *testing.T
	master *os.File
	out    *syncBuffer
	done   chan int
	repl   *REPL
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startPTY(t *testing.T, fa *fakeAgent, tweak func(*Options)) *ptyREPL {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		testutil.SkipOrFail(t, "no pseudo-terminal available: %v", err)
	}
	old, err := term.MakeRaw(int(slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	p := &ptyREPL{t: t, master: master, out: &syncBuffer{}, done: make(chan int, 1)}
	go func() { _, _ = io.Copy(p.out, master) }()
	rd := render.New(render.Options{Out: slave, TTY: true, Width: 80, Height: 24})
	o := Options{In: slave, Out: slave, TTY: true, Width: 80, Renderer: rd, View: view.New(rd), Agent: fa,
		Version: "test", Cwd: "/work"}
	r := newREPL(t, o, tweak)
	p.repl = r
	go func() { p.done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		_ = term.Restore(int(slave.Fd()), old)
		slave.Close()
		master.Close()
	})
	p.waitFor("› ")
	return p
}

func (p *ptyREPL) send(s string) {
	p.t.Helper()
	if _, err := p.master.Write([]byte(s)); err != nil {
		p.t.Fatal(err)
	}
}

// waitFor waits until the output holds want n times in all (n defaults to 1).
func (p *ptyREPL) waitFor(want string, n ...int) {
	p.t.Helper()
	times := 1
	if len(n) > 0 {
		times = n[0]
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(p.out.String(), want) >= times {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %q (x%d); output:\n%q", want, times, p.out.String())
}

func (p *ptyREPL) exitCode() int {
	p.t.Helper()
	select {
	case c := <-p.done:
		return c
	case <-time.After(10 * time.Second):
		p.t.Fatalf("REPL did not exit; output:\n%q", p.out.String())
		return -1
	}
}

func TestPTYCtrlCCancelsTurnAndReturnsToPrompt(t *testing.T) {
	started := make(chan struct{}, 1)
	var sawCancel bool
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		p.repl.o.View.Handle(agent.Event{Kind: agent.ToolStart, CallID: "1", Command: "sleep 100"})
		started <- struct{}{}
		<-ctx.Done()
		sawCancel = true
		return agent.Result{}, fmt.Errorf("tool execution: %w", agent.ErrInterrupted)
	}
	p.send("run something long\r")
	<-started
	p.waitFor("sleep 100")
	p.send("\x03")
	p.waitFor("Interrupted.")
	p.waitFor("› ", 2)
	if !sawCancel {
		t.Fatal("Ctrl+C did not cancel the turn's context")
	}
	p.send("/exit\r")
	if c := p.exitCode(); c != 0 {
		t.Errorf("/exit status %d", c)
	}
	if !strings.Contains(p.out.String(), "✗ sleep 100 · interrupted") {
		t.Errorf("the cancelled tool is not marked:\n%q", p.out.String())
	}
}

func TestPTYCtrlCAtPromptClearsThenExits(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	p.send("half typed")
	p.waitFor("half typed")
	p.send("\x03")
	p.waitFor("press Ctrl+C again")
	p.send("second\r") // the cleared line is gone; only this runs
	p.waitFor("› ", 2)
	if strings.Contains(strings.Join(p.screen().lines(), "\n"), "press Ctrl+C again") {
		t.Error("the Ctrl+C hint stayed on screen after the next key")
	}
	if got := fa.Inputs(); fmt.Sprint(got) != "[second]" {
		t.Fatalf("turns %q, want [second]", got)
	}
	// Typing between two Ctrl+C disarms the exit: the second only clears.
	p.send("\x03")
	p.waitFor("press Ctrl+C again", 2)
	p.send("abc")
	p.waitScreen("abc typed", func(s *screen) bool { return s.cursorLine() == "› abc" })
	p.send("\x03")
	p.waitFor("press Ctrl+C again", 3)
	select {
	case c := <-p.done:
		t.Fatalf("Ctrl+C after typing exited (status %d)", c)
	case <-time.After(100 * time.Millisecond):
	}
	p.send("\x03")
	if c := p.exitCode(); c != 0 {
		t.Errorf("double Ctrl+C status %d", c)
	}
}

func TestPTYCtrlDExits(t *testing.T) {
	p := startPTY(t, &fakeAgent{}, nil)
	p.send("\x04")
	if c := p.exitCode(); c != 0 {
		t.Errorf("Ctrl+D status %d", c)
	}
	// Bracketed paste and the kitty keyboard level were asked for at the
	// start and are given back at the end.
	p.waitFor(leaveKeyModes)
	out := p.out.String()
	if i, j := strings.Index(out, enterKeyModes), strings.LastIndex(out, leaveKeyModes); i < 0 || j < i {
		t.Errorf("terminal modes not set then restored: %q", out)
	}
}

func TestPTYHistoryPersistsAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	tweak := func(o *Options) { o.HistoryPath = path }
	fa := &fakeAgent{}
	p := startPTY(t, fa, tweak)
	p.send("remember me\r")
	p.waitFor("› ", 2)
	p.send("/exit\r")
	p.exitCode()

	fa2 := &fakeAgent{}
	p2 := startPTY(t, fa2, tweak)
	p2.send("\x1b[A\x1b[A\r") // up twice: past /exit to the prompt before it
	p2.waitFor("› ", 2)
	if got := fa2.Inputs(); fmt.Sprint(got) != "[remember me]" {
		t.Fatalf("recalled %q, want [remember me]", got)
	}
}

func TestPTYPasteIsOnePrompt(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	p.send("\x1b[200~line one\rline two\r\x1b[201~\r")
	p.waitFor("› ", 2)
	if got := fa.Inputs(); len(got) != 1 || got[0] != "line one\nline two" {
		t.Fatalf("turns %q, want one prompt with both lines", got)
	}
}

func TestPTYPermissionPrompt(t *testing.T) {
	decisions := make(chan tool.Decision, 1)
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		decisions <- p.repl.perm.Approve(ctx, tool.ApprovalRequest{Command: "cat ~/.ssh/id_rsa", Resource: "/root/.ssh/id_rsa", Reason: "path is outside the writable whitelist"})
		return agent.Result{}, nil
	}
	p.send("read my key\r")
	p.waitFor("[4] deny")
	p.send("2")
	if d := <-decisions; d != tool.Session {
		t.Fatalf("decision %v, want allow for this session", d)
	}
	p.waitFor("› ", 2)
	p.send("/sandbox\r")
	p.waitFor("/root/.ssh/id_rsa (allow for this session)")
}

// TestPTYPermissionPromptForABlacklistedPath: a path that can never be
// granted gets no choice: the prompt says why and the answer is deny, with
// no key pressed.
func TestPTYPermissionPromptForABlacklistedPath(t *testing.T) {
	decisions := make(chan tool.Decision, 1)
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		decisions <- p.repl.perm.Approve(ctx, tool.ApprovalRequest{Command: "cat ~/.ssh/id_rsa", Resource: "~/.ssh", Reason: "path is on the sandbox blacklist (~/.ssh)",
			Refusal: "~/.ssh is on the sandbox blacklist (~/.ssh): blacklisted paths stay hidden from every command and cannot be allowed"})
		return agent.Result{}, nil
	}
	p.send("read my key\r")
	p.waitFor("This cannot be allowed: ~/.ssh is on the sandbox blacklist")
	p.waitFor("→ deny: ~/.ssh")
	if d := <-decisions; d != tool.Deny {
		t.Fatalf("decision %v, want deny", d)
	}
}

func TestAskPermissionWithoutTerminalDenies(t *testing.T) {
	var out bytes.Buffer
	rd := render.New(render.Options{Out: &out})
	r, _ := New(Options{In: strings.NewReader(""), Out: &out, Renderer: rd, Agent: &fakeAgent{}})
	if d := r.perm.Approve(context.Background(), tool.ApprovalRequest{Command: "x", Resource: "/etc/shadow"}); d != tool.Deny {
		t.Errorf("got %v, want deny", d)
	}
}

// TestContextEndsWaitForInput: SIGTERM (or SIGINT in plain mode) cancels
// the context while the REPL waits at the prompt; it must return 130 rather
// than wait for a key or a line that may never come.
func TestContextEndsWaitForInput(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprintf("tty=%v", tty), func(t *testing.T) {
			var in io.Reader
			var out io.Writer
			shown := &syncBuffer{}
			if tty {
				master, slave, err := pty.Open()
				if err != nil {
					t.Fatalf("open pty: %v", err)
				}
				defer master.Close()
				defer slave.Close()
				go func() { _, _ = io.Copy(shown, master) }()
				in, out = slave, slave
			} else {
				pr, pw := io.Pipe() // open, never written: input that never comes
				defer pw.Close()
				in, out = pr, shown
			}
			rd := render.New(render.Options{Out: out, TTY: tty})
			r, err := New(Options{In: in, Out: out, TTY: tty, Renderer: rd, Agent: &fakeAgent{}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			go func() { done <- r.Run(ctx) }()
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(shown.String(), "Ctrl+D to exit."); {
				if time.Now().After(deadline) {
					t.Fatalf("no banner: %q", shown.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // let Run reach its wait for input (ordering, not speed)
			cancel()
			select {
			case code := <-done:
				if code != 130 {
					t.Errorf("status %d, want 130", code)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run kept waiting for input after its context ended")
			}
		})
	}
}

func TestHistoryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "history")
	h, err := LoadHistory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"one", "two\nlines", "two\nlines", " ", "three"} {
		h.Add(e)
	}
	if err := os.WriteFile(path+".x", nil, 0o600); err != nil { // unrelated file
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("not json\n")
	f.Close()
	h2, err := LoadHistory(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%q", h2.Entries()); got != `["one" "two\nlines" "three"]` {
		t.Errorf("entries %s", got)
	}
	if h2.At(0) != "three" || h2.Len() != 3 {
		t.Errorf("At(0)=%q Len=%d", h2.At(0), h2.Len())
	}
}

// On a terminal, a command's answer wider than the screen is word-wrapped
// (the terminal would cut it mid-word); piped, lines stay whole.
func TestPrintlnWordWraps(t *testing.T) {
	long := "Thresholds: offload large older results at 120,000 (60%), compact at 160,000 (80%)"
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		rd := render.New(render.Options{Out: &out})
		r := newREPL(t, Options{In: strings.NewReader(""), Out: &out, TTY: tty, Width: 40, Renderer: rd, View: view.New(rd), Agent: &fakeAgent{}}, nil)
		out.Reset() // the editor's bracketed-paste switch
		r.println(long)
		rows := strings.Split(strings.TrimRight(out.String(), "\r\n"), "\n")
		if !tty {
			if len(rows) != 1 || rows[0] != long {
				t.Errorf("piped: %q, want the line whole", out.String())
			}
			continue
		}
		var words []string
		for _, row := range rows {
			row = strings.TrimRight(row, "\r ")
			if len(row) > 39 {
				t.Errorf("row %q is wider than the terminal", row)
			}
			words = append(words, strings.Fields(row)...)
		}
		if strings.Join(words, " ") != long {
			t.Errorf("words split across rows:\n%s", out.String())
		}
		r.SetSize(100, 30)
		out.Reset()
		r.println(long)
		if got := strings.TrimRight(out.String(), "\r\n"); got != long {
			t.Errorf("after a resize to 100 columns: %q, want one row", got)
		}
	}
}
