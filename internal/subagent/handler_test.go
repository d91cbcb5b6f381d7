package subagent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Seed 001: `task:* --help` prints help with exit 0 and starts nothing.
func TestHelpStartsNothing(t *testing.T) {
	for _, line := range []string{"task:general --help", "task:explore -h", "task:skill:search --help", "task:skill:enhance -p x --help"} {
		t.Run(line, func(t *testing.T) {
			f := newFixture(t, Options{})
			res := f.h.Run(f.traced(context.Background()), line)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "USAGE") {
				t.Fatalf("result = %+v, want exit 0 with USAGE", res)
			}
			if n := f.ws.built.Load(); n != 0 {
				t.Errorf("%d workspaces built for --help", n)
			}
			if n := f.srv.Count(); n != 0 {
				t.Errorf("%d model requests for --help", n)
			}
			if ev := f.parent.Events(); len(ev) != 0 {
				t.Errorf("events for --help: %v", f.parent.kinds())
			}
		})
	}
}

// Seed 001: invalid type, unclosed quote and missing arguments fail with
// exit 1 and a diagnosable message, before anything starts.
func TestBadLinesStartNothing(t *testing.T) {
	tests := []struct{ line, want string }{
		{`task:invalid --prompt "x" --description "y"`, "Invalid task command"},
		{`task:explore --prompt "unclosed --description "x"`, "Unclosed quote"},
		{`task:general --description "y"`, "Missing --prompt"},
		{`task:general --prompt "x"`, "Missing --description"},
		{`task:general -p x -d y --max-turns -3`, "--max-turns must be a positive whole number"},
	}
	for _, tc := range tests {
		t.Run(tc.line, func(t *testing.T) {
			f := newFixture(t, Options{})
			res := f.h.Run(f.traced(context.Background()), tc.line)
			if res.ExitCode != 1 || !strings.Contains(res.Stderr, tc.want) {
				t.Fatalf("result = %+v, want exit 1 with %q", res, tc.want)
			}
			if f.ws.built.Load() != 0 || f.srv.Count() != 0 || len(f.parent.Events()) != 0 {
				t.Errorf("something started: workspaces %d, requests %d, events %v", f.ws.built.Load(), f.srv.Count(), f.parent.kinds())
			}
		})
	}
}

// Seed 001: `-p/-d` enter the normal execution path; the sub-agent gets its
// own prompt, the Bash tool, the parent's model, and returns its answer.
func TestShortFlagsRun(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.TextTurn("the research result"))
	res := f.h.Run(f.traced(context.Background()), `task:general -p "research" -d "general task"`)
	if res.ExitCode != 0 || res.Stdout != "the research result" {
		t.Fatalf("result = %+v", res)
	}
	req, _ := f.srv.LastRequest()
	if u := req.FirstUserText(); !strings.Contains(u, "research") || !strings.Contains(u, "general task") {
		t.Errorf("user message = %q", u)
	}
	if strings.Contains(req.FirstUserText(), agent.SkillSearchHeading) {
		t.Error("sub-agent got the skill-search instruction it cannot follow")
	}
	if !strings.Contains(req.System, "**general** sub-agent") || !strings.Contains(req.System, f.ws.dir) {
		t.Errorf("system prompt is not general.md with the environment:\n%s", req.System)
	}
	if got := req.ToolNames(); len(got) != 1 || got[0] != tool.Name {
		t.Errorf("tools = %v", got)
	}
	if req.Model != "parent-model" {
		t.Errorf("model = %q, want the parent's", req.Model)
	}
	if f.ws.built.Load() != 1 || f.ws.closed.Load() != 1 {
		t.Errorf("workspaces built %d closed %d, want 1 and 1", f.ws.built.Load(), f.ws.closed.Load())
	}
}

