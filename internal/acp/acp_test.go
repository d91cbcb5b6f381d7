package acp

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// client is the editor's side: the SDK's client connection, recording every
// session/update and answering permission requests with answer.
type client struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	asked   []sdk.RequestPermissionRequest
	answer  string // option id to select ("" cancels the request)
	// decide, when set, chooses the option instead of answer.
	decide   func(sdk.RequestPermissionRequest) string
	onTool   func(sdk.SessionUpdate)
	onUpdate func(sdk.SessionUpdate) // every update, as it arrives
}

func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	f, all := c.onTool, c.onUpdate
	c.mu.Unlock()
	if f != nil && n.Update.ToolCall != nil {
		f(n.Update)
	}
	if all != nil {
		all(n.Update)
	}
	return nil
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, p)
	ans, decide := c.answer, c.decide
	c.mu.Unlock()
	if decide != nil {
		ans = decide(p)
	}
	if ans == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(ans))}, nil
}

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

func (c *client) snapshot() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionUpdate(nil), c.updates...)
}

func (c *client) reset() {
	c.mu.Lock()
	c.updates = nil
	c.mu.Unlock()
}

// world is a fake model, a project outside the temp directory, and a
// synapse ACP server connected to the SDK's client over pipes.
type world struct {
	srv  *llmtest.Server
	proj string
	base string
	cl   *client
	conn *sdk.ClientSideConnection
	env  map[string]string
	mode tool.Mode // the server's starting permission mode (synapse acp --permission-mode)
	init sdk.InitializeResponse
	// hangUp closes the server's input (the editor went away); served is
	// closed when Serve has returned.
	hangUp func()
	served chan struct{}
	raw    io.Writer // the server's input, for bytes the SDK would not send
}

func newWorld(t *testing.T, turns ...llmtest.Turn) *world {
	t.Helper()
	return newWorldIn(t, t.TempDir(), turns...)
}

