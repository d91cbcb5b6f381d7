package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// gate holds sub-agent requests so that their overlap is observable: the
// requests are released in groups of width once the whole group has
// arrived (the last group once every request has). A scheduler that runs
// fewer at once never fills a group, and the test's assertions fail.
type gate struct {
	mu             sync.Mutex
	arrived, total int
	width          int
}

func (g *gate) wait() {
	g.mu.Lock()
	k := g.arrived
	g.arrived++
	target := min((k/g.width+1)*g.width, g.total)
	g.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		g.mu.Lock()
		ok := g.arrived >= target
		g.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

var sleeperRe = regexp.MustCompile(`sleeper (\d)`)

var taskNumber = regexp.MustCompile(`explore area (\d+)`)

// scriptParallel makes the parent call task:explore n times in one turn;
// each sub-agent answers (after the gate) with its own number.
func scriptParallel(srv *llmtest.Server, n int, g *gate) {
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if !isSubagent(req) {
			if req.Turns() == 0 {
				var calls []llmtest.ToolCall
				for i := range n {
					calls = append(calls, llmtest.BashCall(fmt.Sprintf("t%d", i),
						fmt.Sprintf(`task:explore --prompt "explore area %d of the project" --description "area %d"`, i, i)))
				}
				return llmtest.ToolTurn(calls...)
			}
			return llmtest.TextTurn(fmt.Sprintf("collected %d results", len(req.LastToolResults())))
		}
		if g != nil {
			g.wait()
		}
		m := taskNumber.FindStringSubmatch(req.FirstUserText())
		if m == nil {
			return llmtest.TextTurn("no area in the prompt")
		}
		return llmtest.TextTurn("explored area " + m[1])
	})
}

// runParallel runs one parent turn of n task:explore calls through
// app.NewAgent (the production wiring) and checks every result.
func runParallel(t *testing.T, env map[string]string, n, width int) (serverPeak, taskPeak int) {
	t.Helper()
	testutil.RequireBwrap(t)
	w := newWorld(t, env)
	scriptParallel(w.srv, n, &gate{total: n, width: width})
	p := w.newParent(t, false)
	ev := p.ev
	res, err := p.runner.Run(context.Background(), "explore everything")
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if want := fmt.Sprintf("collected %d results", n); res.Text != want {
		t.Errorf("final text = %q, want %q", res.Text, want)
	}
	last, _ := w.srv.LastRequest()
	for i := range n {
		tr, ok := last.ToolResult(fmt.Sprintf("t%d", i))
		if want := fmt.Sprintf("explored area %d", i); !ok || tr.IsError || tr.Content != want {
			t.Errorf("task %d result = %+v, want %q", i, tr, want)
		}
	}
	if s, e := ev.count(agent.TaskStart), ev.count(agent.TaskEnd); s != n || e != n {
		t.Errorf("TaskStart %d, TaskEnd %d, want %d each", s, e, n)
	}
	return w.srv.MaxConcurrent(), ev.maxRunning()
}

// One model turn with 5 task:explore calls runs all five sub-agents at once:
// their requests overlap on the server.
func TestFiveExploresRunConcurrently(t *testing.T) {
	serverPeak, taskPeak := runParallel(t, nil, 5, 5)
	if serverPeak != 5 || taskPeak != 5 {
		t.Errorf("at most %d requests and %d sub-agents at once, want 5 and 5", serverPeak, taskPeak)
	}
}

// Seed 004: 7 calls run at most 5 at once; the rest queue.
func TestSevenTasksRunAtMostFive(t *testing.T) {
	serverPeak, taskPeak := runParallel(t, nil, 7, 5)
	if taskPeak != 5 {
		t.Errorf("at most %d sub-agents at once, want exactly 5", taskPeak)
	}
	if serverPeak < 5 {
		t.Errorf("at most %d requests at once, want 5 overlapping", serverPeak)
	}
}

// Seed 004: SYNAPSE_MAX_PARALLEL_TASKS=3 gives at most 3 at once.
func TestMaxParallelTasksEnv(t *testing.T) {
	serverPeak, taskPeak := runParallel(t, map[string]string{"SYNAPSE_MAX_PARALLEL_TASKS": "3"}, 5, 3)
	if taskPeak != 3 {
		t.Errorf("at most %d sub-agents at once, want exactly 3", taskPeak)
	}
	if serverPeak < 3 {
		t.Errorf("at most %d requests at once, want 3 overlapping", serverPeak)
	}
}

// attempt is one command a sub-agent tries, and what must come of it.
type attempt struct {
	cmd string
	// blocked: refused by the restricted tool before running.
	blocked bool
	// want, when set, must appear in the result.
	want string
}

