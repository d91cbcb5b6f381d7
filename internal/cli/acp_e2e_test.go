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
	cmd := exec.Command(synapseBin, "acp")
	cmd.Dir, cmd.Env = e.dir, e.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cl := &acpClient{}
	conn := sdk.NewClientSideConnection(cl, stdin, stdout)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("say hi")}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v\nstderr: %s", res, err, stderr.String())
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
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("synapse acp after stdin closed: %v\nstderr: %s", err, stderr.String())
	}
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

	cmd := exec.Command(synapseBin, "acp", "--permission-mode", "plan")
	cmd.Dir, cmd.Env = e.dir, e.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn := sdk.NewClientSideConnection(&acpClient{}, stdin, stdout)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Modes == nil || s.Modes.CurrentModeId != "plan" {
		t.Errorf("modes = %+v, want plan current", s.Modes)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("synapse acp after stdin closed: %v", err)
	}
}
