package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// followHint is the scripted model's second turn: it reads the error it got
// and does what the hint says, the way a model repairs a slip. It takes the
// inner command of "pass only the inner command: `…`", else the first
// Bash(command="…") the result suggests, else resends fallback (for
// arguments that were not JSON: send them as JSON).
func followHint(t *testing.T, fallback string) func(req *llmtest.Request) llmtest.Turn {
	inner := regexp.MustCompile("pass only the inner command: `([^`]*)`")
	suggested := regexp.MustCompile(`Bash\(command=("(?:[^"\\]|\\.)*")\)`)
	return func(req *llmtest.Request) llmtest.Turn {
		res := req.LastToolResults()
		if len(res) != 1 {
			t.Errorf("the model got %d tool results, want 1", len(res))
			return llmtest.TextTurn("confused")
		}
		next := fallback
		if m := inner.FindStringSubmatch(res[0].Content); m != nil {
			next = m[1]
		} else if m := suggested.FindStringSubmatch(res[0].Content); m != nil {
			u, err := strconv.Unquote(m[1])
			if err != nil {
				t.Errorf("hint %s is not a quoted string: %v", m[1], err)
			}
			next = u
		}
		return llmtest.BashTurn("fixed", next)
	}
}

type toolEnd struct {
	Output  string         `json:"output"`
	IsError bool           `json:"is_error"`
	Message string         `json:"message"`
	Extras  map[string]any `json:"extras"`
	Command string         `json:"command"`
}

