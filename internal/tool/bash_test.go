package tool

import (
	"context"
	"encoding/json"
	"github.com/synapse-agent/synapse/internal/testutil"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
)

func call(t *testing.T, b *Bash, cmd string) Result {
	t.Helper()
	raw, err := json.Marshal(Input{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	return b.Call(context.Background(), raw)
}

// Seed 003 "BashTool 失败分类与提示", with the real shell and Agent Shell.
func TestFailureClassification(t *testing.T) {
	b, ex := newTool(t, nil)
	if err := os.WriteFile(filepath.Join(ex.Cwd(), "f.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, cmd, category, hint string
	}{
		{"agent usage", "read", FailureInvalidUsage, `Bash(command="read --help")`},
		{"agent bad flag", "read f.txt --lines 3", FailureInvalidUsage, `Bash(command="read --help")`},
		{"write unclosed quote", `write "./tmp/a.txt hello`, FailureInvalidUsage, `Bash(command="write --help")`},
		{"native bad option", "ls --no-such-option", FailureInvalidUsage, `Bash(command="ls --help")`},
		{"native usage in pipeline", "echo x | grep --no-such-option", FailureInvalidUsage, `Bash(command="grep --help")`},
		{"native not found", "nosuchcommand_xyz --flag", FailureCommandNotFound, "`nosuchcommand_xyz` is not a command here"},
		// Claude Code's tool names as command text get the Synapse command.
		{"foreign Read", "Read f.txt", FailureCommandNotFound, `Bash(command="read f.txt")`},
		{"foreign Glob", "Glob '**/*.txt'", FailureCommandNotFound, `Bash(command="find . -name '*.txt'")`},
		{"foreign Grep", "Grep x .", FailureCommandNotFound, `Bash(command="grep -rn x .")`},
		{"foreign LS", "LS", FailureCommandNotFound, `Bash(command="ls")`},
		{"case typo", "TodoWrite2 x", FailureCommandNotFound, "`TodoWrite2` is not a command here"},
		{"case typo in a list", "true && Write f.txt x", FailureCommandNotFound, "Did you mean `write`"},
		// Inside a compound line the shell, not the router, meets a Synapse
		// command: the hint names it whole and says to run it on its own.
		{"extension inside a compound line", "cd . && skill:demo:run x", FailureCommandNotFound, "`skill:demo:run` is a Synapse command"},
		{"agent command after a pipe", "echo x | command:search pdf", FailureCommandNotFound, "as a command of its own"},
		// Seed 003: an execution error of any layer gets no self-description
		// segment; the error itself says what went wrong.
		{"agent execution error", "read missing.txt", FailureExecution, ""},
		{"agent missing absolute path", "read /nonexistent/zz", FailureExecution, ""},
		{"native execution error", "cat missing.txt", FailureExecution, ""},
		{"edit text absent", "edit f.txt nothere x", FailureExecution, ""},
		{"false", "false", FailureExecution, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, b, tt.cmd)
			if !r.IsError || category(r) != tt.category {
				t.Fatalf("got %+v, want ToolError %s", r, tt.category)
			}
			mustContain(t, "output", r.Output, "[exit code: ")
			if tt.hint == "" {
				if strings.Contains(r.Output, "Self-description") || strings.Contains(r.Message, "Self-description") {
					t.Errorf("execution error carries a self-description hint: %q", r.Output)
				}
				return
			}
			mustContain(t, "output", r.Output, tt.hint)
			if n := strings.Count(r.Output+r.Message, "[Self-description]"); n != 1 {
				t.Errorf("hint appears %d times in output+message: %q / %q", n, r.Output, r.Message)
			}
			if strings.Contains(r.Message, "Bash(command=") {
				t.Errorf("message duplicates the hint: %q", r.Message)
			}
		})
	}
}

// Seed 003 scenarios phrased on what the router returned.
func TestFailureFromRoutedResults(t *testing.T) {
	tests := []struct {
		name     string
		res      command.Result
		isError  bool
		category string
		contains string
	}{
		{"invalid usage", command.Result{Stderr: "Usage: read <file_path> [--offset N]", ExitCode: 1}, true, FailureInvalidUsage, `Bash(command="read --help")`},
		{"command not found", command.Result{Stderr: "bash: line 1: read: command not found", ExitCode: 1}, true, FailureCommandNotFound, "[Self-description]"},
		{"execution error", command.Result{Stderr: "read: /x: no such file", ExitCode: 1}, true, FailureExecution, "no such file\n[exit code: 1]"},
		{"empty success", command.Result{}, false, "", NoOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{Agent: handlerFunc(func(context.Context, string) command.Result { return tt.res })})
			r := call(t, b, "read")
			if r.IsError != tt.isError || category(r) != tt.category {
				t.Fatalf("got %+v", r)
			}
			mustContain(t, "output", r.Output, tt.contains)
			if tt.category == FailureExecution && strings.Contains(r.Output, hintTag) {
				t.Errorf("execution error carries a self-description hint: %q", r.Output)
			}
			if tt.isError && !strings.HasPrefix(r.Message, "`read` failed with exit code 1") {
				t.Errorf("the short error line does not name the command: %q", r.Message)
			}
			if !tt.isError && r.Output != NoOutput {
				t.Errorf("output = %q, want exactly %q", r.Output, NoOutput)
			}
		})
	}
}

