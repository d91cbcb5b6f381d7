package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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
		// Regular expressions, anchored to the whole command word.
		{"go(fmt|imports)?", "gofmt -l .", true},
		{"go(fmt|imports)?", "go vet", true},
		{"go(fmt|imports)?", "gopls", false},
		{"mcp:files:.*", "mcp:files:read --path=a", true},
		{"mcp:files:.*", "mcp:web:fetch", false},
		{"py.*", "echo x | python3 -", true},
		{"it", "git status", false},
		{"^(rm|mv)$", "mv a b", true},
		{"*.sh", "./run.sh", false}, // a glob: the word is "./run.sh"
		{"*.sh", "deploy.sh", true},
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
	cfg, warns = ParseConfig([]byte(`{"PreToolUse": [{"matcher": "rm[", "hooks": [{"type": "command", "command": "x"}]},
		{"matcher": "*.sh|rm", "hooks": [{"type": "command", "command": "y"}]}]}`))
	if len(warns) != 1 || !strings.Contains(warns[0], `"rm[" is neither a regular expression`) || len(cfg[EventPreToolUse]) != 1 {
		t.Errorf("a bad matcher: %v %+v", warns, cfg)
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

func TestHookJSONOutputDecides(t *testing.T) {
	testutil.RequireTool(t, "bash")
	tests := []struct {
		name, stdout string
		want         Verdict
	}{
		{"plain text is context", "remember the style guide", Verdict{Context: "remember the style guide"}},
		{"not JSON after all", "{oops", Verdict{Context: "{oops"}},
		{"block", `{"decision": "block", "reason": "use trash, not rm"}`, Verdict{Block: "use trash, not rm"}},
		{"block without reason", `{"decision": "block"}`, Verdict{Block: "the PreToolUse hook `H` decided to block without a reason"}},
		{"approve decides nothing", `{"decision": "approve", "reason": "fine"}`, Verdict{}},
		{"deny", `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not on main"}}`, Verdict{Block: "not on main"}},
		{"allow decides nothing", `{"hookSpecificOutput": {"permissionDecision": "allow"}}`, Verdict{}},
		{"additional context", `{"hookSpecificOutput": {"additionalContext": "branch is main"}}`, Verdict{Context: "branch is main"}},
		{"continue false", `{"continue": false, "stopReason": "out of budget", "decision": "block", "reason": "x"}`, Verdict{Halt: true, HaltReason: "out of budget"}},
		{"continue true", `{"continue": true}`, Verdict{}},
		{"ask", `{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check with me"}}`, Verdict{Ask: "check with me"}},
		{"ask without reason", `{"hookSpecificOutput": {"permissionDecision": "ask"}}`, Verdict{Ask: "the PreToolUse hook `H` asks for the user's approval"}},
		{"updated input", `{"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}`, Verdict{UpdatedCommand: "ls -la"}},
		{"updated input and ask", `{"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "r", "updatedInput": {"command": "ls -la"}}}`, Verdict{Ask: "r", UpdatedCommand: "ls -la"}},
		{"updated input without a command", `{"hookSpecificOutput": {"updatedInput": {"restart": true}}}`, Verdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "out"), []byte(tt.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, warns := ParseConfig([]byte(`{"PreToolUse": [{"hooks": [{"type": "command", "command": "cat out"}]}]}`))
			if len(warns) > 0 {
				t.Fatal(warns)
			}
			got := NewSet(&Runner{Config: cfg, Env: os.Environ()}).PreToolUse(context.Background(), "", dir, "ls")
			want := tt.want
			want.Block = strings.ReplaceAll(want.Block, "`H`", "`cat out`")
			want.Ask = strings.ReplaceAll(want.Ask, "`H`", "`cat out`")
			if got.Block != want.Block || got.Context != want.Context || got.Halt != want.Halt || got.HaltReason != want.HaltReason || len(got.Problems) > 0 ||
				got.Ask != want.Ask || got.UpdatedCommand != want.UpdatedCommand {
				t.Errorf("verdict %+v, want %+v", got, want)
			}
		})
	}
}