// toolEnds reads the tool results (user messages' tool_use_result) of a
// stream-json run.
func toolEnds(t *testing.T, stdout string) []toolEnd {
	t.Helper()
	var out []toolEnd
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Type          string   `json:"type"`
			ToolUseResult *toolEnd `json:"tool_use_result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.Type == "user" && ev.ToolUseResult != nil {
			out = append(out, *ev.ToolUseResult)
		}
	}
	return out
}

// TestModelSlipsGetRepairHints: a scripted model makes the mistakes real
// models make; for each, the test checks the exact text the model receives
// over the wire (and the failure category synapse reports), then the model
// follows the hint and its next call succeeds.
func TestModelSlipsGetRepairHints(t *testing.T) {
	tests := []struct {
		name     string
		first    llmtest.ToolCall
		fallback string // what the model resends when the hint names no command
		want     string // the exact tool result (or, with wantHas, parts of it)
		wantHas  []string
		wantNot  []string // what the result must not hold
		category string
		message  string // the short error line
		next     string // the command the model runs after the hint
	}{
		{
			name:     "the tool call as the command",
			first:    llmtest.BashCall("c1", `Bash(command="ls -la")`),
			want:     "[Self-description] Bash is the tool; pass only the inner command: `ls -la`",
			category: "invalid_usage",
			message:  "Bash is the tool; pass only the inner command",
			next:     "ls -la",
		},
		{
			name:     "Bash and its argument",
			first:    llmtest.BashCall("c1", "Bash ls"),
			want:     "[Self-description] Bash is the tool; pass only the inner command: `ls`",
			category: "invalid_usage",
			message:  "Bash is the tool; pass only the inner command",
			next:     "ls",
		},
		{
			name:     "Bash alone",
			first:    llmtest.BashCall("c1", "Bash"),
			fallback: "ls -la",
			want:     `[Self-description] Bash is the tool; pass only the inner command as "command", for example {"command": "ls -la"}`,
			category: "invalid_usage",
			message:  "Bash is the tool; pass only the inner command",
			next:     "ls -la",
		},
		{
			name:     "a tool that does not exist",
			first:    llmtest.ToolCall{ID: "c1", Name: "run_shell", Input: map[string]any{"command": "echo hi there"}},
			want:     `Unknown tool "run_shell": the only tool is Bash, and every capability is a command line for it. Call it as Bash(command="echo hi there").`,
			category: "command_not_found",
			message:  `unknown tool "run_shell": the only tool is Bash`,
			next:     "echo hi there",
		},
		{
			name:  "a tool named after a command",
			first: llmtest.ToolCall{ID: "c1", Name: "read", Input: map[string]any{"file_path": "notes.txt"}},
			want: `Unknown tool "read": the only tool is Bash, and every capability is a command line for it. ` +
				`Call it as Bash(command="read notes.txt").`,
			category: "command_not_found",
			message:  `unknown tool "read": the only tool is Bash`,
			next:     "read notes.txt",
		},
		{
			name:  "Claude Code's Read tool",
			first: llmtest.ToolCall{ID: "c1", Name: "Read", Input: map[string]any{"file_path": "notes.txt"}},
			want: `Unknown tool "Read": the only tool is Bash, and every capability is a command line for it. ` +
				`Call it as Bash(command="read notes.txt").`,
			category: "command_not_found",
			message:  `unknown tool "Read": the only tool is Bash`,
			next:     "read notes.txt",
		},
		{
			name:     "Claude Code's Read as a command",
			first:    llmtest.BashCall("c1", "Read notes.txt"),
			wantHas:  []string{"Read: command not found\n[exit code: 127]\n[Self-description] `Read` is another agent's tool, not a command here. The Synapse command for it: Bash(command=\"read notes.txt\")."},
			category: "command_not_found",
			message:  "`Read` failed with exit code 127 (command_not_found)",
			next:     "read notes.txt",
		},
		{
			name:     "arguments that are not JSON",
			first:    llmtest.ToolCall{ID: "c1", Name: "Bash", RawInput: `{"command": "echo hi`},
			fallback: "echo hi",
			want: "The arguments of your Bash call are not valid JSON, so nothing was run. The JSON parser says: \"unexpected end of JSON input\" at byte 20.\n" +
				"You sent: {\"command\": \"echo hi\n" +
				"Send {\"command\": \"<command line>\"} (optionally with \"restart\": true), with quotes and backslashes inside the command escaped for JSON.",
			category: "invalid_usage",
			message:  `Bash arguments are not valid JSON: "unexpected end of JSON input" at byte 20`,
			next:     "echo hi",
		},
		{
			// Seed 003: an execution error carries no self-description
			// segment; the error says what went wrong and the model fixes
			// the path itself.
			name:     "read of a missing file",
			first:    llmtest.BashCall("c1", "read missing.txt"),
			fallback: "read notes.txt",
			wantHas:  []string{"missing.txt: no such file", "[exit code: 1]"},
			wantNot:  []string{"[Self-description]", "Bash(command="},
			category: "execution_error",
			message:  "`read` failed with exit code 1 (execution_error)",
			next:     "read notes.txt",
		},
		{
			name:     "an MCP server that does not exist",
			first:    llmtest.BashCall("c1", "mcp:nosuch:search --q x"),
			fallback: "mcp:",
			wantHas:  []string{`Unknown MCP server "nosuch"`, "[exit code: 1]"},
			wantNot:  []string{"[Self-description]"},
			category: "execution_error",
			message:  "`mcp:nosuch:search` failed with exit code 1 (execution_error)",
			next:     "mcp:",
		},
	}
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				srv := llmtest.New(t,
					llmtest.ToolTurn(tt.first),
					llmtest.Turn{Reply: followHint(t, tt.fallback)},
					llmtest.TextTurn("done"))
				e := newRunEnv(t, srv, format)
				if err := os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				r := e.run(t, "", "run", "--output-format", "stream-json", "go")
				if r.code != 0 {
					t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
				}
				reqs := srv.Requests()
				if len(reqs) != 3 {
					t.Fatalf("%d model requests, want 3", len(reqs))
				}
				got, ok := reqs[1].ToolResult("c1")
				// The OpenAI format has no error flag on tool results.
				if !ok || (format == llmtest.FormatAnthropic && !got.IsError) {
					t.Fatalf("the model's first call got %+v, want an error result", got)
				}
				if tt.want != "" && got.Content != tt.want {
					t.Errorf("the model received:\n%s\nwant:\n%s", got.Content, tt.want)
				}
				for _, part := range tt.wantHas {
					if !strings.Contains(got.Content, part) {
						t.Errorf("the model received:\n%s\nwhich lacks:\n%s", got.Content, part)
					}
				}
				for _, part := range tt.wantNot {
					if strings.Contains(got.Content, part) {
						t.Errorf("the model received:\n%s\nwhich should not hold:\n%s", got.Content, part)
					}
				}
				ends := toolEnds(t, r.stdout)
				if len(ends) != 2 {
					t.Fatalf("%d tool_end events, want 2:\n%s", len(ends), r.stdout)
				}
				if ends[0].Extras["failure_category"] != tt.category || ends[0].Message != tt.message {
					t.Errorf("failure_category %v, message %q; want %s, %q", ends[0].Extras["failure_category"], ends[0].Message, tt.category, tt.message)
				}
				// The model followed the hint, and that call worked.
				if ends[1].Command != tt.next {
					t.Errorf("after the hint the model ran %q, want %q", ends[1].Command, tt.next)
				}
				if fixed, _ := reqs[2].ToolResult("fixed"); fixed.IsError || ends[1].IsError {
					t.Errorf("the call after the hint failed: the model received %q; tool_end %+v\nstderr: %s", fixed.Content, ends[1], r.stderr)
				}
			})
		}
	}
}

