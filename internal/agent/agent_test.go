package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// forEachFormat runs a scenario once per wire format.
func forEachFormat(t *testing.T, fn func(t *testing.T, format string)) {
	for _, f := range wireFormats {
		t.Run(f, func(t *testing.T) { fn(t, f) })
	}
}

func newRunner(t *testing.T, p llm.Provider, tt *testTool, mod func(*Options)) (*Runner, *recorder) {
	t.Helper()
	rec := &recorder{}
	todos := &todo.Store{}
	if tt.todos == nil {
		tt.todos = todos
	}
	opts := Options{Provider: p, Model: "test-model", Cwd: t.TempDir(), Tool: tt, Todos: tt.todos, OnEvent: rec.on}
	if mod != nil {
		mod(&opts)
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r, rec
}

// barrierTasks makes every task:* call wait until n calls run at once; a
// serialised schedule would never get there and the call reports an error.
func barrierTasks(tt **testTool, n int) func(ctx context.Context, cmd string) tool.Result {
	return func(ctx context.Context, cmd string) tool.Result {
		if strings.HasPrefix(cmd, "task:") && !(*tt).waitInFlight(ctx, n) {
			return tool.Result{Output: "never ran in parallel", IsError: true}
		}
		return tool.Result{Output: "ok: " + cmd}
	}
}

// Scenario: 连续 task:* 工具调用应并行执行
func TestConsecutiveTasksRunAsOneParallelBatch(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		var tt *testTool
		tt = newTestTool(barrierTasks(&tt, 3))
		p := newProvider(t, format,
			llmtest.ToolTurn(taskCall("t1", "explore", "a"), taskCall("t2", "explore", "b"), taskCall("t3", "general", "c")),
			llmtest.TextTurn("all done"))
		r, _ := newRunner(t, p, tt, nil)
		res, err := r.Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "all done" {
			t.Errorf("text = %q", res.Text)
		}
		if got := tt.maxInFlight(); got != 3 {
			t.Errorf("max parallel = %d, want 3", got)
		}
		msgs := toolMessages(r.History())
		if len(msgs) != 3 {
			t.Fatalf("tool messages = %d, want 3", len(msgs))
		}
		for i, id := range []string{"t1", "t2", "t3"} {
			if msgs[i].ToolCallID != id || msgs[i].IsError || !strings.HasPrefix(msgs[i].Text, "ok: task:") {
				t.Errorf("result %d = %+v", i, msgs[i])
			}
		}
	})
}

// Scenario: task:explore 与 task:general 混合调用仍可并行
func TestMixedTaskTypesShareTheBatch(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		var tt *testTool
		tt = newTestTool(barrierTasks(&tt, 2))
		p := newProvider(t, format,
			llmtest.ToolTurn(taskCall("e", "explore", "x"), taskCall("g", "general", "y")),
			llmtest.TextTurn("ok"))
		r, _ := newRunner(t, p, tt, nil)
		if _, err := r.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		if got := tt.maxInFlight(); got != 2 {
			t.Errorf("explore and general ran %d at once, want 2", got)
		}
		for _, m := range toolMessages(r.History()) {
			if m.IsError {
				t.Errorf("result %s failed: %s", m.ToolCallID, m.Text)
			}
		}
	})
}

// Scenario: 混合调用按分组顺序执行 read -> task批次 -> write
func TestGroupsRunInOrder(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		var tt *testTool
		tt = newTestTool(barrierTasks(&tt, 2))
		p := newProvider(t, format,
			llmtest.BashTurn("c", "read a.txt", "task:explore -p one -d one", "task:general -p two -d two", "write b.txt hi"),
			llmtest.TextTurn("ok"))
		r, _ := newRunner(t, p, tt, nil)
		if _, err := r.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		log := tt.events()
		pos := func(e string) int {
			for i, x := range log {
				if x == e {
					return i
				}
			}
			t.Fatalf("%q not in %v", e, log)
			return -1
		}
		readEnd := pos("end read a.txt")
		t1s, t2s := pos("start task:explore -p one -d one"), pos("start task:general -p two -d two")
		t1e, t2e := pos("end task:explore -p one -d one"), pos("end task:general -p two -d two")
		writeStart := pos("start write b.txt hi")
		if readEnd > t1s || readEnd > t2s {
			t.Errorf("a task started before read finished: %v", log)
		}
		if writeStart < t1e || writeStart < t2e {
			t.Errorf("write started before the task batch finished: %v", log)
		}
		if tt.maxInFlight() != 2 {
			t.Errorf("tasks did not overlap: %v", log)
		}
		ids := []string{}
		for _, m := range toolMessages(r.History()) {
			ids = append(ids, m.ToolCallID)
		}
		if strings.Join(ids, ",") != "c-1,c-2,c-3,c-4" {
			t.Errorf("results out of call order: %v", ids)
		}
	})
}

// capTasks makes task calls hold until `want` run at once or every call has
// started, so the observed maximum is the scheduler's limit.
func capTasks(tt **testTool, want, total int) func(ctx context.Context, cmd string) tool.Result {
	return func(ctx context.Context, cmd string) tool.Result {
		x := *tt
		x.mu.Lock()
		deadline := time.Now().Add(10 * time.Second)
		guard := time.AfterFunc(10*time.Second, func() { x.mu.Lock(); x.cond.Broadcast(); x.mu.Unlock() })
		for x.inFlight < want && startedLocked(x) < total && time.Now().Before(deadline) && ctx.Err() == nil {
			x.cond.Wait()
		}
		x.mu.Unlock()
		guard.Stop()
		return tool.Result{Output: "done " + cmd}
	}
}