// Seed 001: --model is parsed and honoured.
func TestModelHonoured(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.TextTurn("ok"))
	res := f.h.Run(f.traced(context.Background()), `task:general --prompt "x" --description "y" --model claude-sonnet-4-20250514 --max-turns 10`)
	if res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	req, _ := f.srv.LastRequest()
	if req.Model != "claude-sonnet-4-20250514" {
		t.Errorf("request model = %q", req.Model)
	}
	if u := f.parent.Usages(); len(u) != 1 || u[0].model != "claude-sonnet-4-20250514" {
		t.Errorf("usage recorded = %+v", u)
	}
}

// Seed 001: --max-turns is honoured: the sub-agent makes exactly that many
// requests, and a run stopped by it is a failure that keeps its findings.
func TestMaxTurnsHonoured(t *testing.T) {
	f := newFixture(t, Options{})
	f.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		return llmtest.Turn{Text: fmt.Sprintf("partial finding %d", req.Index), ToolCalls: []llmtest.ToolCall{llmtest.BashCall(fmt.Sprintf("c%d", req.Index), "echo step")}}
	})
	res := f.h.Run(f.traced(context.Background()), `task:general -p "loop" -d "loop" --max-turns 2`)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "--max-turns") {
		t.Fatalf("result = %+v, want exit 1 naming --max-turns", res)
	}
	if n := f.srv.Count(); n != 2 {
		t.Errorf("requests = %d, want 2", n)
	}
	if !strings.Contains(res.Stdout, "partial finding 1") {
		t.Errorf("partial findings lost: stdout = %q", res.Stdout)
	}
}

// Seed 001: cancelling a running task gives exit 130 and
// "Task execution interrupted" on stderr.
func TestCancelInterrupts(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.Turn{Text: "too late", Delay: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan command.Result, 1)
	go func() { done <- f.h.Run(f.traced(ctx), `task:explore -p "look" -d "slow"`) }()
	testutil.WaitFor(t, "the sub-agent's request", func() bool { return f.srv.InFlight() == 1 })
	cancel()
	res := <-done
	if res.ExitCode != command.Interrupted || !strings.Contains(res.Stderr, MsgInterrupted) {
		t.Fatalf("result = %+v, want exit 130 with %q", res, MsgInterrupted)
	}
	end := f.parent.Events()[len(f.parent.Events())-1]
	if end.Kind != agent.TaskEnd || end.Err == nil {
		t.Errorf("last event = %+v, want TaskEnd with an error", end)
	}
	if f.ws.closed.Load() != 1 {
		t.Error("the sub-agent's shell was not closed")
	}
}

// Cancelling the parent stops the sub-agent's running shell command (its
// process is gone), not only the model request.
func TestCancelKillsShellCommand(t *testing.T) {
	testutil.RequireTool(t, "pgrep")
	secs := fmt.Sprintf("%d.%06d", 3000+time.Now().Unix()%1000, time.Now().Nanosecond()/1000)
	f := newFixture(t, Options{}, llmtest.BashTurn("c", "sleep "+secs), llmtest.TextTurn("never"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan command.Result, 1)
	go func() { done <- f.h.Run(f.traced(ctx), `task:general -p "wait" -d "sleeper"`) }()
	running := func() bool { return exec.Command("pgrep", "-f", "sleep "+regexp.QuoteMeta(secs)).Run() == nil }
	testutil.WaitFor(t, "the sleep to start", running)
	cancel()
	res := <-done
	if res.ExitCode != command.Interrupted {
		t.Fatalf("result = %+v, want 130", res)
	}
	testutil.WaitFor(t, "the sleep to be killed", func() bool { return !running() })
}

// A task that outlives its timeout is stopped and reported as such.
func TestTimeout(t *testing.T) {
	f := newFixture(t, Options{Timeout: 200 * time.Millisecond}, llmtest.Turn{Text: "late", Delay: time.Minute})
	res := f.h.Run(f.traced(context.Background()), `task:general -p "slow" -d "slow"`)
	if res.ExitCode != TimedOut || !strings.Contains(res.Stderr, "timed out") || !strings.Contains(res.Stderr, "SYNAPSE_TASK_TIMEOUT") {
		t.Fatalf("result = %+v, want exit %d naming SYNAPSE_TASK_TIMEOUT", res, TimedOut)
	}
}

// A provider error is a failed task carrying the error, never an empty success.
func TestProviderErrorFails(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.ErrorTurn(400, "model xyz does not exist"))
	res := f.h.Run(f.traced(context.Background()), `task:explore -p "look" -d "look"`)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "Task failed") || !strings.Contains(res.Stderr, "model xyz does not exist") {
		t.Fatalf("result = %+v", res)
	}
	if res.Stdout != "" {
		t.Errorf("stdout = %q", res.Stdout)
	}
	ev := f.parent.Events()
	end := ev[len(ev)-1]
	if end.Kind != agent.TaskEnd || end.Err == nil || end.Result == nil || !end.Result.IsError {
		t.Errorf("TaskEnd = %+v", end)
	}
}

