package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Claude Code's headless command lines run synapse headless with no
// subcommand: the flags with a meaning here take effect, the rest (and
// flags synapse does not know) are noted on stderr, never bad usage.
func TestHeadlessClaudeFlags(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", "touch refused.txt")),
		llmtest.TextTurn("done"),
	)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	r := e.run(t, "", "-p", "--verbose", "--output-format", "json", "--setting-sources=user,project", "--frobnicate=3",
		"--permission-mode=acceptEdits", "--max-turns=5", "--disallowedTools", "Bash(touch:*) WebFetch",
		"--append-system-prompt", "APPENDED-LINE", "do it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", r.code, r.stderr, r.stdout)
	}
	for _, w := range []string{"--setting-sources (Claude Code's) has no meaning", "--frobnicate is not a flag of synapse", "WebFetch: no such tool here"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	var res struct {
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Result != "done" {
		t.Errorf("result %q (%v) in %s", res.Result, err, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "refused.txt")); err == nil {
		t.Error("--disallowedTools Bash(touch:*): touch ran")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if tr, _ := reqs[1].ToolResult("c1"); !strings.Contains(tr.Content, "--disallowedTools") {
		t.Errorf("the model was not told why: %q", tr.Content)
	}
	if !strings.HasSuffix(reqs[0].System, "APPENDED-LINE") || !strings.Contains(reqs[0].System, "Bash") {
		t.Errorf("--append-system-prompt: system prompt ends %q", reqs[0].System[max(0, len(reqs[0].System)-80):])
	}
}

// Bad values of the flags with a meaning are still bad usage; the REPL
// refuses headless-only flags without -p.
func TestHeadlessClaudeFlagsBadUsage(t *testing.T) {
	srv := llmtest.New(t)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	for _, args := range [][]string{
		{"-p", "--permission-mode", "yolo", "x"},
		{"-p", "--permission-prompt-tool", "mcp__auth__ask", "x"},
		{"-p", "--mcp-config", "{not json", "x"},
		{"--max-turns", "3"},
		{"--bogus"},
	} {
		if r := e.run(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}
