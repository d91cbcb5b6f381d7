package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		matcher, command string
		want             bool
	}{
		{"", "anything", true},
		{"*", "ls", true},
		{"Bash", "ls", true},
		{"rm", "rm -rf x", true},
		{"rm", "ls && rm -rf x", true},
		{"rm", "echo rm", false},
		{"rm", "bash -c 'rm x'", true},
		{"git", "cd repo; git push", true},
		{"mcp:*", "mcp:files:read --path=a", true},
		{"mcp:*", "skill:list", false},
		{"rm|mv", "mv a b", true},
		{"write", "write a.txt 'x'", true},
		{"git", "grep git README", false},
	}
	for _, tt := range tests {
		if got := Matches(tt.matcher, tt.command); got != tt.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tt.matcher, tt.command, got, tt.want)
		}
	}
}

func TestParseConfigWarnsAndSkips(t *testing.T) {
	cfg, warns := ParseConfig([]byte(`{
		"PreToolUse": [{"matcher": "rm", "hooks": [{"type": "command", "command": "x", "timeout": 3},
		                                          {"type": "prompt", "command": "y"}, {"type": "command", "command": " "}]}],
		"SessionStart": [{"hooks": [{"type": "command", "command": "z"}]}]}`))
	if len(cfg[EventPreToolUse]) != 1 || len(cfg[EventPreToolUse][0].Hooks) != 1 || cfg[EventPreToolUse][0].Hooks[0].Timeout != 3 {
		t.Errorf("config: %+v", cfg)
	}
	joined := strings.Join(warns, "\n")
	for _, want := range []string{`type "prompt" is not supported`, `"command" is empty`, `unknown event "SessionStart"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q: %s", want, joined)
		}
	}
	if _, warns := ParseConfig([]byte(`{"PreToolUse": "rm"}`)); len(warns) != 1 || !strings.Contains(warns[0], "no hooks run") {
		t.Errorf("malformed: %v", warns)
	}
	if cfg, warns := ParseConfig(nil); cfg != nil || warns != nil {
		t.Errorf("absent: %v %v", cfg, warns)
	}
}

func TestHookTimeoutKillsItAndIsReported(t *testing.T) {
	testutil.RequireTool(t, "bash")
	marker := filepath.Join(t.TempDir(), "survived")
	cfg, _ := ParseConfig([]byte(`{"PreToolUse": [{"hooks": [{"type": "command", "command": "(sleep 2; touch ` + marker + `) & sleep 30", "timeout": 0.3}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: os.Environ()})
	v := set.PreToolUse(context.Background(), "", t.TempDir(), "ls")
	if v.Block != "" || len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Error(), "timed out after 300ms") {
		t.Fatalf("verdict: %+v", v)
	}
	time.Sleep(2500 * time.Millisecond) // the background child would have written by now
	if _, err := os.Stat(marker); err == nil {
		t.Error("the hook's child outlived the timeout: the process group was not killed")
	}
}

func TestStopCommandHooksGetTheAnswer(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	cfg, _ := ParseConfig([]byte(`{"Stop": [{"hooks": [
		{"type": "command", "command": "cat > stdin.json; pwd; echo \"key=${ANTHROPIC_API_KEY:-none}\""},
		{"type": "command", "command": "echo half; exit 3"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: []string{"PATH=" + os.Getenv("PATH")}})
	set.AddStop("builtin", func(context.Context, StopInput) (string, error) { return "from code", nil })
	outs := set.Stop(context.Background(), StopInput{SessionID: "s1", Cwd: dir, FinalAnswer: "the answer"})
	if len(outs) != 2 || outs[0].Hook != "Stop" || outs[1].Text != "from code" {
		t.Fatalf("outputs: %+v", outs)
	}
	if !strings.Contains(outs[0].Text, dir+"\nkey=none\nhalf") || !strings.Contains(outs[0].Error, "exited with status 3") {
		t.Errorf("user Stop output: %+v", outs[0])
	}
	var p Payload
	data, _ := os.ReadFile(filepath.Join(dir, "stdin.json"))
	if err := json.Unmarshal(data, &p); err != nil || p.Event != EventStop || p.SessionID != "s1" || p.FinalAnswer != "the answer" || p.Cwd != dir {
		t.Errorf("payload %s: %+v %v", data, p, err)
	}
	if f := Format(outs); !strings.HasPrefix(f, "── hooks ──\n") || !strings.Contains(f, "[Stop] failed: ") {
		t.Errorf("format: %q", f)
	}
}

func TestZeroSetRunsNothing(t *testing.T) {
	var s *Set
	if v := s.PreToolUse(context.Background(), "", "", "rm x"); v.Block != "" {
		t.Error("nil set blocked")
	}
	if outs := s.Stop(context.Background(), StopInput{}); outs != nil {
		t.Error("nil set ran stop hooks")
	}
}

func TestSubagentViewRunsToolHooksOnly(t *testing.T) {
	testutil.RequireTool(t, "bash")
	cfg, _ := ParseConfig([]byte(`{"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 2"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "exit 2"}]}],
		"Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: os.Environ()})
	set.AddStop("code", func(context.Context, StopInput) (string, error) { return "code", nil })
	sub := set.ForSubagents()
	sub.AddStop("late", func(context.Context, StopInput) (string, error) { return "late", nil })
	dir := t.TempDir()
	if v := sub.PreToolUse(context.Background(), "", dir, "ls"); v.Block == "" {
		t.Error("the sub-agent view skipped PreToolUse")
	}
	if v := sub.UserPromptSubmit(context.Background(), "", dir, "x"); v.Block != "" {
		t.Error("the sub-agent view ran UserPromptSubmit")
	}
	if outs := sub.Stop(context.Background(), StopInput{Cwd: dir}); len(outs) != 0 {
		t.Errorf("the sub-agent view ran stop hooks: %+v", outs)
	}
	if outs := set.Stop(context.Background(), StopInput{Cwd: dir}); len(outs) != 2 {
		t.Errorf("the parent's stop hooks: %+v", outs)
	}
}