// Seed 003 "被沙箱拦截时返回结构化 marker 而非错误退出".
func TestSandboxBlockedIsOK(t *testing.T) {
	fx := &fakeExec{cwd: "/workspace", answer: func(string) command.Result {
		return command.Result{Stderr: "cat: /etc/shadow: Permission denied", ExitCode: 1, Blocked: true,
			BlockedReason: "path is blacklisted", BlockedResource: "/etc/shadow"}
	}}
	b := New(Options{Exec: fx})
	r := call(t, b, "cat /etc/shadow")
	if r.IsError {
		t.Fatalf("blocked result is an error: %+v", r)
	}
	if r.Facts.Type != ExtrasTypeSandboxBlocked || r.Facts.Reason != "path is blacklisted" || r.Facts.Resource != "/etc/shadow" {
		t.Errorf("extras = %+v", r.Facts)
	}
	mustContain(t, "output", r.Output, "/etc/shadow")
	mustContain(t, "output", r.Output, "path is blacklisted")
	mustContain(t, "output", r.Output, "Permission denied")
}

// A read-only agent is not told to work in the project: it cannot write there.
func TestSandboxBlockedWordingReadOnly(t *testing.T) {
	answer := func(string) command.Result {
		return command.Result{Stderr: "touch: cannot touch 'x': Read-only file system", ExitCode: 1, Blocked: true,
			BlockedReason: "this agent's sandbox is read-only", BlockedResource: "/workspace/x"}
	}
	for _, ro := range []bool{false, true} {
		b := New(Options{Exec: &readOnlyExec{fakeExec: fakeExec{cwd: "/workspace", answer: answer}, ro: ro}})
		r := call(t, b, "touch x")
		if r.IsError || r.Facts.Type != ExtrasTypeSandboxBlocked || r.Facts.Resource != "/workspace/x" {
			t.Fatalf("read-only=%v: %+v", ro, r)
		}
		project := strings.Contains(r.Output, "Work inside the allowed directories")
		readOnly := strings.Contains(r.Output, "This agent works read-only")
		if project == ro || readOnly != ro {
			t.Errorf("read-only=%v: wrong advice in\n%s", ro, r.Output)
		}
	}
}

type readOnlyExec struct {
	fakeExec
	ro bool
}

func (e *readOnlyExec) ReadOnly() bool { return e.ro }

// A file command blocked in-process has the same shape as a native one.
func TestAgentShellBlockedIsOK(t *testing.T) {
	ex := startSession(t)
	deny := pathDeny{"/etc"}
	b := New(Options{Exec: ex, Agent: agentsh.New(agentsh.Options{Exec: ex, Paths: deny})})
	r := call(t, b, "read /etc/hostname")
	if r.IsError || r.Facts.Type != ExtrasTypeSandboxBlocked || r.Facts.Resource != "/etc/hostname" {
		t.Errorf("got %+v", r)
	}
}

type pathDeny struct{ root string }

func (d pathDeny) CheckPath(p string, write bool) (bool, string, string) {
	if strings.HasPrefix(p, d.root+"/") {
		return true, "outside the whitelist", p
	}
	return false, "", ""
}

