package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Bash mode on a terminal: `!cat` reads the keys until Ctrl+D, `ls
// --color=auto` sees a terminal and colours, and the next turn's context
// holds each command with its output.
func TestChatPTYBangGetsTheTerminal(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("Seen."))
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("!cat\r")
	p.send("typed into cat\r")
	p.expect("typed into cat\ntyped into cat") // the terminal's echo, then cat's copy
	p.send("\x04")
	p.expect("exit code 0")
	p.expect(prompt)
	p.send("!ls --color=auto\r")
	p.expect("exit code 0")
	p.expect(prompt)
	p.mu.Lock()
	raw := p.raw.String()
	p.mu.Unlock()
	if !strings.Contains(raw, "m"+"subdir\x1b[0m") && !strings.Contains(raw, "msubdir\x1b[m") {
		t.Errorf("ls --color=auto did not colour a directory: %q", raw[max(0, len(raw)-400):])
	}
	p.send("what did I run?\r")
	p.expect("Seen.")
	req, ok := srv.LastRequest()
	if !ok {
		t.Fatal("no request")
	}
	var all strings.Builder
	for _, m := range req.Messages {
		all.WriteString(m.Text + "\n")
	}
	for _, want := range []string{"`cat`, exit code 0", "typed into cat", "`ls --color=auto`", "subdir"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the turn's context lacks %q:\n%s", want, all.String())
		}
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
