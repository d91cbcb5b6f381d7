package cli

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// acpClient is an editor that records session updates and refuses the rest.
type acpClient struct {
	mu   sync.Mutex
	text strings.Builder
	done []string // tool calls that completed
}

func (c *acpClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := n.Update.AgentMessageChunk; m != nil && m.Content.Text != nil {
		c.text.WriteString(m.Content.Text.Text)
	}
	if u := n.Update.ToolCallUpdate; u != nil && u.Status != nil && *u.Status == sdk.ToolCallStatusCompleted {
		c.done = append(c.done, string(u.ToolCallId))
	}
	return nil
}
func (c *acpClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeCancelled()}, nil
}
func (c *acpClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (c *acpClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (c *acpClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (c *acpClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (c *acpClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (c *acpClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (c *acpClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// The built binary's `synapse acp`, driven by the SDK's client over its
// stdin/stdout as an editor would: a session in the project, a prompt whose
// tool call completes, end_turn, and a clean exit when the editor closes stdin.
func TestACPBinary(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t, llmtest.BashTurn("c", "echo from-the-shell"), llmtest.TextTurn("answered"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	cl := &acpClient{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := startACP(t, ctx, e, cl)
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("say hi")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v\nstderr: %s", res, err, p.stderr)
	}
	cl.mu.Lock()
	text, done := cl.text.String(), cl.done
	cl.mu.Unlock()
	if text != "answered" || len(done) != 1 || done[0] != "c-1" {
		t.Errorf("text %q, completed calls %v", text, done)
	}
	if tr, ok := srv.Requests()[1].ToolResult("c-1"); !ok || !strings.Contains(tr.Content, "from-the-shell") {
		t.Errorf("tool result = %+v", tr)
	}
	p.close(t)
	_, list := e.sessions(t)
	if len(list) != 1 || list[0].ID != string(s.SessionId) {
		t.Errorf("saved sessions = %+v, want the ACP session %s", list, s.SessionId)
	}
}

// --permission-mode is the mode sessions start in; a bad one is a usage
// error that names the modes.
func TestACPBinaryPermissionMode(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	bad := exec.Command(synapseBin, "acp", "--permission-mode", "yolo")
	bad.Dir, bad.Env = e.dir, e.env
	out, err := bad.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "use one of default, accept-edits, plan, ask") {
		t.Errorf("--permission-mode yolo: %v, %s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := startACP(t, ctx, e, &acpClient{}, "--permission-mode", "plan")
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Modes == nil || s.Modes.CurrentModeId != "plan" {
		t.Errorf("modes = %+v, want plan current", s.Modes)
	}
	p.close(t)
}

// acpProcess is `synapse acp` running with the SDK's client on its pipes.
type acpProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *strings.Builder
	conn   *sdk.ClientSideConnection
}

// startACP runs synapse acp with args in e and initializes the protocol.
func startACP(t *testing.T, ctx context.Context, e runEnv, cl sdk.Client, args ...string) *acpProcess {
	t.Helper()
	p := &acpProcess{cmd: exec.Command(synapseBin, append([]string{"acp"}, args...)...), stderr: &strings.Builder{}}
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = e.dir, e.env, p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil { // a failed test left it running
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	p.conn = sdk.NewClientSideConnection(cl, p.stdin, stdout)
	p.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, p.stderr)
	}
	return p
}

// close ends the editor's side: synapse acp must exit cleanly.
func (p *acpProcess) close(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("synapse acp after stdin closed: %v\nstderr: %s", err, p.stderr)
	}
}

// selectOption is a session config option's current value and values.
func selectOption(t *testing.T, opts []sdk.SessionConfigOption, id string) (string, []string) {
	t.Helper()
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id && o.Select.Options.Ungrouped != nil {
			var values []string
			for _, v := range *o.Select.Options.Ungrouped {
				values = append(values, string(v.Value))
			}
			return string(o.Select.CurrentValue), values
		}
	}
	t.Fatalf("no select config option %q in %+v", id, opts)
	return "", nil
}

// The editor's model picker: --model is the configured model, listed first
// with the provider's current models and next to the permission mode;
// set_config_option "model" switches the model the next prompt is sent
// with and leaves the mode alone; a model not listed is refused with the
// list.
func TestACPBinaryModel(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t, llmtest.TextTurn("first"), llmtest.TextTurn("second"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := startACP(t, ctx, e, &acpClient{}, "--model", "claude-haiku-4-5", "--permission-mode", "accept-edits")
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("new session: %v\nstderr: %s", err, p.stderr)
	}
	const offered = "claude-haiku-4-5,claude-sonnet-4-5,claude-opus-4-5"
	if cur, values := selectOption(t, s.ConfigOptions, "model"); cur != "claude-haiku-4-5" || strings.Join(values, ",") != offered {
		t.Errorf("model option: %q of %v, want claude-haiku-4-5 of %s", cur, values, offered)
	}
	if mode, _ := selectOption(t, s.ConfigOptions, "mode"); mode != "accept-edits" {
		t.Errorf("mode option: %q", mode)
	}
	prompt := func(text string) {
		t.Helper()
		if res, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}}); err != nil || res.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("prompt: %+v, %v\nstderr: %s", res, err, p.stderr)
		}
	}
	prompt("one")
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: s.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	res, err := set("model", "claude-opus-4-5")
	if err != nil {
		t.Fatal(err)
	}
	model, _ := selectOption(t, res.ConfigOptions, "model")
	mode, _ := selectOption(t, res.ConfigOptions, "mode")
	if model != "claude-opus-4-5" || mode != "accept-edits" {
		t.Errorf("after the switch: model %q, mode %q", model, mode)
	}
	if _, err := set("model", "gpt-5"); err == nil || !strings.Contains(err.Error(), "claude-haiku-4-5, claude-sonnet-4-5, claude-opus-4-5") {
		t.Errorf("switch to gpt-5 without the OpenAI provider: %v, want a refusal listing the models", err)
	}
	prompt("two")
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Model != "claude-haiku-4-5" || reqs[1].Model != "claude-opus-4-5" {
		for _, r := range reqs {
			t.Logf("request %d: %s", r.Index, r.Model)
		}
		t.Errorf("want the first request with claude-haiku-4-5 and the second with claude-opus-4-5")
	}
	p.close(t)
}