func startedLocked(x *testTool) int {
	n := 0
	for _, e := range x.log {
		if strings.HasPrefix(e, "start ") {
			n++
		}
	}
	return n
}

// Scenarios: 默认并行上限为 5 / SYNAPSE_MAX_PARALLEL_TASKS 可覆盖默认并行上限
func TestParallelLimitFromConfig(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		calls     int
		wantLimit int
	}{
		{"default 5 with 7 tasks", map[string]string{"HOME": "/nonexistent"}, 7, 5},
		{"env 3 with 5 tasks", map[string]string{"HOME": "/nonexistent", "SYNAPSE_MAX_PARALLEL_TASKS": "3"}, 5, 3},
		{"invalid env falls back to 5", map[string]string{"HOME": "/nonexistent", "SYNAPSE_MAX_PARALLEL_TASKS": "zero"}, 6, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachFormat(t, func(t *testing.T, format string) {
				cfg, err := config.Load(testutil.MapEnv(c.env))
				if err != nil {
					t.Fatal(err)
				}
				var tt *testTool
				tt = newTestTool(capTasks(&tt, cfg.MaxParallelTasks, c.calls))
				var calls []llmtest.ToolCall
				for i := 0; i < c.calls; i++ {
					calls = append(calls, taskCall("t"+string(rune('a'+i)), "explore", "p"))
				}
				p := newProvider(t, format, llmtest.ToolTurn(calls...), llmtest.TextTurn("ok"))
				r, _ := newRunner(t, p, tt, func(o *Options) { o.MaxParallelTasks = cfg.MaxParallelTasks })
				if _, err := r.Run(context.Background(), "go"); err != nil {
					t.Fatal(err)
				}
				if got := tt.maxInFlight(); got != c.wantLimit {
					t.Errorf("max parallel = %d, want %d", got, c.wantLimit)
				}
				if got := len(toolMessages(r.History())); got != c.calls {
					t.Errorf("results = %d, want %d", got, c.calls)
				}
			})
		})
	}
}

// Scenario: 并行批次中单个 task 超时不应阻塞其它 task 结果
func TestSlowTaskTimeoutOnlyAffectsItself(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		release := make(chan struct{})
		tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
			if strings.Contains(cmd, "slow") {
				// The sub-agent's own timeout fires; here it fires once both fast
				// tasks have reported, so "fast first" is an ordering fact.
				select {
				case <-release:
				case <-ctx.Done():
				}
				return tool.Result{Output: "Task timed out", IsError: true, Message: "Task timed out",
					Facts: tool.Facts{FailureCategory: tool.FailureExecution}}
			}
			return tool.Result{Output: "fast ok"}
		})
		p := newProvider(t, format,
			llmtest.ToolTurn(taskCall("s", "general", "slow"), taskCall("f1", "explore", "fast1"), taskCall("f2", "explore", "fast2")),
			llmtest.TextTurn("finished"))
		ended := 0
		r, rec := newRunner(t, p, tt, nil)
		rec.hook = func(e Event) {
			if e.Kind == ToolEnd && e.CallID != "s" {
				ended++
				if ended == 2 {
					close(release)
				}
			}
		}
		res, err := r.Run(context.Background(), "go")
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "finished" {
			t.Errorf("text = %q", res.Text)
		}
		ends := rec.kinds(ToolEnd)
		if len(ends) != 3 || ends[2].CallID != "s" {
			t.Fatalf("fast tasks did not report first: %+v", ends)
		}
		msgs := toolMessages(r.History())
		want := map[string]bool{"s": true, "f1": false, "f2": false}
		for i, id := range []string{"s", "f1", "f2"} {
			if msgs[i].ToolCallID != id || msgs[i].IsError != want[id] {
				t.Errorf("result %d = %+v", i, msgs[i])
			}
		}
	})
}

// Scenarios: 工具结果阶段被 Abort 时不得持久化悬空 toolCalls / 中断时应向正在执行的工具传播 cancel /
// 中断后下一轮执行可恢复且不受脏历史影响
func TestAbortDuringToolsDropsTheStepAndRecovers(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		dir := t.TempDir()
		cancelled := make(chan error, 1)
		tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
			if cmd == "sleep 100" {
				<-ctx.Done()
				cancelled <- ctx.Err()
				return tool.Result{Output: "interrupted", IsError: true}
			}
			return tool.Result{Output: "ok " + cmd}
		})
		p := newProvider(t, format,
			llmtest.BashTurn("a", "echo first", "sleep 100"),
			llmtest.TextTurn("recovered"))
		r, rec := newRunner(t, p, tt, func(o *Options) { o.SessionsDir = dir })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rec.hook = func(e Event) {
			if e.Kind == ToolStart && e.Command == "sleep 100" {
				cancel()
			}
		}
		res, err := r.Run(ctx, "start")
		if !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err = %v, want ErrInterrupted", err)
		}
		if res.StopReason != StopInterrupted {
			t.Errorf("stop = %q", res.StopReason)
		}
		select {
		case e := <-cancelled:
			if !errors.Is(e, context.Canceled) {
				t.Errorf("tool saw %v", e)
			}
		default:
			t.Fatal("the running tool was not cancelled")
		}
		h := r.History()
		if len(h) != 1 || h[0].Role != llm.RoleUser {
			t.Fatalf("history after abort = %+v, want only the user message", h)
		}
		onDisk := loadSession(t, dir, r.SessionID())
		if len(onDisk) != 1 || len(danglingCalls(onDisk)) != 0 {
			t.Fatalf("session after abort = %+v", onDisk)
		}

		res, err = r.Run(context.Background(), "again")
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "recovered" {
			t.Errorf("text = %q", res.Text)
		}
		for _, hist := range [][]llm.Message{r.History(), loadSession(t, dir, r.SessionID())} {
			if d := danglingCalls(hist); len(d) != 0 {
				t.Errorf("dangling tool calls %v in %+v", d, hist)
			}
			// The prompt, the note that it was interrupted, the new prompt, the answer.
			if len(hist) != 4 || !strings.HasPrefix(hist[1].Text, interruptedLead) || !strings.Contains(hist[1].Text, "cancelled") || hist[3].Text != "recovered" {
				t.Errorf("history = %+v", hist)
			}
		}
	})
}

