package headless

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/headless/headlesstest"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

func toolRes(out string, isErr bool, facts tool.Facts) *tool.Result {
	r := &tool.Result{Output: out, IsError: isErr, Facts: facts}
	if isErr {
		r.Message = "Command failed with exit code 1 (execution_error)"
	}
	return r
}

// bashCalls are the Bash calls of a model response: id, command, id, command…
func bashCalls(idCommand ...string) []llm.ToolCall {
	var calls []llm.ToolCall
	for i := 0; i+1 < len(idCommand); i += 2 {
		in, _ := json.Marshal(map[string]string{"command": idCommand[i+1]})
		calls = append(calls, llm.ToolCall{ID: idCommand[i], Name: ToolName, Input: in})
	}
	return calls
}

// headlessCases are event sequences as the runner emits them, covering
// every stream-json event type; each is rendered and compared with its
// golden file (go test -run TestStreamJSONGolden -update rewrites them).
var headlessCases = []struct {
	name    string
	format  string
	partial bool
	events  []agent.Event
	sum     Summary
}{
	{
		name: "success", format: "stream-json", partial: true,
		events: []agent.Event{
			{Kind: agent.Retry, Text: "the model request failed (overloaded); retrying in 1s (attempt 2 of 4)"},
			{Kind: agent.ThinkingDelta, Text: "Let me "},
			{Kind: agent.ThinkingDelta, Text: "look."},
			{Kind: agent.TextDelta, Text: "Checking "},
			{Kind: agent.TextDelta, Text: "the files."},
			{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 1200, OutputTokens: 40, CacheReadTokens: 800}, StopReason: "tool_use",
				Calls: bashCalls("toolu_1", `TodoWrite '{"todos":[{"content":"List files","activeForm":"Listing files","status":"in_progress"}]}'`,
					"toolu_2", "ls", "toolu_3", "write /etc/motd hi")},
			{Kind: agent.ToolStart, CallID: "toolu_1", Command: `TodoWrite '{"todos":[{"content":"List files","activeForm":"Listing files","status":"in_progress"}]}'`},
			{Kind: agent.TodoChange, Todos: []todo.Item{{Content: "List files", ActiveForm: "Listing files", Status: todo.InProgress}}},
			{Kind: agent.ToolEnd, CallID: "toolu_1", Command: `TodoWrite '{"todos":[{"content":"List files","activeForm":"Listing files","status":"in_progress"}]}'`,
				Result: toolRes("Todo list updated (1 item)", false, tool.Facts{Layer: "agent", ExitCode: ptr(0)}), Duration: 2 * time.Millisecond},
			{Kind: agent.ToolStart, CallID: "toolu_2", Command: "ls"},
			{Kind: agent.ToolEnd, CallID: "toolu_2", Command: "ls", Result: toolRes("a.txt\nb.txt", false, tool.Facts{Layer: "native", ExitCode: ptr(0)}), Duration: 15 * time.Millisecond},
			{Kind: agent.ToolStart, CallID: "toolu_3", Command: "write /etc/motd hi"},
			{Kind: agent.ToolEnd, CallID: "toolu_3", Command: "write /etc/motd hi", Duration: time.Millisecond,
				Result: toolRes("[sandbox blocked] The sandbox policy did not allow this command to access /etc/motd.", false,
					tool.Facts{Type: tool.ExtrasTypeSandboxBlocked, Resource: "/etc/motd", Reason: "outside the writable paths", Command: "write /etc/motd hi", ExitCode: ptr(1)})},
			{Kind: agent.TurnEnd},
			{Kind: agent.TextDelta, Text: "Two files: a.txt and b.txt."},
			{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 1500, OutputTokens: 12, CacheReadTokens: 1200}},
			{Kind: agent.Reminder, Text: "[System Reminder] Your todo list still has unfinished items."},
			{Kind: agent.TurnEnd},
			{Kind: agent.Warning, Err: errors.New("pricing.json: unknown model, cost not counted")},
			{Kind: agent.ContextNotice, Text: "context compacted: 150000 → 20000 tokens (40 messages summarised)",
				Context: &agent.ContextChange{Action: "compact", Before: 150000, After: 20000}},
			{Kind: agent.HookProgress, Text: "running stop hook lint"},
			{Kind: agent.HookOutput, Text: "lint: ok", Hooks: []hooks.Output{{Hook: "lint", Text: "ok"}}},
		},
		sum: Summary{Result: agent.Result{Text: "Two files: a.txt and b.txt.", Turns: 2, StopReason: "end_turn",
			Usage: llm.Usage{InputTokens: 2700, OutputTokens: 52, CacheReadTokens: 2000}, APIDuration: 1800 * time.Millisecond,
			Hooks: []hooks.Output{{Hook: "lint", Text: "ok"}}}, Took: 2500 * time.Millisecond, Cost: 0.0123, Priced: true},
	},
	{
		name: "subagent", format: "stream-json",
		events: []agent.Event{
			{Kind: agent.TextDelta, Text: "Asking a helper."},
			{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}},
			{Kind: agent.ToolStart, CallID: "toolu_t", Command: `task:explore "find the config"`},
			{Kind: agent.TaskStart, TaskID: "task-1", ParentCallID: "toolu_t", TaskType: "explore", TaskDescription: "find the config"},
			{Kind: agent.TaskToolStart, TaskID: "task-1", ParentCallID: "toolu_t", CallID: "toolu_s1", Command: "grep -rl config ."},
			{Kind: agent.TaskToolEnd, TaskID: "task-1", ParentCallID: "toolu_t", CallID: "toolu_s1", Command: "grep -rl config .",
				Result: toolRes("./app/config.yaml", false, tool.Facts{Layer: "native", ExitCode: ptr(0)}), Duration: 30 * time.Millisecond},
			{Kind: agent.TaskEnd, TaskID: "task-1", ParentCallID: "toolu_t", TaskType: "explore", TaskDescription: "find the config",
				Result: toolRes("The config is app/config.yaml.", false, tool.Facts{}), Duration: 900 * time.Millisecond, ToolCount: 1,
				Usage: &llm.Usage{InputTokens: 300, OutputTokens: 20}},
			{Kind: agent.ToolEnd, CallID: "toolu_t", Command: `task:explore "find the config"`,
				Result: toolRes("The config is app/config.yaml.", false, tool.Facts{Layer: "agent", ExitCode: ptr(0)}), Duration: 950 * time.Millisecond},
			{Kind: agent.TurnEnd},
			{Kind: agent.TextDelta, Text: "It is app/config.yaml."},
			{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 200, OutputTokens: 8}},
			{Kind: agent.TurnEnd},
		},
		sum: Summary{Result: agent.Result{Text: "It is app/config.yaml.", Turns: 2, StopReason: "end_turn",
			Usage: llm.Usage{InputTokens: 300, OutputTokens: 18}, APIDuration: 700 * time.Millisecond}, Took: 1700 * time.Millisecond},
	},
	{
		// Ctrl+C while a sub-agent's command and the parent's call run: both
		// tool_use blocks still get their tool_result.
		name: "cancelled", format: "stream-json",
		events: []agent.Event{
			{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 100, OutputTokens: 10}},
			{Kind: agent.ToolStart, CallID: "toolu_t", Command: `task:general "run the tests"`},
			{Kind: agent.TaskStart, TaskID: "task-1", ParentCallID: "toolu_t", TaskType: "general", TaskDescription: "run the tests"},
			{Kind: agent.TaskToolStart, TaskID: "task-1", ParentCallID: "toolu_t", CallID: "toolu_s1", Command: "go test ./..."},
		},
		sum: Summary{Result: agent.Result{Turns: 1, StopReason: agent.StopInterrupted, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10},
			APIDuration: 400 * time.Millisecond}, Err: fmt.Errorf("tool execution: %w", agent.ErrInterrupted), Took: 3 * time.Second},
	},
	{
		name: "error", format: "stream-json",
		events: []agent.Event{
			{Kind: agent.Error, Err: errors.New("anthropic: 401 invalid x-api-key")},
		},
		sum: Summary{Result: agent.Result{Turns: 1, StopReason: agent.StopError},
			Err: errors.New("anthropic: 401 invalid x-api-key"), Took: 300 * time.Millisecond},
	},
	{
		name: "max_turns", format: "json",
		events: []agent.Event{
			{Kind: agent.ToolStart, CallID: "toolu_1", Command: "true"},
			{Kind: agent.ToolEnd, CallID: "toolu_1", Command: "true", Result: toolRes("(Command executed successfully with no output)", false, tool.Facts{})},
			{Kind: agent.TurnEnd},
		},
		sum: Summary{Result: agent.Result{Text: "Stopped: reached the limit of 1 model turns.", Turns: 1, StopReason: agent.StopMaxTurns},
			Err: &agent.LimitError{Reason: agent.StopMaxTurns, Message: "Stopped: reached the limit of 1 model turns."}, Took: time.Second},
	},
}

