package agent

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// stopLog records which stop hooks ran and what they saw.
type stopLog struct {
	mu   sync.Mutex
	ran  []string
	seen []hooks.StopInput
}

func (l *stopLog) hook(name, out string) hooks.StopFunc {
	return func(ctx context.Context, in hooks.StopInput) (string, error) {
		l.mu.Lock()
		l.ran = append(l.ran, name)
		l.seen = append(l.seen, in)
		l.mu.Unlock()
		in.Progress(name + " working")
		return out, nil
	}
}

func (l *stopLog) names() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.ran...)
}

func TestStopHooksRunAfterAFinalAnswer(t *testing.T) {
	log := &stopLog{}
	set := hooks.NewSet(nil)
	set.AddStop("first", log.hook("first", "first says hi"))
	set.AddStop("quiet", log.hook("quiet", ""))
	set.AddStop("panics", func(context.Context, hooks.StopInput) (string, error) { panic("boom") })
	set.AddStop("fails", func(context.Context, hooks.StopInput) (string, error) { return "", errors.New("broken") })
	set.AddStop("last", log.hook("last", "last says hi"))

	p := newProvider(t, "fake", llmtest.BashTurn("a", "echo hi"), llmtest.TextTurn("all done"))
	dir := t.TempDir()
	r, rec := newRunner(t, p, newTestTool(nil), func(o *Options) { o.Hooks = set; o.SessionsDir = dir })
	res, err := r.Run(context.Background(), "do it")
	if err != nil {
		t.Fatal(err)
	}
	// Reverse order of registration; a panicking or failing hook does not
	// stop the others.
	if got := strings.Join(log.names(), ","); got != "last,quiet,first" {
		t.Errorf("ran %s, want last,quiet,first", got)
	}
	var names []string
	for _, o := range res.Hooks {
		names = append(names, o.Hook)
	}
	if got := strings.Join(names, ","); got != "last,fails,panics,first" {
		t.Errorf("outputs from %s (quiet hooks are left out)", got)
	}
	if !strings.Contains(res.Hooks[2].Error, "panicked: boom") || res.Hooks[1].Error != "broken" {
		t.Errorf("errors: %+v", res.Hooks)
	}
	in := log.seen[0]
	if in.SessionID == "" || in.SessionID != r.SessionID() || in.Cwd != r.Cwd() || in.FinalAnswer != "all done" || len(in.Conversation) != 4 {
		t.Errorf("stop input: id %q cwd %q answer %q, %d messages", in.SessionID, in.Cwd, in.FinalAnswer, len(in.Conversation))
	}
	if ev := rec.kinds(HookOutput); len(ev) != 1 || !strings.Contains(ev[0].Text, "last says hi") || len(ev[0].Hooks) != 4 {
		t.Errorf("hook output events: %+v", ev)
	}
	if ev := rec.kinds(HookProgress); len(ev) != 3 || ev[0].Text != "last working" {
		t.Errorf("progress events: %+v", ev)
	}
	// Never in the history, in memory or on disk.
	for _, h := range [][]llm.Message{r.History(), loadSession(t, dir, r.SessionID())} {
		for _, m := range h {
			if strings.Contains(m.Text, "says hi") || strings.Contains(m.Text, "broken") {
				t.Errorf("hook output in the history: %+v", m)
			}
		}
	}
}