// newWorldIn is newWorld with the project and home under base (outside
// /tmp, which the sandbox replaces by the session's own, to test what the
// sandbox hides in the home directory).
func newWorldIn(t *testing.T, base string, turns ...llmtest.Turn) *world {
	t.Helper()
	w := &world{srv: llmtest.New(t, turns...), proj: filepath.Join(base, "proj"), base: base, cl: &client{}}
	for _, d := range []string{w.proj, filepath.Join(base, "tmp"), filepath.Join(base, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	w.env = map[string]string{
		"HOME":               filepath.Join(base, "home"),
		"SYNAPSE_HOME":       filepath.Join(base, "home", ".synapse"),
		"ANTHROPIC_BASE_URL": w.srv.URL(),
		"ANTHROPIC_API_KEY":  "llmtest-key",
		"SYNAPSE_MODEL":      "claude-sonnet-4-5",
	}
	w.connect(t)
	return w
}

// connect starts a server (a fresh process would do the same) and
// initializes the protocol. The previous server, if any, ends first, as an
// editor's restart ends its agent: it holds the sessions it loaded.
func (w *world) connect(t *testing.T) {
	t.Helper()
	if w.hangUp != nil {
		w.hangUp()
		<-w.served
	}
	a, err := app.New(testutil.MapEnv(w.env))
	if err != nil {
		t.Fatal(err)
	}
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	opts := Options{App: a, Version: "test", Mode: w.mode} // read here: the test may change w.mode for its next connection
	go func() {
		defer close(done)
		_ = Serve(ctx, opts, toAgentR, toClientW)
		toClientW.Close()
	}()
	t.Cleanup(func() {
		toAgentW.Close()
		cancel()
		<-done
	})
	w.hangUp, w.served, w.raw = func() { toAgentW.Close() }, done, toAgentW
	gate := &gatedReader{r: toClientR, ready: make(chan struct{})} // as Serve does, for the client side
	w.conn = sdk.NewClientSideConnection(w.cl, toAgentW, gate)
	w.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	close(gate.ready)
	init, err := w.conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo: &sdk.Implementation{Name: "test-editor", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !init.AgentCapabilities.LoadSession || init.AgentInfo == nil || init.AgentInfo.Name != "synapse" || init.ProtocolVersion != sdk.ProtocolVersionNumber {
		t.Fatalf("initialize = %+v", init)
	}
	w.init = init
}

func (w *world) newSession(t *testing.T) sdk.SessionId {
	t.Helper()
	res, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(res.SessionId), "session-") {
		t.Fatalf("session id %q is not a Synapse session id", res.SessionId)
	}
	// The session's greeting (its slash commands and usage) follows the
	// answer: the tests look at what comes after it.
	w.waitGreeting(t)
	w.cl.reset()
	return res.SessionId
}

// waitGreeting waits until the client has a session's greeting: an
// available_commands_update and a usage_update.
func (w *world) waitGreeting(t *testing.T) {
	t.Helper()
	waitUpdates(t, w.cl, func(ups []sdk.SessionUpdate) bool {
		var cmds, usage bool
		for _, u := range ups {
			cmds = cmds || u.AvailableCommandsUpdate != nil
			usage = usage || u.UsageUpdate != nil
		}
		return cmds && usage
	})
}

// waitUpdates waits until the client's updates satisfy ok.
func waitUpdates(t *testing.T, c *client, ok func([]sdk.SessionUpdate) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok(c.snapshot()) {
		if time.Now().After(deadline) {
			t.Fatalf("the awaited updates did not come; got %d: %+v", len(c.snapshot()), c.snapshot())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *world) prompt(t *testing.T, id sdk.SessionId, text string) sdk.PromptResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := w.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// toolUpdates collects a call's start and its updates.
func toolUpdates(ups []sdk.SessionUpdate, id string) (start *sdk.SessionUpdateToolCall, updates []*sdk.SessionToolCallUpdate) {
	for _, u := range ups {
		if u.ToolCall != nil && string(u.ToolCall.ToolCallId) == id {
			start = u.ToolCall
		}
		if u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallId) == id {
			updates = append(updates, u.ToolCallUpdate)
		}
	}
	return start, updates
}

func finalStatus(updates []*sdk.SessionToolCallUpdate) sdk.ToolCallStatus {
	var st sdk.ToolCallStatus
	for _, u := range updates {
		if u.Status != nil {
			st = *u.Status
		}
	}
	return st
}

func messageText(ups []sdk.SessionUpdate) (agentText, thought, userText string) {
	for _, u := range ups {
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			agentText += u.AgentMessageChunk.Content.Text.Text
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			thought += u.AgentThoughtChunk.Content.Text.Text
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			userText += u.UserMessageChunk.Content.Text.Text
		}
	}
	return
}

// A prompt streams thinking, the answer, a tool call with its kind and
// completion, a write's diff and the todo list as a plan, and ends the turn;
// session/load in a new connection resumes the saved conversation and
// replays it.
func TestPromptStreamsAndLoadResumes(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t,
		llmtest.Turn{Thinking: "plan it", Text: "Writing the notes.", ToolCalls: []llmtest.ToolCall{
			llmtest.BashCall("w", "write notes.txt 'old line'"),
		}},
		llmtest.BashTurn("e", "edit notes.txt 'old line' 'new line'", `TodoWrite '{"todos":[{"content":"Write notes","activeForm":"Writing notes","status":"completed"}]}'`),
		llmtest.TextTurn("All done."),
		llmtest.TextTurn("Still here."),
	)
	id := w.newSession(t)
	res := w.prompt(t, id, "write some notes")
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	ups := w.cl.snapshot()
	text, thought, _ := messageText(ups)
	if text != "Writing the notes.All done." || thought != "plan it" {
		t.Errorf("agent text %q, thought %q", text, thought)
	}
	start, upd := toolUpdates(ups, "e-1")
	if start == nil || start.Kind != sdk.ToolKindEdit || start.Title != "edit notes.txt 'old line' 'new line'" ||
		len(start.Locations) != 1 || start.Locations[0].Path != filepath.Join(w.proj, "notes.txt") {
		t.Fatalf("edit call start = %+v", start)
	}
	if finalStatus(upd) != sdk.ToolCallStatusCompleted {
		t.Errorf("edit call status = %q", finalStatus(upd))
	}
	var diff *sdk.ToolCallContentDiff
	for _, u := range upd {
		for _, c := range u.Content {
			if c.Diff != nil {
				diff = c.Diff
			}
		}
	}
	if diff == nil || diff.Path != filepath.Join(w.proj, "notes.txt") || diff.OldText == nil || *diff.OldText != "old line" || diff.NewText != "new line" {
		t.Errorf("edit diff = %+v", diff)
	}
	if _, wupd := toolUpdates(ups, "w"); finalStatus(wupd) != sdk.ToolCallStatusCompleted {
		t.Errorf("write call did not complete: %+v", wupd)
	} else if d := wupd[len(wupd)-1].Content[0].Diff; d == nil || d.OldText != nil || d.NewText != "old line" {
		t.Errorf("write of a new file: diff %+v, want no old text", d)
	}
	var plan *sdk.SessionUpdatePlan
	for _, u := range ups {
		if u.Plan != nil {
			plan = u.Plan
		}
	}
	if plan == nil || len(plan.Entries) != 1 || plan.Entries[0].Content != "Write notes" || plan.Entries[0].Status != sdk.PlanEntryStatusCompleted {
		t.Errorf("plan = %+v", plan)
	}
	if b, _ := os.ReadFile(filepath.Join(w.proj, "notes.txt")); string(b) != "new line" {
		t.Errorf("notes.txt = %q", b)
	}

	// A new connection (the editor restarted) loads the session.
	w.cl = &client{}
	w.connect(t)
	if _, err := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	replayed := w.cl.snapshot()
	rtext, _, user := messageText(replayed)
	if user != "write some notes" || !strings.Contains(rtext, "All done.") {
		t.Errorf("replay: user %q, agent %q", user, rtext)
	}
	if _, rupd := toolUpdates(replayed, "e-1"); finalStatus(rupd) != sdk.ToolCallStatusCompleted {
		t.Errorf("replay lacks the edit call's completion")
	} else if d := rupd[len(rupd)-1].Content[0].Diff; diff != nil && (d == nil || d.OldText == nil || *d.OldText != *diff.OldText || d.NewText != diff.NewText || d.Path != diff.Path) {
		t.Errorf("the edit replays with diff %+v, want the live one %+v", d, diff)
	}
	if _, rupd := toolUpdates(replayed, "w"); finalStatus(rupd) != sdk.ToolCallStatusCompleted {
		t.Errorf("replay lacks the write call's completion")
	} else if d := rupd[len(rupd)-1].Content[0].Diff; d == nil || d.OldText != nil || d.NewText != "old line" {
		t.Errorf("the write of a new file replays with diff %+v, want its text and no old text", d)
	}
	w.cl.reset()
	if res := w.prompt(t, id, "and now?"); res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason after load %q", res.StopReason)
	}
	if req := w.srv.Requests()[3]; req.Turns() < 3 || !strings.Contains(req.FirstUserText(), "write some notes") {
		t.Errorf("the loaded session did not send the earlier conversation: %d turns", req.Turns())
	}
	if _, err := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: "session-nope", Cwd: w.proj, McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("loading an unknown session succeeded")
	}
}

