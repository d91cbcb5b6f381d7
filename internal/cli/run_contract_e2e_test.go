package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Exit status 2 is bad usage, whatever part of the command line is wrong.
func TestRunAndSessionsBadUsageExits2(t *testing.T) {
	e := newRunEnv(t, llmtest.New(t), llmtest.FormatAnthropic)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--no-such-flag", "x"}, "--no-such-flag"},
		{[]string{"run", "--output-format"}, "--output-format"},
		{[]string{"sessions", "extra"}, "extra"},
		{[]string{"sessions", "--no-such-flag"}, "--no-such-flag"},
		{[]string{"chat", "--no-such-flag"}, "--no-such-flag"},
	} {
		r := e.run(t, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "--help") {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming %q and --help", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// Ctrl+C while the agent is still starting (an MCP server that never
// answers) is an interrupt like any other: exit 130, promptly.
func TestRunInterruptDuringStartExits130(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("never asked"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	marker := filepath.Join(e.dir, "server-started")
	cfg := fmt.Sprintf(`{"mcpServers": {"slow": {"command": "/bin/sh", "args": ["-c", "touch %s; exec sleep 60"]}}}`, marker)
	if err := os.MkdirAll(filepath.Join(e.home, "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "mcp", "mcp_servers.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(synapseBin, "run", "hello")
	c.Dir, c.Env = e.dir, e.env
	var errb bytes.Buffer
	c.Stderr = &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = c.Process.Kill()
			t.Fatalf("the MCP server never started; stderr: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = c.Process.Kill()
		t.Fatalf("synapse run kept waiting for the MCP server after Ctrl+C; stderr: %s", errb.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130\nstderr: %s", err, errb.String())
	}
	if srv.Count() != 0 {
		t.Errorf("%d model requests after Ctrl+C", srv.Count())
	}
}

// stream-json is one JSON value per line whatever the model or a command
// prints: control characters, escape sequences, invalid UTF-8, U+2028.
func TestRunStreamJSONLinesSurviveControlCharacters(t *testing.T) {
	nasty := "red \x1b[31mtext\x1b[0m bell\a nul\x00 cr\r line\u2028sep tab\t"
	srv := llmtest.New(t,
		llmtest.Turn{Text: nasty, ToolCalls: []llmtest.ToolCall{llmtest.BashCall("x", `printf 'out\033[2J\x00\xff\xfe\r\n'`)}},
		llmtest.TextTurn("done "+nasty))
	e := newRunEnv(t, srv, llmtest.FormatOpenAI)
	r := e.run(t, "", "run", "--output-format", "stream-json", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var text strings.Builder
	var toolOut string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	lines := 0
	for sc.Scan() {
		lines++
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d is not JSON (%v): %q", lines, err, sc.Text())
		}
		msg, _ := ev["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			b := b.(map[string]any)
			switch b["type"] {
			case "text":
				text.WriteString(b["text"].(string))
			case "tool_result":
				toolOut, _ = b["content"].(string)
			}
		}
	}
	if !strings.Contains(text.String(), nasty) {
		t.Errorf("streamed text = %q, want it to contain %q", text.String(), nasty)
	}
	if !strings.Contains(toolOut, "out\x1b[2J") {
		t.Errorf("tool output = %q", toolOut)
	}
	if lines < 4 {
		t.Errorf("only %d lines: %q", lines, r.stdout)
	}
}