func TestStopHooksDoNotRunWhenTheTurnDidNotEndNormally(t *testing.T) {
	usageFail := func(context.Context, string) tool.Result {
		return tool.Result{Output: "no", IsError: true, Facts: tool.Facts{FailureCategory: tool.FailureCommandNotFound}}
	}
	deny := func(context.Context, string) tool.Result {
		return tool.Result{Output: "blocked", IsError: true, Facts: tool.Facts{Approval: []string{"deny"}}}
	}
	tests := []struct {
		name  string
		turns []llmtest.Turn
		exec  func(context.Context, string) tool.Result
		mod   func(*Options)
		ctx   func() context.Context
	}{
		{name: "iteration limit", turns: []llmtest.Turn{llmtest.BashTurn("a", "x"), llmtest.BashTurn("b", "x")},
			mod: func(o *Options) { o.MaxTurns = 2 }},
		{name: "failure limit", turns: []llmtest.Turn{llmtest.BashTurn("a", "x"), llmtest.BashTurn("b", "x"), llmtest.TextTurn("unreached")},
			exec: usageFail, mod: func(o *Options) { o.MaxConsecutiveFailures = 2 }},
		{name: "denied permission", turns: []llmtest.Turn{llmtest.BashTurn("a", "touch /opt/x"), llmtest.TextTurn("could not")}, exec: deny},
		{name: "provider error", turns: []llmtest.Turn{llmtest.ErrorTurn(500, "boom")}},
		{name: "cancel", turns: []llmtest.Turn{llmtest.TextTurn("hi")}, ctx: func() context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &stopLog{}
			set := hooks.NewSet(nil)
			set.AddStop("h", log.hook("h", "out"))
			p := newProvider(t, "fake", tt.turns...)
			r, rec := newRunner(t, p, newTestTool(tt.exec), func(o *Options) {
				o.Hooks = set
				if tt.mod != nil {
					tt.mod(o)
				}
			})
			ctx := context.Background()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			res, _ := r.Run(ctx, "go")
			if len(log.names()) != 0 || len(res.Hooks) != 0 || len(rec.kinds(HookOutput)) != 0 {
				t.Errorf("stop hooks ran: %v / %+v", log.names(), res.Hooks)
			}
		})
	}
}

// userHooks builds a Set with the user's command hooks from settings JSON.
func userHooks(t *testing.T, settings string) *hooks.Set {
	t.Helper()
	cfg, warns := hooks.ParseConfig([]byte(settings))
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return hooks.NewSet(&hooks.Runner{Config: cfg, Env: os.Environ()})
}

func TestPreToolUseHookBlocksACall(t *testing.T) {
	testutil.RequireTool(t, "bash")
	seen := filepath.Join(t.TempDir(), "stdin.json")
	set := userHooks(t, `{"PreToolUse": [
		{"matcher": "rm", "hooks": [{"type": "command", "command": "cat > `+seen+`; echo 'no deleting here' >&2; exit 2"}]},
		{"matcher": "git", "hooks": [{"type": "command", "command": "echo 'git hook broke' >&2; exit 1"}]}]}`)
	tt := newTestTool(nil)
	p := newProvider(t, "fake", llmtest.BashTurn("a", "ls && rm -rf build", "git status"), llmtest.TextTurn("ok"))
	r, rec := newRunner(t, p, tt, func(o *Options) { o.Hooks = set })
	if _, err := r.Run(context.Background(), "clean"); err != nil {
		t.Fatal(err)
	}
	msgs := toolMessages(r.History())
	if len(msgs) != 2 || !strings.Contains(msgs[0].Text, blockedPrefix+"no deleting here") || !msgs[0].IsError {
		t.Fatalf("blocked call result: %+v", msgs)
	}
	if log := strings.Join(tt.events(), "|"); strings.Contains(log, "rm -rf") || !strings.Contains(log, "git status") {
		t.Errorf("tool calls: %s (the blocked one must not run, the other must)", log)
	}
	data, err := os.ReadFile(seen)
	if err != nil || !strings.Contains(string(data), `"hook_event_name":"PreToolUse"`) || !strings.Contains(string(data), `"command":"ls \u0026\u0026 rm -rf build"`) {
		t.Errorf("hook stdin: %s %v", data, err)
	}
	warns := rec.kinds(Warning)
	if len(warns) != 1 || !strings.Contains(warns[0].Err.Error(), "exited with status 1: git hook broke (ignored)") {
		t.Errorf("a failing hook is reported and ignored: %+v", warns)
	}
}