func TestCancelBeforeFirstRequestAppendsNothing(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, "fake")
	r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = dir })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Run(ctx, "never sent")
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	if len(r.History()) != 0 {
		t.Errorf("history = %+v", r.History())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("sessions dir not empty: %v", entries)
	}
}

func loadSession(t *testing.T, dir, id string) []llm.Message {
	t.Helper()
	msgs, err := session.NewStore(dir, nil, func(err error) { t.Errorf("warning: %v", err) }).History(id)
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

// Scenario: 模型尝试结束但 Todo 仍未完成时应强制继续
func TestUnfinishedTodosForceAnotherTurn(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		tt := newTestTool(nil)
		tt.todos = &todo.Store{}
		tt.todos.Set([]todo.Item{
			{Content: "Write the code", ActiveForm: "Writing", Status: todo.Completed},
			{Content: "Run the tests", ActiveForm: "Running", Status: todo.InProgress},
			{Content: "Update docs", ActiveForm: "Updating", Status: todo.Pending},
		})
		p := newProvider(t, format,
			llmtest.TextTurn("I think I am done"),
			llmtest.BashTurn("x", `TodoWrite [{"content":"Write the code","activeForm":"Writing","status":"completed"},{"content":"Run the tests","activeForm":"Running","status":"completed"},{"content":"Update docs","activeForm":"Updating","status":"completed"}]`),
			llmtest.TextTurn("now really done"))
		r, rec := newRunner(t, p, tt, nil)
		res, err := r.Run(context.Background(), "work")
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "now really done" || res.Turns != 3 {
			t.Errorf("result = %+v", res)
		}
		h := r.History()
		if len(h) < 3 || h[2].Role != llm.RoleUser || !strings.HasPrefix(h[2].Text, "[System Reminder]") {
			t.Fatalf("no reminder after the first answer: %+v", h)
		}
		if !strings.Contains(h[2].Text, "Run the tests") || !strings.Contains(h[2].Text, "Update docs") || strings.Contains(h[2].Text, "Write the code") {
			t.Errorf("reminder does not list exactly the unfinished items: %q", h[2].Text)
		}
		if len(rec.kinds(Reminder)) != 1 {
			t.Errorf("reminder events = %d", len(rec.kinds(Reminder)))
		}
		if len(rec.kinds(TodoChange)) == 0 {
			t.Error("no todo change event")
		}
	})
}

func TestRemindersAreBounded(t *testing.T) {
	tt := newTestTool(nil)
	tt.todos = &todo.Store{}
	tt.todos.Set([]todo.Item{{Content: "never done", Status: todo.Pending}})
	turns := []llmtest.Turn{}
	for i := 0; i < DefaultMaxReminders+1; i++ {
		turns = append(turns, llmtest.TextTurn("stop"))
	}
	p := newProvider(t, "fake", turns...)
	r, rec := newRunner(t, p, tt, nil)
	res, err := r.Run(context.Background(), "work")
	if err != nil {
		t.Fatal(err)
	}
	if res.Turns != DefaultMaxReminders+1 || len(rec.kinds(Reminder)) != DefaultMaxReminders {
		t.Errorf("turns = %d, reminders = %d", res.Turns, len(rec.kinds(Reminder)))
	}
}

// Scenario: Todo 全部完成时可正常结束
func TestCompletedTodosEndTheRun(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		tt := newTestTool(nil)
		tt.todos = &todo.Store{}
		tt.todos.Set([]todo.Item{{Content: "a", Status: todo.Completed}, {Content: "b", Status: todo.Completed}})
		p := newProvider(t, format, llmtest.TextTurn("final answer"))
		r, rec := newRunner(t, p, tt, nil)
		res, err := r.Run(context.Background(), "work")
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "final answer" || res.Turns != 1 {
			t.Errorf("result = %+v", res)
		}
		if len(rec.kinds(Reminder)) != 0 {
			t.Error("a reminder was sent")
		}
		for _, m := range r.History() {
			if strings.Contains(m.Text, "[System Reminder]") {
				t.Errorf("reminder in history: %q", m.Text)
			}
		}
	})
}

// Scenarios: 默认开启时应在用户消息前注入英文技能搜索指令 / 显式关闭后应保留原始用户输入
func TestSkillSearchInstruction(t *testing.T) {
	cases := []struct {
		name    string
		disable bool
		input   string
	}{
		{"enabled by default", false, "<user-request>"},
		{"disabled", true, "保持原始输入"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachFormat(t, func(t *testing.T, format string) {
				p := newProvider(t, format, llmtest.TextTurn("ok"))
				r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.DisableSkillSearchInstruction = c.disable })
				if _, err := r.Run(context.Background(), c.input); err != nil {
					t.Fatal(err)
				}
				first := r.History()[0].Text
				if sent := firstUserTextSent(t, p); sent != first {
					t.Errorf("request carried %q, history has %q", sent, first)
				}
				if c.disable {
					if first != c.input {
						t.Errorf("first user text = %q, want exactly %q", first, c.input)
					}
					return
				}
				i := strings.Index(first, "Skill Search Priority")
				j := strings.Index(first, "Original user request")
				if i < 0 || j < i {
					t.Fatalf("instruction block missing or misordered: %q", first)
				}
				if !strings.HasSuffix(first, "\n"+c.input) {
					t.Errorf("original request not kept unchanged at the end: %q", first)
				}
				if !strings.Contains(first[:j], "task:skill:search") || !strings.Contains(first[:j], "skill:load") {
					t.Errorf("instruction does not point at task:skill:search and skill:load: %q", first)
				}
			})
		})
	}
}