// A model that ends without any text is a failure too.
func TestEmptyAnswerFails(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.TextTurn(""))
	res := f.h.Run(f.traced(context.Background()), `task:general -p "x" -d "y"`)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "without an answer") {
		t.Fatalf("result = %+v", res)
	}
}

// Every sub-agent request's usage goes to the parent, with the model.
func TestUsageRolledUp(t *testing.T) {
	f := newFixture(t, Options{},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.BashCall("c1", "echo hi")}, Usage: llmtest.Usage{InputTokens: 10, OutputTokens: 5, Exact: true}},
		llmtest.Turn{Text: "done", Usage: llmtest.Usage{InputTokens: 20, OutputTokens: 7, CacheReadTokens: 3, Exact: true}},
	)
	res := f.h.Run(f.traced(context.Background()), `task:general -p "x" -d "y"`)
	if res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	got := f.parent.Usages()
	want := []recordedUsage{
		{llm.Usage{InputTokens: 10, OutputTokens: 5}, "parent-model"},
		{llm.Usage{InputTokens: 20, OutputTokens: 7, CacheReadTokens: 3}, "parent-model"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("recorded usage = %+v, want %+v", got, want)
	}
	ev := f.parent.Events()
	end := ev[len(ev)-1]
	if end.Usage == nil || *end.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 12, CacheReadTokens: 3}) {
		t.Errorf("TaskEnd usage = %+v", end.Usage)
	}
}

// Events: start with type and description, each inner tool call, end with
// duration, tool count and success; all with one task id, nothing else.
func TestEvents(t *testing.T) {
	f := newFixture(t, Options{}, llmtest.BashTurn("c", "echo hi"), llmtest.TextTurn("said hi"))
	res := f.h.Run(f.traced(context.Background()), `task:explore -p "say hi" -d "greeter"`)
	if res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	ev := f.parent.Events()
	kinds := f.parent.kinds()
	want := []agent.EventKind{agent.TaskStart, agent.TaskToolStart, agent.TaskToolEnd, agent.TaskEnd}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("events = %v, want %v", kinds, want)
	}
	id := ev[0].TaskID
	for _, e := range ev {
		if e.TaskID != id || id == "" {
			t.Errorf("task id %q in %v, want %q", e.TaskID, e.Kind, id)
		}
	}
	if ev[0].TaskType != Explore || ev[0].TaskDescription != "greeter" {
		t.Errorf("TaskStart = %+v", ev[0])
	}
	if ev[1].Command != "echo hi" || ev[2].Result == nil || !strings.Contains(ev[2].Result.Output, "hi") {
		t.Errorf("tool events = %+v / %+v", ev[1], ev[2])
	}
	end := ev[3]
	if end.ToolCount != 1 || end.Duration <= 0 || end.Err != nil || end.Result == nil || end.Result.IsError {
		t.Errorf("TaskEnd = %+v", end)
	}
}