// runSubagentAttempts has the parent start one task of kind; the sub-agent
// runs every attempt (in one turn) and ends. It returns the results by command.
func runSubagentAttempts(t *testing.T, w *world, kind string, attempts []attempt) (map[string]llmtest.ToolResult, *parent) {
	t.Helper()
	p := w.newParent(t, false)
	var (
		mu      sync.Mutex
		results = map[string]llmtest.ToolResult{}
	)
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if !isSubagent(req) {
			if req.Turns() == 0 {
				return llmtest.BashTurn("p", fmt.Sprintf(`task:%s -p "try everything" -d "attempts"`, kind))
			}
			return llmtest.TextTurn("parent done")
		}
		if req.Turns() == 0 {
			var calls []llmtest.ToolCall
			for i, a := range attempts {
				calls = append(calls, llmtest.BashCall(fmt.Sprintf("a%d", i), a.cmd))
			}
			return llmtest.ToolTurn(calls...)
		}
		mu.Lock()
		for i, a := range attempts {
			if tr, ok := req.ToolResult(fmt.Sprintf("a%d", i)); ok {
				results[a.cmd] = tr
			}
		}
		mu.Unlock()
		return llmtest.TextTurn("sub-agent done")
	})
	res, err := p.runner.Run(context.Background(), "go")
	if err != nil || res.Text != "parent done" {
		t.Fatalf("run = %q, %v", res.Text, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range attempts {
		tr, ok := results[a.cmd]
		switch {
		case !ok:
			t.Errorf("%s: no result", a.cmd)
		case a.blocked && (!tr.IsError || !strings.Contains(tr.Content, "Command blocked")):
			t.Errorf("%s: not blocked by the restricted tool: %+v", a.cmd, tr)
		case a.want != "" && !strings.Contains(tr.Content, a.want):
			t.Errorf("%s: result lacks %q: %q", a.cmd, a.want, tr.Content)
		}
	}
	if n := p.ev.count(agent.TaskStart); n != 1 {
		t.Errorf("%d sub-agents started, want only the one the parent asked for", n)
	}
	return results, p
}

// nestingAttempts try to start a sub-agent from a sub-agent.
var nestingAttempts = []attempt{
	{cmd: `task:general -p "nested" -d "nested"`, blocked: true},
	{cmd: `task:explore -p nested -d nested`, blocked: true},
	{cmd: `echo x && task:general -p nested -d nested`, blocked: true},
	{cmd: `bash -c "task:general -p nested -d nested"`, blocked: true},
	{cmd: `bash task:general -p nested -d nested`, blocked: true},
	{cmd: `true; (task:skill:search -p nested -d nested)`, blocked: true},
}

// task:explore cannot change the project, whatever it tries: the restricted
// tool refuses write/edit (anywhere in a line) and the shell runs under a
// read-only bubblewrap sandbox, so redirections, sed -i and scripts fail too.
// Reads and the temp directory still work (the sandbox is not just broken).
func TestExploreCannotWriteOrNest(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	must(t, os.WriteFile(filepath.Join(w.proj, "existing.txt"), []byte("original\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(w.proj, "writer.sh"), []byte("#!/bin/sh\necho from-script > \"$(dirname \"$0\")/script-out.txt\"\n"), 0o755))
	attempts := append([]attempt{
		{cmd: `echo x > f1.txt`},
		{cmd: `sed -i 's/original/changed/' existing.txt`},
		{cmd: `bash -c "echo x > f2.txt"`},
		{cmd: `./writer.sh`},
		{cmd: `sh writer.sh`},
		{cmd: `touch f3.txt`},
		{cmd: `mkdir d1`},
		{cmd: `rm -f existing.txt`},
		{cmd: `mv existing.txt moved.txt`},
		{cmd: `cp existing.txt f4.txt`},
		{cmd: "cat > f5.txt <<'EOF'\nhello\nEOF"},
		{cmd: `echo x | tee f6.txt`},
		{cmd: `(cd .. && echo x > proj/f7.txt)`},
		{cmd: `bash echo x > f8.txt`},
		{cmd: `write f9.txt hello`, blocked: true},
		{cmd: `edit existing.txt original changed`, blocked: true},
		{cmd: `echo ok && write f10.txt x`, blocked: true},
		{cmd: `bash -c "edit existing.txt original changed"`, blocked: true},
		{cmd: `cat existing.txt`, want: "original"},
		{cmd: `read existing.txt`, want: "original"},
		{cmd: `echo scratch > "$TMPDIR/scratch.txt" && cat "$TMPDIR/scratch.txt"`, want: "scratch"},
	}, nestingAttempts...)
	runSubagentAttempts(t, w, "explore", attempts)

	entries, err := os.ReadDir(w.proj)
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != "existing.txt writer.sh" {
		t.Errorf("the project changed: it holds %s", got)
	}
	data, err := os.ReadFile(filepath.Join(w.proj, "existing.txt"))
	if err != nil || string(data) != "original\n" {
		t.Errorf("existing.txt = %q, %v", data, err)
	}
}

// A project under the host temp directory is no more writable by explore:
// its sandbox replaces the host temp dir with a private /tmp.
func TestExploreCannotWriteProjectUnderTempDir(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	hostTmp := filepath.Dir(w.proj)
	t.Setenv("TMPDIR", hostTmp) // the project now lives under the temp dir
	must(t, os.WriteFile(filepath.Join(w.proj, "existing.txt"), []byte("original\n"), 0o644))
	scratch := "$(ls -d " + filepath.Join(hostTmp, "synapse-scratch-") + "*)"
	writeSaved := `echo x > "` + scratch + `/probe.txt" && echo wrote`
	attempts := []attempt{
		{cmd: `echo x > f1.txt`, want: "This agent works read-only"},
		// Reported on the project directory, not on sed's temporary file.
		{cmd: `sed -i 's/original/changed/' existing.txt`, want: "did not allow this command to access " + w.proj + ".\nReason: this agent's sandbox is read-only"},
		{cmd: `touch f2.txt`},
		{cmd: "echo x > " + filepath.Join(hostTmp, "planted.txt")},
		{cmd: `cat existing.txt`, want: "original"},
		// Cut outputs are saved on the host, in the parent's private scratch
		// directory; it stays readable, not writable.
		{cmd: `ls -ld "` + scratch + `"`, want: "drwx------"},
		{cmd: writeSaved},
		{cmd: `echo "$TMPDIR" && echo scratch > "$TMPDIR/s.txt" && cat "$TMPDIR/s.txt"`, want: "/tmp\nscratch"},
	}
	results, _ := runSubagentAttempts(t, w, "explore", attempts)
	if r := results[writeSaved]; strings.Contains(r.Content, "wrote") {
		t.Errorf("explore wrote into the saved outputs: %q", r.Content)
	}
	entries, err := os.ReadDir(w.proj)
	must(t, err)
	if len(entries) != 1 || entries[0].Name() != "existing.txt" {
		t.Errorf("the project changed: %v", entries)
	}
	if data, err := os.ReadFile(filepath.Join(w.proj, "existing.txt")); err != nil || string(data) != "original\n" {
		t.Errorf("existing.txt = %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(hostTmp, "planted.txt")); err == nil {
		t.Error("explore wrote into the host temp directory")
	}
}

// task:general may change files (its sandbox has the project writable) but
// cannot start sub-agents either.
func TestGeneralWritesButCannotNest(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	must(t, os.WriteFile(filepath.Join(w.proj, "writer.sh"), []byte("#!/bin/sh\necho from-script > \"$(dirname \"$0\")/script-out.txt\"\n"), 0o755))
	attempts := append([]attempt{
		{cmd: `echo x > g1.txt && cat g1.txt`, want: "x"},
		{cmd: `write g2.txt hello`},
		{cmd: `./writer.sh`},
		{cmd: "echo x > " + filepath.Join(w.env["HOME"], "outside.txt")},
	}, nestingAttempts...)
	runSubagentAttempts(t, w, "general", attempts)
	if _, err := os.Stat(filepath.Join(w.env["HOME"], "outside.txt")); err == nil {
		t.Error("general wrote outside the project: its shell is not sandboxed")
	}
	for _, f := range []string{"g1.txt", "g2.txt", "script-out.txt"} {
		if _, err := os.Stat(filepath.Join(w.proj, f)); err != nil {
			t.Errorf("general could not write %s: %v", f, err)
		}
	}
}

// The parent's todo list is untouched by a sub-agent's TodoWrite, and
// sub-agent todo events do not reach the parent.
func TestSubagentTodosAreItsOwn(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	_, p := runSubagentAttempts(t, w, "general", []attempt{
		{cmd: `TodoWrite '{"todos":[{"content":"sub step","activeForm":"doing the sub step","status":"completed"}]}'`},
	})
	if items := p.todos.Items(); len(items) != 0 {
		t.Errorf("parent todo list = %+v, want untouched", items)
	}
	if n := p.ev.count(agent.TodoChange); n != 0 {
		t.Errorf("parent saw %d todo changes", n)
	}
}

// Usage of every sub-agent request reaches the parent session's totals and rounds.
func TestUsageReachesParentSession(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, nil)
	p := w.newParent(t, true)
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case !isSubagent(req) && req.Turns() == 0:
			t := llmtest.BashTurn("p", `task:general -p "count" -d "count"`)
			t.Usage = llmtest.Usage{InputTokens: 1, OutputTokens: 1, Exact: true}
			return t
		case !isSubagent(req):
			return llmtest.Turn{Text: "parent done", Usage: llmtest.Usage{InputTokens: 2, OutputTokens: 2, Exact: true}}
		case req.Turns() == 0:
			t := llmtest.BashTurn("s", "echo counting")
			t.Usage = llmtest.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 5, Exact: true}
			return t
		default:
			return llmtest.Turn{Text: "counted", Usage: llmtest.Usage{InputTokens: 200, OutputTokens: 20, Exact: true}}
		}
	})
	if _, err := p.runner.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	u := p.runner.SessionUsage()
	if u == nil {
		t.Fatal("no session usage")
	}
	if u.InputTokens != 303 || u.OutputTokens != 33 || u.CacheReadTokens != 5 || u.RoundCount != 4 {
		t.Errorf("session usage = in %d out %d cache %d rounds %d, want 303/33/5 over 4 rounds",
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.RoundCount)
	}
}