// firstUserTextSent is the first user text the provider received.
func firstUserTextSent(t *testing.T, p llm.Provider) string {
	t.Helper()
	if fp, ok := p.(*fakeProvider); ok {
		fp.mu.Lock()
		defer fp.mu.Unlock()
		return fp.requests[0].Messages[0].Text
	}
	return sentFirstUserText(t, p)
}

// Scenario: 未提供会话选项时不创建持久会话
func TestNoSessionOptionsNoSession(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		home := t.TempDir()
		t.Chdir(home)
		p := newProvider(t, format, llmtest.TextTurn("hello"))
		r, _ := newRunner(t, p, newTestTool(nil), nil)
		if _, err := r.Run(context.Background(), "Hi"); err != nil {
			t.Fatal(err)
		}
		if id := r.SessionID(); id != "" {
			t.Errorf("SessionID = %q", id)
		}
		if u := r.SessionUsage(); u != nil {
			t.Errorf("SessionUsage = %+v", u)
		}
		if entries, _ := os.ReadDir(home); len(entries) != 0 {
			t.Errorf("files written: %v", entries)
		}
	})
}

// Scenario: 提供 sessionsDir 时首次运行自动建会话并持久化历史
func TestSessionsDirCreatesSessionOnFirstRun(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		dir := t.TempDir()
		p := newProvider(t, format, llmtest.TextTurn("Hello!"))
		r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = dir })
		if r.SessionID() != "" {
			t.Errorf("session before the first run: %q", r.SessionID())
		}
		if _, err := r.Run(context.Background(), "Hi"); err != nil {
			t.Fatal(err)
		}
		id := r.SessionID()
		if !strings.HasPrefix(id, "session-") {
			t.Fatalf("SessionID = %q", id)
		}
		h := loadSession(t, dir, id)
		if len(h) != 2 || h[0].Role != llm.RoleUser || h[1].Role != llm.RoleAssistant || h[1].Text != "Hello!" {
			t.Fatalf("persisted history = %+v", h)
		}
		data, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), "\n"); n != 2 {
			t.Errorf("history file has %d lines, want 2", n)
		}
		entries, err := session.NewStore(dir, nil, nil).List()
		if err != nil || len(entries) != 1 || entries[0].ID != id || entries[0].Title != "Hi" || entries[0].MessageCount != 2 {
			t.Errorf("index = %+v, %v", entries, err)
		}
		if u := r.SessionUsage(); u == nil || u.RoundCount != 1 || u.InputTokens == 0 {
			t.Errorf("usage = %+v", u)
		}
	})
}

// Scenario: 子代理 usage 回传应累计到主会话统计
func TestRecordUsageRollsUpIntoSession(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		dir := t.TempDir()
		p := newProvider(t, format, llmtest.TextTurn("Hello!"))
		r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = dir })
		if _, err := r.Run(context.Background(), "Hi"); err != nil {
			t.Fatal(err)
		}
		before := r.SessionUsage()
		sub := llm.Usage{InputTokens: 100, OutputTokens: 40, CacheReadTokens: 7, CacheCreationTokens: 3}
		r.RecordUsage(sub, "sub-model")
		after := r.SessionUsage()
		if after.InputTokens != before.InputTokens+100 || after.OutputTokens != before.OutputTokens+40 ||
			after.CacheReadTokens != before.CacheReadTokens+7 || after.CacheCreationTokens != before.CacheCreationTokens+3 {
			t.Errorf("totals %+v → %+v", before, after)
		}
		if len(after.Rounds) != len(before.Rounds)+1 || after.RoundCount != before.RoundCount+1 {
			t.Errorf("rounds %d → %d", len(before.Rounds), len(after.Rounds))
		}
		// The roll-up is on disk too (read from the index: the runner still
		// holds the session open).
		if got := savedUsage(t, dir, r.SessionID()); got.InputTokens != after.InputTokens || got.RoundCount != after.RoundCount {
			t.Errorf("persisted usage = %+v, want %+v", got, after)
		}
	})
}