// The final text comes back whole (not summarised) up to the output cap.
func TestWholeAnswerReturned(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 20000; i++ {
		fmt.Fprintf(&b, "## Finding %d\n\n`internal/x/file%d.go:%d` does something worth knowing.\n\n", i, i, i*7)
	}
	answer := strings.TrimSpace(b.String())
	f := newFixture(t, Options{}, llmtest.Turn{Text: answer, Fragment: 4096})
	res := f.h.Run(f.traced(context.Background()), `task:explore -p "x" -d "y"`)
	if res.ExitCode != 0 || res.Stdout != answer {
		t.Fatalf("answer changed: exit %d, got %d chars, want %d", res.ExitCode, len(res.Stdout), len(answer))
	}
}

// An answer longer than the cap is saved whole to a file whose path is given.
func TestLongAnswerSaved(t *testing.T) {
	answer := strings.Repeat("é long answer line\n", 300)
	dir := t.TempDir()
	f := newFixture(t, Options{OutputCap: 1000, OutputDir: dir}, llmtest.Turn{Text: answer, Fragment: 4096})
	res := f.h.Run(f.traced(context.Background()), `task:explore -p "x" -d "y"`)
	if res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	if n := len([]rune(res.Stdout)); n > 1000 {
		t.Errorf("output is %d characters, over the cap", n)
	}
	m := regexp.MustCompile(`saved to (\S+\.md)`).FindStringSubmatch(res.Stdout)
	if m == nil || !strings.HasPrefix(m[1], dir) {
		t.Fatalf("no saved path in %q", res.Stdout)
	}
	data, err := os.ReadFile(m[1])
	if err != nil || string(data) != answer {
		t.Fatalf("saved file: %v, %d bytes, want the whole answer (%d)", err, len(data), len(answer))
	}
	if !strings.HasPrefix(answer, strings.SplitN(res.Stdout, "\n\n[", 2)[0]) {
		t.Error("the shown part is not the answer's head")
	}
}

// Parallel tasks never share cd/export or todo lists: each has its own shell.
func TestOwnShellAndTodosPerTask(t *testing.T) {
	f := newFixture(t, Options{})
	for _, n := range []string{"A", "B"} {
		if err := os.Mkdir(f.ws.dir+"/dir"+n, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Both sub-agents must have run their cd/export before either checks:
	// the second turn waits for the other task's first tool result.
	var (
		mu      sync.Mutex
		stepped = map[string]bool{}
	)
	nameOf := func(req *llmtest.Request) string {
		if strings.Contains(req.FirstUserText(), "agent A") {
			return "A"
		}
		return "B"
	}
	f.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		n := nameOf(req)
		switch req.Turns() {
		case 0:
			todo := `TodoWrite '{"todos":[{"content":"check ` + n + `","activeForm":"checking","status":"completed"}]}'`
			return llmtest.BashTurn(n, "cd dir"+n+" && export WHO="+n, todo)
		case 1:
			mu.Lock()
			stepped[n] = true
			mu.Unlock()
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				mu.Lock()
				both := stepped["A"] && stepped["B"]
				mu.Unlock()
				if both {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			return llmtest.BashTurn(n+"2", `echo "$(basename "$PWD") $WHO"`)
		default:
			r := req.LastToolResults()
			return llmtest.TextTurn("saw: " + r[len(r)-1].Content)
		}
	})
	results := make([]command.Result, 2)
	var wg sync.WaitGroup
	for i, n := range []string{"A", "B"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = f.h.Run(f.traced(context.Background()), `task:general -p "agent `+n+`" -d "`+n+`"`)
		}()
	}
	wg.Wait()
	for i, n := range []string{"A", "B"} {
		if want := "saw: dir" + n + " " + n; results[i].ExitCode != 0 || results[i].Stdout != want {
			t.Errorf("task %s = %+v, want %q", n, results[i], want)
		}
	}
	if f.ws.built.Load() != 2 {
		t.Errorf("workspaces = %d, want one per task", f.ws.built.Load())
	}
	f.ws.mu.Lock()
	defer f.ws.mu.Unlock()
	for _, s := range f.ws.todos {
		if items := s.Items(); len(items) != 1 {
			t.Errorf("a task's todo list = %+v, want only its own item", items)
		}
	}
}