func TestOutputFormat(t *testing.T) {
	b, _ := newTool(t, nil)
	tests := []struct{ cmd, want string }{
		{"echo out; echo err >&2", "out\n[stderr]\nerr"},
		{"echo err >&2", "[stderr]\nerr"},
		{"printf 'no newline'", "no newline"},
		{"true", NoOutput},
		{"cd /", NoOutput},
		{"pwd", "/"}, // cd persisted
		{"export SYNAPSE_T=works", NoOutput},
		{"bash echo $SYNAPSE_T", "works"}, // the wrapper shares the session
	}
	for _, tt := range tests {
		r := call(t, b, tt.cmd)
		if r.IsError || r.Output != tt.want {
			t.Errorf("%q = %+v, want %q", tt.cmd, r, tt.want)
		}
		if exitCodeOf(r) != 0 {
			t.Errorf("%q exitCode extra = %v", tt.cmd, exitCodeOf(r))
		}
	}
	r := call(t, b, "echo partial; (exit 3)")
	if !r.IsError || r.Output != "partial\n[exit code: 3]" || exitCodeOf(r) != 3 || r.Message != "Command failed with exit code 3 (execution_error)" {
		t.Errorf("failure = %+v", r)
	}
	// A native program that names itself in its error is named in the short line.
	r = call(t, b, "echo x | cat /nonexistent-synapse")
	if r.Message != "`cat` failed with exit code 1 (execution_error)" {
		t.Errorf("message = %q, want it to name cat", r.Message)
	}
}

func TestCallInput(t *testing.T) {
	b, _ := newTool(t, nil)
	tests := []struct {
		raw     string
		wantErr string
	}{
		{`{"command": "echo hi"}`, ""},
		{`{"command": "echo hi", "description": "extra fields are ignored"}`, ""},
		{`{"command": "echo hi", "restart": false}`, ""},
		{`not json`, "not valid JSON"},
		{`{"command": 5}`, `"command" must be a string`},
		{`{"command": "x", "restart": "yes"}`, `"restart" must be a boolean`},
		{`null`, "the arguments are empty"},
		{``, "the arguments are empty"},
		{`{}`, `"command" is empty`},
		{`{"command": "   "}`, `"command" is empty`},
	}
	for _, tt := range tests {
		r := b.Call(context.Background(), json.RawMessage(tt.raw))
		if tt.wantErr == "" {
			if r.IsError || r.Output != "hi" {
				t.Errorf("%s = %+v", tt.raw, r)
			}
			continue
		}
		if !r.IsError || category(r) != FailureInvalidUsage || !strings.Contains(r.Output, tt.wantErr) || !strings.Contains(r.Output, `{"command": "<command line>"}`) {
			t.Errorf("%s = %+v, want ToolError with %q", tt.raw, r, tt.wantErr)
		}
	}
}

func TestRestart(t *testing.T) {
	b, ex := newTool(t, nil)
	start := ex.Cwd()
	for _, c := range []string{"export SYNAPSE_TEST_VAR=works", "cd /"} {
		if r := call(t, b, c); r.IsError {
			t.Fatalf("%s: %+v", c, r)
		}
	}
	if r := call(t, b, "echo $SYNAPSE_TEST_VAR"); r.Output != "works" {
		t.Fatalf("before restart: %q", r.Output)
	}
	r := b.Run(context.Background(), Input{Command: "echo \"[$SYNAPSE_TEST_VAR]\"; pwd", Restart: true})
	if r.IsError || r.Output != "[]\n"+start || !r.Facts.Restarted {
		t.Errorf("restart + command = %+v", r)
	}
	r = b.Run(context.Background(), Input{Restart: true})
	if r.IsError || !strings.Contains(r.Output, "restarted") {
		t.Errorf("restart alone = %+v", r)
	}
}