// Sub-agent usage reported while a run is going is part of that run's
// Result.Usage and of the runner's totals, with or without a session
// (synapse run --output-format json prints Result.Usage).
func TestRecordUsageCountsInRunResult(t *testing.T) {
	sub := llm.Usage{InputTokens: 100, OutputTokens: 40, CacheReadTokens: 7, CacheCreationTokens: 3}
	for _, persist := range []bool{false, true} {
		t.Run(fmt.Sprintf("persist=%v", persist), func(t *testing.T) {
			var r *Runner
			tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
				r.RecordUsage(sub, "sub-model") // what a task:* sub-agent does per request
				return tool.Result{Output: "task done"}
			})
			p := newProvider(t, "fake", llmtest.ToolTurn(taskCall("t1", "explore", "look")), llmtest.TextTurn("done"))
			r, _ = newRunner(t, p, tt, func(o *Options) {
				if persist {
					o.SessionsDir = t.TempDir()
				}
			})
			res, err := r.Run(context.Background(), "go")
			if err != nil {
				t.Fatal(err)
			}
			// The fake provider reports 10 in / 5 out per request; two requests.
			want := llm.Usage{InputTokens: 20 + 100, OutputTokens: 10 + 40, CacheReadTokens: 7, CacheCreationTokens: 3}
			if res.Usage != want {
				t.Errorf("Result.Usage = %+v, want %+v", res.Usage, want)
			}
			if got := r.TotalUsage(); got != want {
				t.Errorf("TotalUsage = %+v, want %+v", got, want)
			}
			if u := r.SessionUsage(); persist && (u == nil || u.Totals() != want) {
				t.Errorf("SessionUsage = %+v, want totals %+v", u, want)
			}

			// A second run reports only its own usage; the totals keep growing.
			p2 := p.(*fakeProvider)
			p2.mu.Lock()
			p2.turns = append(p2.turns, llmtest.TextTurn("again"))
			p2.mu.Unlock()
			res, err = r.Run(context.Background(), "again")
			if err != nil {
				t.Fatal(err)
			}
			if one := (llm.Usage{InputTokens: 10, OutputTokens: 5}); res.Usage != one {
				t.Errorf("second Result.Usage = %+v, want %+v", res.Usage, one)
			}
			if got := r.TotalUsage(); got != want.Add(llm.Usage{InputTokens: 10, OutputTokens: 5}) {
				t.Errorf("TotalUsage after two runs = %+v", got)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Run("max turns", func(t *testing.T) {
		forEachFormat(t, func(t *testing.T, format string) {
			turns := []llmtest.Turn{}
			for i := 0; i < 3; i++ {
				turns = append(turns, llmtest.BashTurn("m"+string(rune('0'+i)), "echo"))
			}
			p := newProvider(t, format, turns...)
			r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.MaxTurns = 3 })
			res, err := r.Run(context.Background(), "loop")
			var le *LimitError
			if !errors.As(err, &le) || le.Reason != StopMaxTurns || res.StopReason != StopMaxTurns || res.Turns != 3 {
				t.Fatalf("res = %+v, err = %v", res, err)
			}
			if !strings.Contains(res.Text, "SYNAPSE_MAX_TOOL_ITERATIONS") {
				t.Errorf("final message = %q", res.Text)
			}
			if d := danglingCalls(r.History()); len(d) != 0 {
				t.Errorf("dangling %v", d)
			}
		})
	})
	t.Run("consecutive usage failures", func(t *testing.T) {
		forEachFormat(t, func(t *testing.T, format string) {
			tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
				cat := tool.FailureCommandNotFound
				if cmd == "bad-usage" {
					cat = tool.FailureInvalidUsage
				}
				if cmd == "works" {
					return tool.Result{Output: "fine"}
				}
				if cmd == "exec-fail" {
					cat = tool.FailureExecution
				}
				return tool.Result{Output: "no", IsError: true, Facts: tool.Facts{FailureCategory: cat}}
			})
			p := newProvider(t, format,
				llmtest.BashTurn("a", "nope"),
				llmtest.BashTurn("b", "works", "nope"), // a success resets the count
				llmtest.BashTurn("c", "exec-fail"),     // an execution error is not a usage failure
				llmtest.BashTurn("d", "nope"),
				llmtest.BashTurn("e", "bad-usage", "nope"),
				llmtest.BashTurn("f", "nope"),
			)
			r, _ := newRunner(t, p, tt, nil)
			res, err := r.Run(context.Background(), "x")
			var le *LimitError
			if !errors.As(err, &le) || le.Reason != StopConsecutiveFailures || res.Turns != 6 {
				t.Fatalf("res = %+v, err = %v", res, err)
			}
			if !strings.Contains(res.Text, "SYNAPSE_MAX_CONSECUTIVE_TOOL_FAILURES") {
				t.Errorf("final message = %q", res.Text)
			}
		})
	})
}

func TestProviderErrorIsReturned(t *testing.T) {
	p := newProvider(t, "fake", llmtest.ErrorTurn(500, "boom"))
	r, rec := newRunner(t, p, newTestTool(nil), nil)
	res, err := r.Run(context.Background(), "x")
	if err == nil || llmtest.KindOf(err) == "" || res.StopReason != StopError {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if len(rec.kinds(Error)) != 1 {
		t.Error("no error event")
	}
}

func TestUnknownToolNameIsAnErrorResult(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) { testUnknownToolName(t, format) })
}