// A sub-agent cannot start another one, however the command is dressed up,
// even if the host wrongly gave its tool a task handler: the restricted
// tool checks every command of the line.
func TestNoNesting(t *testing.T) {
	attempts := []string{
		`task:general -p "nested" -d "nested"`,
		`task:explore -p "nested" -d "nested"`,
		`task:skill:search -p "nested" -d "nested"`,
		`echo x && task:general -p "nested" -d "nested"`,
		`true; task:general -p nested -d nested`,
		`false || task:general -p nested -d nested`,
		`echo hi | task:general -p nested -d nested`,
		`(task:general -p nested -d nested)`,
		`bash -c "task:general -p nested -d nested"`,
		`sh -c 'echo; task:explore -p nested -d nested'`,
		`bash task:general -p nested -d nested`,
		`echo $(task:general -p nested -d nested)`,
		`env task:general -p nested -d nested`,
	}
	f := newFixture(t, Options{})
	// The worst host: a task handler wired into the sub-agent's own tool.
	f.ws.extra = map[router.Family]command.Handler{router.FamilyTask: f.h}
	var calls []llmtest.ToolCall
	for i, a := range attempts {
		calls = append(calls, llmtest.BashCall(fmt.Sprintf("n%d", i), a))
	}
	f.srv.Script(llmtest.ToolTurn(calls...), llmtest.TextTurn("gave up"))
	res := f.h.Run(f.traced(context.Background()), `task:general -p "try to nest" -d "nester"`)
	if res.ExitCode != 0 {
		t.Fatalf("result = %+v", res)
	}
	req, _ := f.srv.LastRequest()
	for i, a := range attempts {
		tr, ok := req.ToolResult(fmt.Sprintf("n%d", i))
		if !ok || !tr.IsError || !strings.Contains(tr.Content, "Command blocked") {
			t.Errorf("%s: result = %+v, want Command blocked", a, tr)
		}
	}
	starts := 0
	for _, e := range f.parent.Events() {
		if e.Kind == agent.TaskStart {
			starts++
		}
	}
	if starts != 1 || f.srv.Count() != 2 {
		t.Errorf("nested sub-agents started: %d TaskStart events, %d requests", starts, f.srv.Count())
	}
}

// A sub-agent's own context is managed like the parent's: past its
// compaction threshold its older history is summarised by one request and
// its next request starts with the summary, tool pairs intact.
func TestSubagentContextIsCompacted(t *testing.T) {
	f := newFixture(t, Options{Context: contextmgr.Settings{Window: 16_384, OffloadAt: 1_000, CompactAt: 1_500, KeepRecent: 2, CooldownSteps: 100, MinSaving: 1}})
	summarised := func(req *llmtest.Request) bool {
		return slices.ContainsFunc(req.Messages, func(m llmtest.Message) bool { return strings.Contains(m.Text, contextmgr.SummaryPrefix) })
	}
	var summaries atomic.Int64
	f.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if strings.HasPrefix(req.System, "You summarise") {
			summaries.Add(1)
			return llmtest.TextTurn("## Current state\n- printed the lines")
		}
		if len(req.ToolResults()) < 8 && !summarised(req) {
			return llmtest.BashTurn(fmt.Sprintf("c%d", req.Index), "seq 1 400")
		}
		return llmtest.TextTurn("found it")
	})
	res := f.h.Run(f.traced(context.Background()), `task:general -p "print lines" -d "lines" --max-turns 20`)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "found it") {
		t.Fatalf("result = %+v", res)
	}
	if summaries.Load() != 1 {
		t.Fatalf("%d summary requests, want 1", summaries.Load())
	}
	last, _ := f.srv.LastRequest()
	if !summarised(&last) || !strings.Contains(last.Messages[0].Text, "print lines") {
		t.Errorf("the sub-agent's last request starts with %q, not its prompt, then the summary", last.Messages[0].Text)
	}
}