// session/cancel while a command runs: the command is stopped, its call
// ends failed, and the prompt answers "cancelled".
func TestCancelMidTool(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.BashTurn("s", "sleep 30"), llmtest.TextTurn("never"))
	id := w.newSession(t)
	w.cl.onTool = func(u sdk.SessionUpdate) {
		go func() {
			time.Sleep(200 * time.Millisecond) // let the command start
			_ = w.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id})
		}()
	}
	start := time.Now()
	res := w.prompt(t, id, "wait a while")
	if res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %q, want cancelled", res.StopReason)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("cancel did not stop sleep 30 promptly")
	}
	s, upd := toolUpdates(w.cl.snapshot(), "s-1")
	if s == nil || s.Kind != sdk.ToolKindExecute || finalStatus(upd) != sdk.ToolCallStatusFailed {
		t.Fatalf("sleep call: start %+v, final status %q", s, finalStatus(upd))
	}
	live := upd[len(upd)-1]
	if raw, _ := live.RawOutput.(map[string]any); raw["status"] != "cancelled" {
		t.Errorf("the cancelled call's rawOutput %+v, want status cancelled", live.RawOutput)
	}
	if w.srv.Count() != 1 {
		t.Errorf("the model was asked again after the cancel: %d requests", w.srv.Count())
	}

	// Loaded again, the cancelled call shows as it ended live.
	w.cl = &client{}
	w.connect(t)
	if _, err := w.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: id, Cwd: w.proj, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	rs, rupd := toolUpdates(w.cl.snapshot(), "s-1")
	if rs == nil || rs.Title != "sleep 30" || finalStatus(rupd) != sdk.ToolCallStatusFailed {
		t.Fatalf("the cancelled call replays as start %+v, status %q", rs, finalStatus(rupd))
	}
	replayed := rupd[len(rupd)-1]
	if raw, _ := replayed.RawOutput.(map[string]any); raw["status"] != "cancelled" || updateText(replayed) != updateText(live) {
		t.Errorf("the cancelled call replays as %q (raw %+v), want as live: %q", updateText(replayed), replayed.RawOutput, updateText(live))
	}
	_, _, user := messageText(w.cl.snapshot())
	if user != "wait a while" {
		t.Errorf("the replay's user text %q", user)
	}
}