func TestUserPromptSubmitHookCanRefuse(t *testing.T) {
	testutil.RequireTool(t, "bash")
	set := userHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "grep -q secret && { echo 'no secrets' >&2; exit 2; }; exit 0"}]}]}`)
	p := newProvider(t, "fake", llmtest.TextTurn("fine"))
	r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.Hooks = set })
	res, err := r.Run(context.Background(), "the secret is 42")
	if err == nil || !strings.Contains(err.Error(), "no secrets") || res.StopReason != StopBlocked || len(r.History()) != 0 {
		t.Fatalf("res %+v err %v history %d", res, err, len(r.History()))
	}
	if _, err := r.Run(context.Background(), "hello"); err != nil {
		t.Fatalf("an allowed prompt: %v", err)
	}
}

func TestPostToolUseHookTalksToTheModel(t *testing.T) {
	testutil.RequireTool(t, "bash")
	set := userHooks(t, `{"PostToolUse": [{"matcher": "go", "hooks": [{"type": "command", "command": "grep -q '\"is_error\":true' && { echo 'run gofmt first' >&2; exit 2; }; exit 0"}]}]}`)
	tt := newTestTool(func(_ context.Context, cmd string) tool.Result {
		return tool.Result{Output: "FAIL", IsError: cmd == "go test ./..."}
	})
	p := newProvider(t, "fake", llmtest.BashTurn("a", "go test ./...", "go vet"), llmtest.TextTurn("ok"))
	r, _ := newRunner(t, p, tt, func(o *Options) { o.Hooks = set })
	if _, err := r.Run(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	msgs := toolMessages(r.History())
	if !strings.Contains(msgs[0].Text, "[PostToolUse hook] run gofmt first") || strings.Contains(msgs[1].Text, "PostToolUse") {
		t.Errorf("results: %q / %q", msgs[0].Text, msgs[1].Text)
	}
}

func TestSystemPromptMentionsSkillEnhance(t *testing.T) {
	p := SystemPrompt(t.TempDir())
	i := strings.Index(p, "# Skills")
	if i < 0 || !strings.Contains(p[i:], "task:skill:enhance") {
		t.Error("the skills part of the system prompt does not mention task:skill:enhance")
	}
}

func TestUserPromptSubmitHookAddsContextForTheModel(t *testing.T) {
	testutil.RequireTool(t, "bash")
	set := userHooks(t, `{"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'branch: main'"}]},
		{"hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"additionalContext\": \"ticket ABC-1\"}}'"}]}]}`)
	p := newProvider(t, "fake", llmtest.TextTurn("ok"))
	r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.Hooks = set })
	if _, err := r.Run(context.Background(), "fix it"); err != nil {
		t.Fatal(err)
	}
	sent := p.(*fakeProvider).requests[0].Messages[0].Text
	if TypedPrompt(sent) != "fix it" || !strings.Contains(sent, "fix it\n\n<user-prompt-submit-hook>\n") || !strings.Contains(sent, "branch: main\nticket ABC-1\n</user-prompt-submit-hook>") {
		t.Errorf("the model got %q", sent)
	}
	if got := TypedPrompt(r.History()[0].Text); got != "fix it" {
		t.Errorf("the typed prompt reads %q", got)
	}
	if got := TypedPrompt(WrapSkillSearch(AddHookContext("a\n\nb", "ctx"))); got != "a\n\nb" {
		t.Errorf("with the skill search too: %q", got)
	}
}

func TestStopHookExit2MakesTheAgentGoOn(t *testing.T) {
	testutil.RequireTool(t, "bash")
	dir := t.TempDir()
	// Objects twice, then is satisfied.
	set := userHooks(t, `{"Stop": [{"hooks": [{"type": "command", "command": "cat >> `+dir+`/in.log; echo >> `+dir+`/in.log; n=$(wc -l < `+dir+`/in.log); if [ $n -le 2 ]; then echo 'run the tests first' >&2; exit 2; fi; echo 'all good'"}]}]}`)
	learned := 0
	set.AddStop("learn", func(context.Context, hooks.StopInput) (string, error) { learned++; return "", nil })
	p := newProvider(t, "fake", llmtest.TextTurn("done 1"), llmtest.TextTurn("done 2"), llmtest.TextTurn("done 3"))
	r, rec := newRunner(t, p, newTestTool(nil), func(o *Options) { o.Hooks = set })
	res, err := r.Run(context.Background(), "work")
	if err != nil {
		t.Fatal(err)
	}
	reqs := p.(*fakeProvider).requests
	if len(reqs) != 3 || res.Text != "done 3" || learned != 1 {
		t.Fatalf("requests %d, answer %q, other stop hooks ran %d times", len(reqs), res.Text, learned)
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != llm.RoleUser || !strings.Contains(last.Text, "run the tests first") {
		t.Errorf("the model was not told why it goes on: %+v", last)
	}
	if len(res.Hooks) != 1 || res.Hooks[0].Text != "all good" {
		t.Errorf("hooks block: %+v", res.Hooks)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "in.log"))
	if got := strings.Count(string(data), `"stop_hook_active":true`); got != 2 || !strings.HasPrefix(string(data), `{`) || !strings.Contains(strings.SplitN(string(data), "\n", 2)[0], `"stop_hook_active":false`) {
		t.Errorf("stdin: %s", data)
	}
	if n := len(rec.kinds(HookOutput)); n != 1 {
		t.Errorf("%d hook blocks shown, want 1 (at the real end)", n)
	}
}

func TestStopHookCannotLoopForever(t *testing.T) {
	testutil.RequireTool(t, "bash")
	set := userHooks(t, `{"Stop": [{"hooks": [{"type": "command", "command": "echo never done >&2; exit 2"}]}]}`)
	turns := make([]llmtest.Turn, 10)
	for i := range turns {
		turns[i] = llmtest.TextTurn("done")
	}
	p := newProvider(t, "fake", turns...)
	r, _ := newRunner(t, p, newTestTool(nil), func(o *Options) { o.Hooks = set })
	res, err := r.Run(context.Background(), "work")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(p.(*fakeProvider).requests); n != 1+maxStopContinuations {
		t.Errorf("%d requests, want %d", n, 1+maxStopContinuations)
	}
	if len(res.Hooks) != 1 || !strings.Contains(res.Hooks[0].Error, "as often as one turn allows") {
		t.Errorf("hooks block: %+v", res.Hooks)
	}
}

func TestToolHookCanStopTheTurn(t *testing.T) {
	testutil.RequireTool(t, "bash")
	set := userHooks(t, `{"PreToolUse": [{"matcher": "deploy", "hooks": [{"type": "command", "command": "echo '{\"continue\": false, \"stopReason\": \"deploys are frozen\"}'"}]}]}`)
	tt := newTestTool(nil)
	p := newProvider(t, "fake", llmtest.BashTurn("a", "deploy prod", "ls"), llmtest.TextTurn("never"))
	r, _ := newRunner(t, p, tt, func(o *Options) { o.Hooks = set })
	res, err := r.Run(context.Background(), "ship")
	if err == nil || !strings.Contains(err.Error(), "deploys are frozen") || res.StopReason != StopBlocked {
		t.Fatalf("res %+v err %v", res, err)
	}
	if n := len(p.(*fakeProvider).requests); n != 1 {
		t.Errorf("%d model requests after the hook stopped the turn", n)
	}
	if log := strings.Join(tt.events(), "|"); strings.Contains(log, "deploy") {
		t.Errorf("the stopped call ran: %s", log)
	}
	if msgs := toolMessages(r.History()); len(msgs) != 2 || !strings.Contains(msgs[0].Text, "deploys are frozen") {
		t.Errorf("the step is kept whole: %+v", msgs)
	}
}

// Hooks registered in code (the Agent SDK host's callbacks) decide like
// command hooks: a block refuses the call, additionalContext of a tool
// hook reaches the model in the call's result.
func TestCallbackHooksReachTheModel(t *testing.T) {
	answer := func(out string) func(context.Context, hooks.Payload) (json.RawMessage, error) {
		return func(_ context.Context, p hooks.Payload) (json.RawMessage, error) {
			if p.Event == hooks.EventPreToolUse && p.ToolInput.Command == "rm x" {
				return json.RawMessage(`{"decision":"block","reason":"no rm"}`), nil
			}
			return json.RawMessage(out), nil
		}
	}
	set := hooks.NewSet(nil)
	set.AddHooks(hooks.Config{
		hooks.EventPreToolUse:  {{Hooks: []hooks.Command{{Type: "callback", Command: "cb", Call: answer(`{}`)}}}},
		hooks.EventPostToolUse: {{Hooks: []hooks.Command{{Type: "callback", Command: "cb", Call: answer(`{"hookSpecificOutput":{"additionalContext":"tests live in ./x"}}`)}}}},
	})
	var ran []string
	tt := newTestTool(func(_ context.Context, cmd string) tool.Result {
		ran = append(ran, cmd)
		return tool.Result{Output: "ok"}
	})
	p := newProvider(t, "fake", llmtest.BashTurn("a", "rm x", "ls"), llmtest.TextTurn("done"))
	r, _ := newRunner(t, p, tt, func(o *Options) { o.Hooks = set })
	if _, err := r.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	msgs := toolMessages(r.History())
	if len(ran) != 1 || ran[0] != "ls" {
		t.Errorf("ran %q, want only ls", ran)
	}
	if !strings.Contains(msgs[0].Text, "no rm") || !strings.Contains(msgs[1].Text, "[PostToolUse hook] tests live in ./x") {
		t.Errorf("results: %q / %q", msgs[0].Text, msgs[1].Text)
	}
}