func TestPayloadFieldNames(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	cfg, _ := ParseConfig([]byte(`{"PostToolUse": [{"hooks": [{"type": "command", "command": "cat > post.json"}]}],
		"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "cat > prompt.json"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: os.Environ(), Transcript: func(id string) string { return "/sessions/" + id + ".jsonl" }})
	set.PostToolUse(context.Background(), "s1", dir, "ls -l", "a\nb", false)
	set.UserPromptSubmit(context.Background(), "s1", dir, "fix it")
	for file, want := range map[string]map[string]any{
		"post.json": {"session_id": "s1", "transcript_path": "/sessions/s1.jsonl", "cwd": dir, "hook_event_name": "PostToolUse",
			"tool_name": "Bash", "tool_input": map[string]any{"command": "ls -l"}, "tool_response": map[string]any{"output": "a\nb", "is_error": false}},
		"prompt.json": {"session_id": "s1", "transcript_path": "/sessions/s1.jsonl", "cwd": dir, "hook_event_name": "UserPromptSubmit", "prompt": "fix it"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if g, _ := json.Marshal(got[k]); string(g) != mustJSON(t, v) {
				t.Errorf("%s: %s = %s, want %s", file, k, g, mustJSON(t, v))
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStopHookCanMakeTheAgentGoOn(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	cfg, _ := ParseConfig([]byte(`{"Stop": [{"hooks": [{"type": "command", "command": "cat >> stdin.log; echo >> stdin.log; echo 'tests still fail' >&2; exit 2"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: os.Environ()})
	ran := 0
	set.AddStop("learn", func(context.Context, StopInput) (string, error) { ran++; return "learned", nil })
	outs := set.Stop(context.Background(), StopInput{Cwd: dir, CanContinue: true})
	if len(outs) != 1 || outs[0].Continue != "tests still fail" || ran != 0 {
		t.Fatalf("a Stop hook's exit 2 must ask to go on and hold the other stop hooks back: %+v (others ran %d)", outs, ran)
	}
	outs = set.Stop(context.Background(), StopInput{Cwd: dir, StopHookActive: true})
	if len(outs) != 2 || outs[0].Continue != "" || !strings.Contains(outs[0].Error, "as often as one turn allows") || ran != 1 {
		t.Fatalf("past the limit the turn ends and the others run: %+v", outs)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "stdin.log"))
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) {
		t.Errorf("stdin: %s", data)
	}
}

// A "hooks" value of the wrong shape is explained in JSON terms, never with
// the decoder's Go type names.
func TestParseConfigWrongShape(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"Stop": {"command": "x"}}`, "each event must be an array of matchers, not an object"},
		{`[]`, `"hooks" must be an object, not an array`},
		{`{"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "10"}]}]}`, `"hooks.timeout" must be a number, not a string`},
		{`{"Stop": [`, "unexpected end of JSON input"},
	}
	for _, tt := range tests {
		cfg, warns := ParseConfig([]byte(tt.raw))
		if cfg != nil || len(warns) != 1 || !strings.Contains(warns[0], tt.want) || strings.Contains(warns[0], "hooks.Matcher") || strings.Contains(warns[0], "Go value") {
			t.Errorf("ParseConfig(%s): %q, want one warning with %q", tt.raw, warns, tt.want)
		}
	}
}

// TestHooksSettleFirst: hooks run on the host, so the sandbox's checks
// (Runner.Settle) run before each hook command, not once per event.
func TestHooksSettleFirst(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	n := 0
	cfg, _ := ParseConfig([]byte(`{"PreToolUse": [{"hooks": [
		{"type": "command", "command": "cat settled >> seen"},
		{"type": "command", "command": "cat settled >> seen"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: []string{"PATH=" + os.Getenv("PATH")}, Settle: func() {
		n++
		if err := os.WriteFile(filepath.Join(dir, "settled"), []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}})
	if v := set.PreToolUse(context.Background(), "", dir, "ls"); v.Block != "" || len(v.Problems) != 0 {
		t.Fatalf("verdict: %+v", v)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "seen")); string(b) != "1\n2\n" {
		t.Errorf("the hooks saw %q, want each to run after its own Settle", b)
	}
}

// A stop hook registered under a name already taken replaces the first one
// in its place; it does not run twice.
func TestAddStopReplacesByName(t *testing.T) {
	set := NewSet(nil)
	var ran []string
	add := func(name, tag string) {
		set.AddStop(name, func(context.Context, StopInput) (string, error) { ran = append(ran, tag); return tag, nil })
	}
	add("skill-enhance", "old enhancer")
	add("notes", "notes")
	add("skill-enhance", "new enhancer")
	outs := set.Stop(context.Background(), StopInput{})
	if got := strings.Join(ran, ","); got != "notes,new enhancer" || len(outs) != 2 {
		t.Errorf("ran %q (%d outputs), want notes then the new enhancer, once each", got, len(outs))
	}
}

// The user's Stop entries run before the registered hooks, in the order
// settings.json lists them (docs/hooks.md).
func TestUserStopEntriesRunInFileOrder(t *testing.T) {
	dir := t.TempDir()
	cfg, err := ParseConfig([]byte(`{"Stop": [
		{"hooks": [{"type": "command", "command": "echo first >> order.log"}, {"type": "command", "command": "echo second >> order.log"}]},
		{"hooks": [{"type": "command", "command": "echo third >> order.log"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(&Runner{Config: cfg})
	set.AddStop("code", func(context.Context, StopInput) (string, error) {
		return "", os.WriteFile(filepath.Join(dir, "code-saw.log"), mustRead(t, filepath.Join(dir, "order.log")), 0o644)
	})
	set.Stop(context.Background(), StopInput{Cwd: dir})
	if got := string(mustRead(t, filepath.Join(dir, "code-saw.log"))); got != "first\nsecond\nthird\n" {
		t.Errorf("when the registered hook ran, the user's entries had written %q", got)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