// A write the sandbox blocks is asked as session/request_permission; the
// answer is honoured: denied, the file is not written; allowed once, it is.
func TestBlockedWriteAsksPermission(t *testing.T) {
	testutil.RequireBwrap(t)
	for _, tc := range []struct {
		answer  string
		written bool
	}{{optDeny, false}, {optOnce, true}} {
		t.Run(tc.answer, func(t *testing.T) {
			outside := filepath.Join(testutil.OutsideTmp(t), "outside.txt") // not under /tmp, which is the private one
			w := newWorld(t, llmtest.BashTurn("b", "write "+outside+" 'hello'"), llmtest.TextTurn("ok"))
			w.cl.answer = tc.answer
			id := w.newSession(t)
			if res := w.prompt(t, id, "write outside"); res.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("stop reason %q", res.StopReason)
			}
			w.cl.mu.Lock()
			asked := append([]sdk.RequestPermissionRequest(nil), w.cl.asked...)
			w.cl.mu.Unlock()
			if len(asked) != 1 || string(asked[0].ToolCall.ToolCallId) != "b-1" || len(asked[0].Options) != 4 ||
				asked[0].ToolCall.Title == nil || !strings.Contains(*asked[0].ToolCall.Title, outside) {
				t.Fatalf("permission requests = %+v", asked)
			}
			b, err := os.ReadFile(outside)
			if got := err == nil && string(b) == "hello"; got != tc.written {
				t.Errorf("written = %v (%q, %v), want %v", got, b, err, tc.written)
			}
			_, upd := toolUpdates(w.cl.snapshot(), "b-1")
			want := sdk.ToolCallStatusFailed
			if tc.written {
				want = sdk.ToolCallStatusCompleted
			}
			if finalStatus(upd) != want {
				t.Errorf("call status %q, want %q", finalStatus(upd), want)
			}
		})
	}
}

// Bad requests get errors, not a dead connection.
func TestBadRequests(t *testing.T) {
	w := newWorld(t)
	if _, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative cwd: %v", err)
	}
	if _, err := w.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: "session-x", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}}); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("unknown session: %v", err)
	}
	bad := []sdk.McpServer{{Stdio: &sdk.McpServerStdio{Name: "a:b", Command: "x", Args: []string{}, Env: []sdk.EnvVariable{}}}}
	if _, err := w.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: w.proj, McpServers: bad}); err == nil || !strings.Contains(err.Error(), "colons") {
		t.Errorf("bad MCP server name: %v", err)
	}
}

// TestRedTeamCdHomeThenSessionGrant (issue 23): after `cd ~`, the editor
// allows one unrelated file for the session; the rebuilt sandbox must not
// make ~ writable, so the next write to ~/.bashrc asks again (and is denied).
func TestRedTeamCdHomeThenSessionGrant(t *testing.T) {
	testutil.RequireSandbox(t)
	base := testutil.OutsideTmp(t)
	other, home := filepath.Join(base, "other.txt"), filepath.Join(base, "home")
	// The home named by path: the in-process server's shell has the test
	// process's own HOME.
	w := newWorldIn(t, base,
		llmtest.BashTurn("cd", "cd "+home),
		llmtest.BashTurn("grant", "echo x >> "+other),
		llmtest.BashTurn("home", "echo pwned >> "+home+"/.bashrc"),
		llmtest.TextTurn("done"))
	bashrc := filepath.Join(home, ".bashrc")
	if err := os.WriteFile(bashrc, []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w.cl.decide = func(p sdk.RequestPermissionRequest) string {
		if p.ToolCall.Title != nil && strings.Contains(*p.ToolCall.Title, other) {
			return optSession
		}
		return optDeny
	}
	id := w.newSession(t)
	if res := w.prompt(t, id, "go"); res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	if b, _ := os.ReadFile(other); string(b) != "x\n" {
		t.Errorf("the granted file = %q", b)
	}
	if b, _ := os.ReadFile(bashrc); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q: the session grant made ~ writable", b)
	}
	w.cl.mu.Lock()
	n := len(w.cl.asked)
	w.cl.mu.Unlock()
	if n != 2 {
		t.Errorf("asked %d times, want 2 (the grant, then ~/.bashrc)", n)
	}
}