func testUnknownToolName(t *testing.T, format string) {
	p := newProvider(t, format,
		llmtest.ToolTurn(llmtest.ToolCall{ID: "z", Name: "Read", Input: map[string]any{"path": "x"}}),
		llmtest.TextTurn("ok"))
	r, _ := newRunner(t, p, newTestTool(nil), nil)
	if _, err := r.Run(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	m := toolMessages(r.History())
	if len(m) != 1 || !m[0].IsError || !strings.Contains(m[0].Text, "the only tool is Bash") {
		t.Errorf("result = %+v", m)
	}
}

func TestResetAndResume(t *testing.T) {
	dir := t.TempDir()
	p := newProvider(t, "fake", llmtest.TextTurn("one"), llmtest.TextTurn("two"), llmtest.TextTurn("three"))
	tt := newTestTool(nil)
	r, _ := newRunner(t, p, tt, func(o *Options) { o.SessionsDir = dir })
	if _, err := r.Run(context.Background(), "first"); err != nil {
		t.Fatal(err)
	}
	first := r.SessionID()
	r.Todos().Set([]todo.Item{{Content: "x", Status: todo.Pending}})
	r.Reset()
	if r.SessionID() != "" || len(r.History()) != 0 || len(r.Todos().Items()) != 0 {
		t.Fatal("reset did not clear the conversation")
	}
	if _, err := r.Run(context.Background(), "second"); err != nil {
		t.Fatal(err)
	}
	if r.SessionID() == first {
		t.Fatal("reset kept the session")
	}
	if err := r.Resume(first[:len("session-")+8]); err != nil && !strings.Contains(err.Error(), "several") {
		t.Fatal(err)
	}
	if err := r.Resume(first); err != nil {
		t.Fatal(err)
	}
	if h := r.History(); len(h) != 2 || h[1].Text != "one" {
		t.Fatalf("resumed history = %+v", h)
	}
	if _, err := r.Run(context.Background(), "third"); err != nil {
		t.Fatal(err)
	}
	if h := loadSession(t, dir, first); len(h) != 4 {
		t.Errorf("resumed session on disk = %+v", h)
	}
	// Resuming the session it has open reloads it (its own lock does not refuse it).
	if err := r.Resume(first); err != nil || len(r.History()) != 4 {
		t.Fatalf("resume of the current session: %v, %d messages", err, len(r.History()))
	}
	// Another runner (another process) is refused that session, and may fork it.
	r2, _ := newRunner(t, p, tt, func(o *Options) { o.SessionsDir = dir })
	var locked *session.LockedError
	if err := r2.Resume(first); !errors.As(err, &locked) {
		t.Fatalf("second writer: %v, want a *session.LockedError", err)
	}
	if err := r2.Fork(first); err != nil || r2.SessionID() == first || len(r2.History()) != 4 {
		t.Fatalf("fork: %v, session %s, %d messages", err, r2.SessionID(), len(r2.History()))
	}
	r2.Close()
}

func TestSystemPromptParts(t *testing.T) {
	sp := SystemPrompt("/some/dir")
	for _, want := range []string{"Synapse", "Bash", "TodoWrite", "task:explore", "skill:load", "/some/dir", "Working principles"} {
		if !strings.Contains(sp, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	for _, name := range promptParts {
		if _, err := promptFS.ReadFile("prompts/" + name + ".md"); err != nil {
			t.Errorf("prompt part %s: %v", name, err)
		}
	}
}

// The model is told to clean up after itself: scratch files it made do not
// outlive the task.
func TestSystemPromptAsksToRemoveTemporaryFiles(t *testing.T) {
	if sp := SystemPrompt("/w"); !strings.Contains(sp, "Remove the temporary files and directories you created") || !strings.Contains(sp, "before you finish") {
		t.Errorf("system prompt does not ask to remove temporary files:\n%s", sp)
	}
}

// A session that cannot be written (a full disk, a sessions "directory" that
// is a file) costs the persistence, not the conversation: the run finishes,
// the user gets one warning, the in-memory history is whole and the next run
// works.
func TestSessionWriteFailureIsAWarning(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		notDir := filepath.Join(t.TempDir(), "sessions")
		if err := os.WriteFile(notDir, []byte("a file, not a directory"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := newProvider(t, format,
			llmtest.BashTurn("a", "echo one"),
			llmtest.BashTurn("b", "echo two"),
			llmtest.TextTurn("done"),
			llmtest.TextTurn("again"))
		r, rec := newRunner(t, p, newTestTool(nil), func(o *Options) { o.SessionsDir = notDir })
		res, err := r.Run(context.Background(), "go")
		if err != nil {
			t.Fatalf("run failed on a session write error: %v", err)
		}
		if res.Text != "done" || res.StopReason != llm.StopEndTurn {
			t.Errorf("res = %+v", res)
		}
		if h := r.History(); len(h) != 6 || len(danglingCalls(h)) != 0 {
			t.Errorf("in-memory history = %+v", h)
		}
		warns := rec.kinds(Warning)
		if len(warns) != 1 || !strings.Contains(warns[0].Err.Error(), notDir) {
			t.Errorf("warnings = %+v, want one naming %s", warns, notDir)
		}
		if len(rec.kinds(Error)) != 0 {
			t.Errorf("error events: %+v", rec.kinds(Error))
		}
		if res, err := r.Run(context.Background(), "more"); err != nil || res.Text != "again" {
			t.Fatalf("second run: %+v, %v", res, err)
		}
		if h := r.History(); len(h) != 8 {
			t.Errorf("history after the second run has %d messages, want 8", len(h))
		}
	})
}

// Some servers repeat a tool call id within one reply, or send none. Every
// call still runs and gets its own result, under an id unique in its
// message: providers refuse duplicate ids, the renderer tracks calls by id,
// and a resumed session pairs results with calls by id.
func TestDuplicateAndEmptyToolCallIDsAreMadeUnique(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		p := newProvider(t, format,
			llmtest.ToolTurn(
				llmtest.BashCall("dup", "echo one"),
				llmtest.BashCall("dup", "echo two"),
				llmtest.BashCall("dup_2", "echo three"),
				llmtest.BashCall("", "echo four")),
			llmtest.TextTurn("done"))
		r, rec := newRunner(t, p, newTestTool(nil), nil)
		if _, err := r.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
		h := r.History()
		if len(h) != 7 {
			t.Fatalf("history = %+v", h)
		}
		calls := h[1].ToolCalls
		seen := map[string]bool{}
		for i, c := range calls {
			if c.ID == "" || seen[c.ID] {
				t.Errorf("call %d has id %q (ids %+v)", i, c.ID, calls)
			}
			seen[c.ID] = true
			res := h[2+i]
			want := "ran echo " + []string{"one", "two", "three", "four"}[i]
			if res.ToolCallID != c.ID || res.Text != want {
				t.Errorf("result %d = %+v, want %q for call %s", i, res, want, c.ID)
			}
		}
		if got := session.Sanitize(h); len(got) != len(h) {
			t.Errorf("a resume would lose messages: %d of %d kept", len(got), len(h))
		}
		started := map[string]bool{}
		for _, e := range rec.kinds(ToolStart) {
			if started[e.CallID] {
				t.Errorf("two ToolStart events for call id %q", e.CallID)
			}
			started[e.CallID] = true
		}
		if wp, ok := p.(wireProvider); ok {
			req := wp.srv.Requests()[1]
			var sent []string
			for _, tr := range req.LastToolResults() {
				sent = append(sent, tr.ToolCallID)
			}
			if len(sent) != 4 || sent[0] != calls[0].ID || sent[3] != calls[3].ID {
				t.Errorf("results sent for %v, calls were %+v", sent, calls)
			}
		}
	})
}

func TestUniqueCallIDs(t *testing.T) {
	cases := []struct{ in, want []string }{
		{nil, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{""}, []string{"call_1"}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"a", "a", "a"}, []string{"a", "a_2", "a_3"}},
		{[]string{"a", "a", "a_2"}, []string{"a", "a_3", "a_2"}},
		{[]string{"", "", "call_2"}, []string{"call_1", "call_3", "call_2"}},
	}
	for _, c := range cases {
		calls := make([]llm.ToolCall, len(c.in))
		for i, id := range c.in {
			calls[i].ID = id
		}
		uniqueCallIDs(calls)
		var got []string
		for _, x := range calls {
			got = append(got, x.ID)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("uniqueCallIDs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A model that sends tool arguments that are not JSON (small local models
// do) gets an error result telling it so and may try again: the run goes
// on, the history stays encodable (the session keeps it) and the call is
// never run.
func TestMalformedToolArgumentsAreAnErrorResult(t *testing.T) {
	forEachFormat(t, func(t *testing.T, format string) {
		dir := t.TempDir()
		p := newProvider(t, format,
			llmtest.ToolTurn(llmtest.ToolCall{ID: "bad", Name: "Bash", RawInput: `{"command": "echo hi"`}),
			llmtest.BashTurn("good", "echo hi"),
			llmtest.TextTurn("done"))
		tt := newTestTool(nil)
		r, rec := newRunner(t, p, tt, func(o *Options) { o.SessionsDir = dir })
		res, err := r.Run(context.Background(), "go")
		if err != nil {
			t.Fatalf("run failed on malformed arguments: %v", err)
		}
		if res.Text != "done" {
			t.Errorf("text = %q", res.Text)
		}
		msgs := toolMessages(r.History())
		if len(msgs) != 2 || !msgs[0].IsError || !strings.Contains(msgs[0].Text, "not valid JSON") ||
			!strings.Contains(msgs[0].Text, `{"command": "echo hi"`) || msgs[1].Text != "ran echo hi" {
			t.Fatalf("tool results = %+v", msgs)
		}
		if got := tt.events(); len(got) != 2 || got[0] != "start echo hi" {
			t.Errorf("tool calls = %q: the malformed call must not run", got)
		}
		if w := rec.kinds(Warning); len(w) != 0 {
			t.Errorf("warnings = %+v", w)
		}
		if onDisk := loadSession(t, dir, r.SessionID()); len(onDisk) != len(r.History()) {
			t.Errorf("session holds %d messages, memory %d", len(onDisk), len(r.History()))
		}
	})
}

// Parallel sub-agents report usage from their goroutines while the parent's
// run goes on; every report reaches the session file by the end of the run
// (they are written at most once a second during it).
func TestConcurrentRecordUsageIsPersistedByTheRun(t *testing.T) {
	dir := t.TempDir()
	sub := llm.Usage{InputTokens: 100, OutputTokens: 40, CacheReadTokens: 7, CacheCreationTokens: 3}
	const tasks, perTask = 5, 20
	var r *Runner
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
		for i := 0; i < perTask; i++ {
			r.RecordUsage(sub, "sub-model")
		}
		return tool.Result{Output: "task done"}
	})
	var calls []llmtest.ToolCall
	for i := 0; i < tasks; i++ {
		calls = append(calls, taskCall(fmt.Sprintf("t%d", i), "explore", "look"))
	}
	p := newProvider(t, "fake", llmtest.ToolTurn(calls...), llmtest.TextTurn("done"))
	r, _ = newRunner(t, p, tt, func(o *Options) { o.SessionsDir = dir })
	if _, err := r.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if tt.maxInFlight() < 2 {
		t.Logf("tasks did not overlap (max in flight %d)", tt.maxInFlight())
	}
	mem := r.SessionUsage()
	if want := 2 + tasks*perTask; mem.RoundCount != want {
		t.Errorf("rounds in memory = %d, want %d", mem.RoundCount, want)
	}
	if disk := savedUsage(t, dir, r.SessionID()); disk.Totals() != mem.Totals() || disk.RoundCount != mem.RoundCount {
		t.Errorf("on disk %+v, in memory %+v", disk.Totals(), mem.Totals())
	}
}

// savedUsage is session id's usage as its index entry on disk has it.
func savedUsage(t *testing.T, dir, id string) session.Usage {
	t.Helper()
	list, err := session.NewStore(dir, nil, nil).List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.ID == id {
			return e.Usage
		}
	}
	t.Fatalf("session %s is not listed in %s", id, dir)
	return session.Usage{}
}

// An answer cut at the output limit, or a turn that ends with no text at
// all, is not a silent success: the user is told what happened and what to
// do. (A cut in the middle of a tool call is the provider's ErrTruncated.)
func TestCutOrEmptyAnswerIsAWarning(t *testing.T) {
	tests := []struct {
		name string
		turn llmtest.Turn
		want string // in the warning; "" means no warning
	}{
		{"complete answer", llmtest.TextTurn("all done"), ""},
		{"cut at max_tokens", llmtest.Turn{Text: "the first half of", StopReason: llmtest.StopMaxTokens}, "maxTokens"},
		{"no text", llmtest.Turn{Text: ""}, "without an answer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			forEachFormat(t, func(t *testing.T, format string) {
				p := newProvider(t, format, tc.turn)
				r, rec := newRunner(t, p, newTestTool(nil), nil)
				res, err := r.Run(context.Background(), "go")
				if err != nil {
					t.Fatal(err)
				}
				if res.Text != tc.turn.Text {
					t.Errorf("text = %q", res.Text)
				}
				w := rec.kinds(Warning)
				switch {
				case tc.want == "" && len(w) != 0:
					t.Errorf("warnings = %+v", w)
				case tc.want != "" && (len(w) != 1 || !strings.Contains(w[0].Err.Error(), tc.want)):
					t.Errorf("warnings = %+v, want one containing %q", w, tc.want)
				}
			})
		})
	}
}