// Cancelling the parent turn stops every running sub-agent and kills their
// shell commands; each sub-agent reports its end.
func TestParentCancelStopsAllSubagents(t *testing.T) {
	testutil.RequireBwrap(t)
	testutil.RequireTool(t, "pgrep")
	w := newWorld(t, nil)
	p := w.newParent(t, false)
	const n = 3
	stamp := time.Now().UnixNano() % 1_000_000
	secs := func(i int) string { return fmt.Sprintf("%d.%06d", 4000+i, stamp) }
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if !isSubagent(req) {
			var calls []llmtest.ToolCall
			for i := range n {
				calls = append(calls, llmtest.BashCall(fmt.Sprintf("t%d", i), fmt.Sprintf(`task:general -p "sleeper %d" -d "sleeper %d"`, i, i)))
			}
			return llmtest.ToolTurn(calls...)
		}
		m := sleeperRe.FindStringSubmatch(req.FirstUserText())
		if m == nil {
			return llmtest.TextTurn("no sleeper number")
		}
		return llmtest.BashTurn("s", "sleep "+secs(int(m[1][0]-'0')))
	})
	running := func(i int) bool {
		return exec.Command("pgrep", "-f", "sleep "+regexp.QuoteMeta(secs(i))).Run() == nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.runner.Run(ctx, "go")
		done <- err
	}()
	testutil.WaitFor(t, "all sleeps to run", func() bool { return running(0) && running(1) && running(2) })
	cancel()
	if err := <-done; !agent.IsInterrupted(err) {
		t.Fatalf("run error = %v, want interrupted", err)
	}
	testutil.WaitFor(t, "the sleeps to be killed", func() bool { return !running(0) && !running(1) && !running(2) })
	testutil.WaitFor(t, "every TaskEnd", func() bool { return p.ev.count(agent.TaskEnd) == n })
	for _, e := range p.ev.list() {
		if e.Kind == agent.TaskEnd && e.Err == nil {
			t.Errorf("TaskEnd %s without an error after cancel", e.TaskID)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Seed 004 with SYNAPSE_TASK_TIMEOUT: in a batch, the task that outlives the
// timeout fails alone (exit 124) and the fast ones still succeed.
func TestTaskTimeoutFailsOnlyTheSlowTask(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, map[string]string{"SYNAPSE_TASK_TIMEOUT": "500"})
	p := w.newParent(t, false)
	w.srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		switch {
		case !isSubagent(req) && req.Turns() == 0:
			return llmtest.BashTurn("t", `task:general -p "fast one" -d a`, `task:general -p "slow one" -d b`, `task:explore -p "fast two" -d c`)
		case !isSubagent(req):
			return llmtest.TextTurn("done")
		case strings.Contains(req.FirstUserText(), "slow"):
			return llmtest.Turn{Text: "too late", Delay: time.Minute}
		}
		return llmtest.TextTurn("quick answer")
	})
	if _, err := p.runner.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	last, _ := w.srv.LastRequest()
	for id, want := range map[string]string{"t-1": "quick answer", "t-2": "SYNAPSE_TASK_TIMEOUT", "t-3": "quick answer"} {
		tr, ok := last.ToolResult(id)
		if !ok || !strings.Contains(tr.Content, want) || tr.IsError != (id == "t-2") {
			t.Errorf("%s = %+v, want %q", id, tr, want)
		}
	}
	var order []string
	for _, e := range p.ev.list() {
		if e.Kind == agent.ToolEnd {
			order = append(order, e.CallID)
		}
	}
	if len(order) != 3 || order[2] != "t-2" {
		t.Errorf("tool results in order %v, want the slow task last", order)
	}
}