// TestSmallContractsOverTheWire: what the model receives for the small
// contracts of issue 18, through the built binary and a real wire format:
// paging past the end of a file, the todo text limit from the environment,
// mcp: listing the servers, and --help of a tool whose server is down.
func TestSmallContractsOverTheWire(t *testing.T) {
	long := strings.Repeat("x", 11)
	todo := `TodoWrite '{"todos":[{"content":"` + long + `","activeForm":"doing","status":"pending"}]}'`
	srv := llmtest.New(t,
		llmtest.BashTurn("c", "read notes.txt --offset 5", todo, "mcp:", "mcp:broken:search --help"),
		llmtest.TextTurn("done"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	e.env = append(e.env, "SYNAPSE_TODO_MAX_CONTENT_LENGTH=10")
	if err := os.WriteFile(filepath.Join(e.dir, "notes.txt"), []byte("a note\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.home, "mcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.home, "mcp", "mcp_servers.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"broken": {"command": "synapse-no-such-server-e2e"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "", "run", "--output-format", "stream-json", "go")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	req := srv.Requests()[1]
	result := func(i int) llmtest.ToolResult {
		res, ok := req.ToolResult("c-" + strconv.Itoa(i))
		if !ok {
			t.Fatalf("no result for call %d", i)
		}
		return res
	}
	if got := result(1); got.IsError || got.Content != "(notes.txt has 1 line; nothing after --offset 5)" {
		t.Errorf("read past the end: %+v", got)
	}
	if got := result(2); !got.IsError || !strings.Contains(got.Content, "todos[0].content is 11 characters, the limit is 10 (SYNAPSE_TODO_MAX_CONTENT_LENGTH); shorten it") {
		t.Errorf("todo over the limit: %+v", got)
	}
	if got := result(3); got.IsError || !strings.HasPrefix(got.Content, "MCP servers:\n  broken (stdio) — ") {
		t.Errorf("mcp: %+v", got)
	}
	got := result(4)
	for _, want := range []string{"Usage: mcp:broken:search [--<argument> <value> …]", `MCP server "broken" is down`, "synapse-no-such-server-e2e", cfg} {
		if got.IsError || !strings.Contains(got.Content, want) {
			t.Errorf("help of a down server's tool lacks %q: %+v", want, got)
		}
	}
}

// A gateway that answers every streaming request with a plain JSON body is
// still a working provider for synapse run, in every wire format.
func TestRunThroughPlainJSONGateway(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			call := llmtest.BashTurn("g", "echo through the gateway")
			call.PlainJSON = true
			srv := llmtest.New(t, call, llmtest.Turn{PlainJSON: true, Text: "all done"})
			e := newRunEnv(t, srv, format)
			r := e.run(t, "", "run", "go")
			if r.code != 0 || !strings.Contains(r.stdout, "all done") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if got, ok := srv.Requests()[1].ToolResult("g-1"); !ok || got.Content != "through the gateway" {
				t.Errorf("tool result %+v", got)
			}
			if !srv.Requests()[0].Stream {
				t.Error("the request did not ask for a stream")
			}
		})
	}
}