// renderHeadless renders a run as `synapse run --output-format format`
// writes it to stdout.
func renderHeadless(format string, partial bool, events []agent.Event, sum Summary) string {
	var out bytes.Buffer
	o := New(&out, format == "stream-json", partial)
	n := 0
	o.uuid = func() string { n++; return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
	o.Init(InitEvent{SessionID: "session-20260101-000000-abcd", Model: "claude-sonnet-4-5", Cwd: "/home/me/project",
		Tools: []string{ToolName}, MCPServers: []MCPStatus{{Name: "docs", Status: "connected"}}, PermissionMode: "default",
		Sandbox: true, SynapseVersion: "0.1.0"})
	for _, e := range events {
		o.Event(e)
	}
	o.Finish(sum)
	return out.String()
}

func TestStreamJSONGolden(t *testing.T) {
	for _, tc := range headlessCases {
		t.Run(tc.name, func(t *testing.T) {
			got := renderHeadless(tc.format, tc.partial, tc.events, tc.sum)
			path := filepath.Join("testdata", tc.name+".jsonl")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestStreamJSONGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
			}
			headlesstest.CheckStream(t, got)
		})
	}
}

// Reading --input-format stream-json lines: text or text blocks; anything
// else is one clear error.
func TestInputText(t *testing.T) {
	cases := []struct {
		line, want, err string
	}{
		{`{"type":"user","message":{"role":"user","content":"fix it"}}`, "fix it", ""},
		{`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`, "a\n\nb", ""},
		{`{"type":"assistant","message":{"content":"x"}}`, "", `only {"type":"user",…} messages`},
		{`not json`, "", "not a JSON object"},
		{`{"type":"user","message":{"content":7}}`, "", "must be a string or an array"},
		{`{"type":"user","message":{"content":"  "}}`, "", "no text"},
	}
	for _, c := range cases {
		got, err := InputText([]byte(c.line))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.line, got, err, c.want)
		}
	}
}