func TestAttemptedCommandOfAnUnknownTool(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"run_shell", `{"command": "ls -la", "description": "list", "timeout": 5}`, "ls -la"},
		{"read", `{"file_path": "notes.txt"}`, "read notes.txt"},
		{"grep", `{"pattern": "a b", "path": "src", "n": 3, "i": true}`, "grep 'a b' src 3 true"},
		{"str_replace_editor", `{"command": "view", "path": "/x"}`, "str_replace_editor view /x"},
		{"ls", `{}`, "ls"},
		{"ls", `[1]`, "ls"},
		// Claude Code's file tools map to the Synapse command doing the same.
		{"Read", `{"file_path": "a.txt"}`, "read a.txt"},
		{"Read", `{"file_path": "a.txt", "offset": 11, "limit": 5}`, "read a.txt --offset 10 --limit 5"},
		{"Write", `{"file_path": "a.txt", "content": "hi there"}`, "write a.txt 'hi there'"},
		{"Edit", `{"file_path": "a.go", "old_string": "x", "new_string": "y", "replace_all": true}`, "edit a.go x y --all"},
		{"Glob", `{"pattern": "**/*.go"}`, "find . -name '*.go'"},
		{"Glob", `{"pattern": "src/**/*.ts", "path": "web"}`, "find web -path 'web/src/*.ts'"},
		{"Grep", `{"pattern": "func main", "path": "cmd", "-i": true}`, "grep -rni 'func main' cmd"},
		{"Grep", `{"pattern": "TODO", "glob": "*.go", "output_mode": "files_with_matches"}`, "grep -rl --include='*.go' TODO"},
		{"LS", `{"path": "/tmp/x"}`, "ls /tmp/x"},
		{"LS", `{}`, "ls"},
	}
	for _, tt := range tests {
		if got := attempted(llm.ToolCall{Name: tt.name, Input: json.RawMessage(tt.input)}); got != tt.want {
			t.Errorf("%s %s = %q, want %q", tt.name, tt.input, got, tt.want)
		}
	}
}