// Seed 001 "BashRouter 与沙箱分流".
func TestRoutingReachesExecutorOnlyForNative(t *testing.T) {
	var handled []string
	handler := handlerFunc(func(_ context.Context, line string) command.Result {
		handled = append(handled, line)
		return command.OK("handled " + line)
	})
	tests := []struct {
		cmd       string
		wantExec  []execCall
		handlers  map[router.Family]command.Handler
		wantOut   string
		wantError bool
	}{
		{"npm test", []execCall{{"npm test", "/workspace"}}, nil, NoOutput, false},
		{"  ls -la | wc -l", []execCall{{"  ls -la | wc -l", "/workspace"}}, nil, NoOutput, false},
		{"read ./README.md", nil, nil, "", true},
		{"mcp:demo:echo --text hi", nil, nil, "not available", true},
		{"skill:demo:run", nil, nil, "not available", true},
		{"task:explore --prompt x", nil, nil, "sub-agents (task:<type>) are not available", true},
		{"command:search pdf", nil, nil, "command:search is not available", true},
		{"skill:load pdf", nil, nil, "skill management", true},
		{"mcp:demo:echo --text hi", nil, map[router.Family]command.Handler{router.FamilyMCP: handler}, "handled mcp:demo:echo --text hi", false},
		{"skill:demo:run a", nil, map[router.Family]command.Handler{router.FamilySkillScript: handler}, "handled skill:demo:run a", false},
		{"task:explore -p x", nil, map[router.Family]command.Handler{router.FamilyTask: handler}, "handled task:explore -p x", false},
		{"skill:list", nil, map[router.Family]command.Handler{router.FamilySkill: handler}, "handled skill:list", false},
		{"command:search pdf", nil, map[router.Family]command.Handler{router.FamilySearch: handler}, "handled command:search pdf", false},
	}
	for _, tt := range tests {
		fx := &fakeExec{cwd: "/workspace"}
		b := New(Options{Exec: fx, Agent: agentsh.New(agentsh.Options{Exec: fx}), Handlers: tt.handlers})
		r := call(t, b, tt.cmd)
		calls := fx.Calls()
		if len(calls) != len(tt.wantExec) || (len(calls) == 1 && calls[0] != tt.wantExec[0]) {
			t.Errorf("%q: executor calls %+v, want %+v", tt.cmd, calls, tt.wantExec)
		}
		if r.IsError != tt.wantError || !strings.Contains(r.Output, tt.wantOut) {
			t.Errorf("%q = %+v", tt.cmd, r)
		}
	}
	if len(handled) != 5 {
		t.Errorf("handlers saw %q", handled)
	}
}

func TestOutputCap(t *testing.T) {
	dir := t.TempDir()
	b, _ := newTool(t, func(o *Options) { o.OutputCap = 100; o.OutputDir = dir })
	r := call(t, b, "seq 1 1000")
	if r.IsError {
		t.Fatalf("%+v", r)
	}
	full := ""
	for i := 1; i <= 1000; i++ {
		full += strconv.Itoa(i) + "\n"
	}
	full = strings.TrimSuffix(full, "\n")
	p := r.Facts.FullOutputPath
	if p == "" || filepath.Dir(p) != dir || !r.Facts.Truncated {
		t.Fatalf("extras = %+v", r.Facts)
	}
	saved, err := os.ReadFile(p)
	if err != nil || string(saved) != full {
		t.Fatalf("saved output differs (%v)", err)
	}
	if !strings.HasPrefix(r.Output, full[:50]) || !strings.HasSuffix(r.Output, full[len(full)-50:]) {
		t.Errorf("head/tail not kept: %q", r.Output)
	}
	mustContain(t, "output", r.Output, strconv.Itoa(len(full)-100)+" characters cut here")
	mustContain(t, "output", r.Output, "saved to "+p)
	if len(r.Output) > 400 {
		t.Errorf("output not capped: %d bytes", len(r.Output))
	}
	// Multi-byte characters are counted as characters and never split.
	r = call(t, b, "printf 'é%.0s' $(seq 1 500)")
	if !strings.HasPrefix(r.Output, strings.Repeat("é", 50)+"\n\n[... 400 characters cut") {
		t.Errorf("utf-8 cap = %q", r.Output[:120])
	}
}