// BenchmarkStreamJSON renders the "success" run (every event kind, with
// partial messages): the cost per run of the stream-json emitter.
func BenchmarkStreamJSON(b *testing.B) {
	tc := headlessCases[0]
	b.ReportAllocs()
	for b.Loop() {
		renderHeadless(tc.format, tc.partial, tc.events, tc.sum)
	}
	b.ReportMetric(float64(len(tc.events)), "events/run")
}

// The hosts' mode names: the SDK's camelCase beside Synapse's; "default"
// is the ask mode when the host answers questions.
func TestParseMode(t *testing.T) {
	cases := []struct {
		name     string
		hostAsks bool
		want     tool.Mode
		ask      bool
		note     bool
	}{
		{"default", false, tool.ModeDefault, false, false},
		{"default", true, tool.ModeAsk, true, false},
		{"acceptEdits", true, tool.ModeAcceptEdits, true, false},
		{"accept-edits", false, tool.ModeAcceptEdits, false, false},
		{"plan", true, tool.ModePlan, true, false},
		{"ask", false, tool.ModeAsk, false, false},
		{"bypassPermissions", false, tool.ModeAcceptEdits, false, true},
		{"dontAsk", true, tool.ModeDefault, false, true},
		{"auto", true, tool.ModeDefault, true, true},
	}
	for _, c := range cases {
		m, err := ParseMode(c.name, c.hostAsks)
		if err != nil || m.Mode != c.want || m.Ask != c.ask || (m.Note != "") != c.note {
			t.Errorf("ParseMode(%q, %v) = %+v, %v", c.name, c.hostAsks, m, err)
		}
	}
	if _, err := ParseMode("yolo", false); err == nil || !strings.Contains(err.Error(), "acceptEdits") {
		t.Errorf("yolo: %v", err)
	}
	for m, want := range map[tool.Mode]string{tool.ModeDefault: "default", tool.ModeAsk: "default", tool.ModeAcceptEdits: "acceptEdits", tool.ModePlan: "plan"} {
		if got := SDKName(m); got != want {
			t.Errorf("SDKName(%s) = %s", m, got)
		}
	}
}