// A call without a command line (another tool's name, other arguments,
// invalid JSON) still names what the model did on its row.
func TestShownCommandOfACallWithoutOne(t *testing.T) {
	tests := []struct {
		name string
		call llmtest.ToolCall
		want string
	}{
		{"another tool", llmtest.ToolCall{ID: "a", Name: "Read", Input: map[string]any{"file_path": "f.txt"}}, `Read {"file_path":"f.txt"}`},
		{"other arguments", llmtest.ToolCall{ID: "b", Name: "Bash", Input: map[string]any{"cmd": "ls"}}, `Bash {"cmd":"ls"}`},
		{"no arguments", llmtest.ToolCall{ID: "c", Name: "Glob", Input: map[string]any{}}, "Glob"},
		{"invalid JSON", llmtest.ToolCall{ID: "d", Name: "Bash", RawInput: `{"command": "ls`}, "Bash (arguments are not valid JSON)"},
		{"a command", llmtest.BashCall("e", "echo hi"), "echo hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, "fake", llmtest.ToolTurn(tt.call), llmtest.TextTurn("ok"))
			var mu sync.Mutex
			var starts, ends []string
			r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) {
				o.OnEvent = func(e Event) {
					mu.Lock()
					defer mu.Unlock()
					switch e.Kind {
					case ToolStart:
						starts = append(starts, e.Command)
					case ToolEnd:
						ends = append(ends, e.Command)
					}
				}
			})
			if _, err := r.Run(context.Background(), "x"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(starts) != 1 || starts[0] != tt.want || len(ends) != 1 || ends[0] != tt.want {
				t.Errorf("rows show start %q end %q, want %q", starts, ends, tt.want)
			}
		})
	}
}

// Parallel task calls are announced in the order the model made them (a
// stream-json reader rebuilds the assistant message from these), whatever
// order their goroutines happen to start in.
func TestParallelCallsStartInOrder(t *testing.T) {
	var calls []string
	for i := range 8 {
		calls = append(calls, fmt.Sprintf("task:general --prompt p%d", i))
	}
	for round := range 5 {
		p := newProvider(t, "fake", llmtest.BashTurn("c", calls...), llmtest.TextTurn("ok"))
		var mu sync.Mutex
		var starts []string
		r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) {
			o.OnEvent = func(e Event) {
				if e.Kind == ToolStart {
					mu.Lock()
					starts = append(starts, e.Command)
					mu.Unlock()
				}
			}
		})
		if _, err := r.Run(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if !slices.Equal(starts, calls) {
			t.Fatalf("round %d: starts in order %q, want %q", round, starts, calls)
		}
		mu.Unlock()
	}
}