func TestInterrupt(t *testing.T) {
	b, _ := newTool(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	started := filepath.Join(t.TempDir(), "started")
	done := make(chan Result, 1)
	go func() { done <- b.Run(ctx, Input{Command: "touch '" + started + "'; sleep 30"}) }()
	testutil.WaitFor(t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	cancel()
	r := <-done
	if !r.IsError || !r.Facts.Interrupted || exitCodeOf(r) != command.Interrupted {
		t.Fatalf("got %+v, want interrupted", r)
	}
	// The session survives.
	if r := b.Run(context.Background(), Input{Command: "echo alive"}); r.Output != "alive" {
		t.Errorf("after interrupt: %+v", r)
	}
}

func TestSpec(t *testing.T) {
	s := New(Options{}).Spec()
	if s.Name != "Bash" {
		t.Errorf("name = %q", s.Name)
	}
	var schema struct {
		Type       string `json:"type"`
		Required   []string
		Properties map[string]struct {
			Type    string `json:"type"`
			Default any    `json:"default"`
		}
	}
	if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "command" ||
		schema.Properties["command"].Type != "string" || schema.Properties["restart"].Type != "boolean" ||
		schema.Properties["restart"].Default != false {
		t.Errorf("schema = %s", s.InputSchema)
	}
	for _, want := range []string{"Native commands", "Agent Shell commands", "Extension commands", "read <file>", "mcp:<server>:<tool>", "--help"} {
		mustContain(t, "description", s.Description, want)
	}
}

func BenchmarkBashToolEcho(b *testing.B) {
	bt, _ := newTool(b, nil)
	raw := json.RawMessage(`{"command":"echo hi"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := bt.Call(ctx, raw); r.Output != "hi" {
			b.Fatalf("%+v", r)
		}
	}
}

func BenchmarkBashToolRead(b *testing.B) {
	bt, ex := newTool(b, nil)
	p := filepath.Join(ex.Cwd(), "f.txt")
	if err := os.WriteFile(p, []byte(strings.Repeat("some line of text\n", 100)), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := bt.Run(ctx, Input{Command: "read f.txt"}); r.IsError {
			b.Fatalf("%+v", r)
		}
	}
}

// The tool call written as the command is answered, not run: bash would
// only say "syntax error" or "Bash: command not found".
func TestToolCallAsCommand(t *testing.T) {
	fx := &fakeExec{cwd: "/w", answer: func(cmd string) command.Result {
		t.Errorf("%q reached the shell", cmd)
		return command.Result{}
	}}
	b := New(Options{Exec: fx})
	const hint = "[Self-description] Bash is the tool; pass only the inner command"
	tests := []struct{ cmd, want string }{
		{`Bash(command="ls -la")`, hint + ": `ls -la`"},
		{`Bash(command='ls -la')`, hint + ": `ls -la`"},
		{`Bash(command: "grep \"x y\" f")`, hint + ": `grep \"x y\" f`"},
		{`Bash("pwd")`, hint + ": `pwd`"},
		{`Bash(command="make test", restart=true)`, hint + ": `make test`"},
		{`Bash({"command": "go vet ./..."})`, hint + ": `go vet ./...`"},
		{"Bash ls -la", hint + ": `ls -la`"},
		{"  Bash   git status ", hint + ": `git status`"},
		{"Bash", hint + ` as "command", for example {"command": "ls -la"}`},
		{"Bash(oops", hint + ` as "command", for example {"command": "ls -la"}`},
		// The lower-case slip is the same slip.
		{`bash(command="ls")`, hint + ": `ls`"},
		{`bash("pwd")`, hint + ": `pwd`"},
		{`bash({"command": "ls"})`, hint + ": `ls`"},
		{"bash(oops", hint + ` as "command", for example {"command": "ls -la"}`},
	}
	for _, tt := range tests {
		r := call(t, b, tt.cmd)
		if !r.IsError || r.Output != tt.want || category(r) != FailureInvalidUsage {
			t.Errorf("%q = %+v\nwant output %q", tt.cmd, r, tt.want)
		}
	}
	// Lookalikes are ordinary commands.
	fx.answer = func(string) command.Result { return command.Result{Stdout: "ran"} }
	for _, cmd := range []string{"echo Bash(x)", "Bashful", "./Bash ls"} {
		if r := call(t, b, cmd); r.Output != "ran" {
			t.Errorf("%q = %+v, want it run", cmd, r)
		}
	}
}

// Seed 003: an ordinary failure of an extension command is an execution
// error like any other, so it gets no self-description segment; the short
// line still names the command.
func TestExtensionFailureHasNoHint(t *testing.T) {
	fail := handlerFunc(func(context.Context, string) command.Result {
		return command.Result{Stderr: "it broke", ExitCode: 2}
	})
	b := New(Options{Handlers: map[router.Family]command.Handler{router.FamilySkillScript: fail, router.FamilyMCP: fail, router.FamilyTask: fail}})
	tests := []struct{ cmd, msg string }{
		{"skill:demo:run --x 1", "`skill:demo:run` failed with exit code 2 (execution_error)"},
		{"mcp:docs:search q", "`mcp:docs:search` failed with exit code 2 (execution_error)"},
		{"task:explore --prompt x", "`task:explore` failed with exit code 2 (execution_error)"},
	}
	for _, tt := range tests {
		r := call(t, b, tt.cmd)
		if !r.IsError || category(r) != FailureExecution || r.Output != "[stderr]\nit broke\n[exit code: 2]" || r.Message != tt.msg {
			t.Errorf("%s = %+v\nwant no hint and message %q", tt.cmd, r, tt.msg)
		}
	}
}

// What a person is shown of a failure keeps the command's own output and
// drops what was added for the model (exit-code line, hint, [stderr] label).
func TestUserOutput(t *testing.T) {
	tests := []struct {
		name string
		res  command.Result
		want string
	}{
		{"invalid usage with hint", command.Result{Stderr: "Unexpected argument \"x\"\nUsage: read <file_path>", ExitCode: 1},
			"Unexpected argument \"x\"\nUsage: read <file_path>"},
		{"stdout and stderr", command.Result{Stdout: "a\nb\n", Stderr: "read: /x: no such file\n", ExitCode: 3}, "a\nb\nread: /x: no such file"},
		{"no output", command.Result{ExitCode: 2}, ""},
		{"success unchanged", command.Result{Stdout: "[stderr]\nfine\n[exit code: 0]"}, "[stderr]\nfine\n[exit code: 0]"},
		{"success with no output", command.Result{}, ""},
		{"output that only looks like a marker", command.Result{Stdout: "[exit code: 9] said the log", ExitCode: 1}, "[exit code: 9] said the log"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{Agent: handlerFunc(func(context.Context, string) command.Result { return tt.res })})
			r := call(t, b, "read x")
			if got := UserOutput(r); got != tt.want {
				t.Errorf("UserOutput = %q, want %q (model saw %q)", got, tt.want, r.Output)
			}
		})
	}
}

// A timeout's short line names the command that was stopped.
func TestTimeoutNamesTheCommand(t *testing.T) {
	fx := &fakeExec{cwd: "/w", answer: func(string) command.Result {
		return command.Result{Stderr: "Command timed out after 2m0s and was stopped; run long jobs in the background or split them up.", ExitCode: 124, TimedOut: true}
	}}
	r := call(t, New(Options{Exec: fx}), "sleep 300")
	if !r.IsError || r.Message != "`sleep 300` timed out and was stopped (exit code 124)" || category(r) != FailureExecution {
		t.Fatalf("got %+v", r)
	}
	if strings.Contains(r.Output, hintTag) {
		t.Errorf("a timeout carries a self-description hint: %q", r.Output)
	}
}

// A command that wants a terminal fails at once (the shell has none: opening
// /dev/tty gives ENXIO), and the result says why and what to do instead.
func TestTerminalWaitGetsANote(t *testing.T) {
	b, _ := newTool(t, nil)
	r := call(t, b, "cat /dev/tty")
	if !r.IsError || category(r) != FailureExecution {
		t.Fatalf("got %+v", r)
	}
	mustContain(t, "output", r.Output, "/dev/tty: No such device or address")
	mustContain(t, "output", r.Output, "[no terminal] Commands here run without a terminal")
	mustContain(t, "output", r.Output, "git commit -m")
	if strings.Contains(r.Output, hintTag) {
		t.Errorf("the note is a self-description hint: %q", r.Output)
	}
	if r := call(t, b, "cat missing-file"); strings.Contains(r.Output, "[no terminal]") {
		t.Errorf("an ordinary failure got the terminal note: %q", r.Output)
	}
}

// A hint never suggests the very line that failed: running it again would
// fail the same way.
func TestHintDoesNotSuggestTheFailedCommand(t *testing.T) {
	usage := handlerFunc(func(context.Context, string) command.Result {
		return command.Result{Stderr: "Usage: read <file_path>", ExitCode: 1}
	})
	b := New(Options{Agent: usage})
	if r := call(t, b, "read  --help"); !r.IsError || strings.Contains(r.Output, `Bash(command="read --help")`) {
		t.Errorf("read --help failing: %+v", r)
	}
	if r := call(t, b, "read"); !strings.Contains(r.Output, `Bash(command="read --help")`) {
		t.Errorf("read failing lost its hint: %+v", r)
	}
	// synapse exec has no sub-agents: task:general --help fails there.
	if r := call(t, New(Options{}), "task:general --help"); !r.IsError || strings.Contains(r.Output, `Bash(command="task:general --help")`) {
		t.Errorf("task:general --help failing: %+v", r)
	}
}
