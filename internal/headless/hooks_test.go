package headless

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/tool"
)

// fakeHost serves c on a pipe and answers each hook_callback request with
// answer(callback_id, input); a nil answer is never sent.
func fakeHost(t *testing.T, out *lines, c *Control, answer func(id string, input map[string]any) map[string]any) (requests chan map[string]any) {
	t.Helper()
	pr, pw := io.Pipe()
	go c.Serve(pr)
	requests = make(chan map[string]any, 16)
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = pw.Close() })
	go func() {
		for {
			var m map[string]any
			select {
			case m = <-out.next:
			case <-done:
				return
			}
			if m["type"] != "control_request" {
				continue
			}
			req, _ := m["request"].(map[string]any)
			requests <- req
			if req["subtype"] != "hook_callback" {
				continue
			}
			id, _ := req["callback_id"].(string)
			input, _ := req["input"].(map[string]any)
			a := answer(id, input)
			if a == nil {
				continue
			}
			b, _ := json.Marshal(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m["request_id"], "response": a}})
			if _, err := fmt.Fprintf(pw, "%s\n", b); err != nil {
				return
			}
		}
	}()
	return requests
}

func hookSet(t *testing.T, c *Control, raw string) *hooks.Set {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	cfg, notes := c.HookConfig(parseHookMatchers(m))
	if len(notes) > 0 {
		t.Logf("notes: %v", notes)
	}
	set := hooks.NewSet(nil)
	set.AddHooks(cfg)
	return set
}

// A PreToolUse callback that blocks refuses the call with its reason (the
// agent makes it the call's result); the host gets the SDK's HookInput.
func TestHookCallbackPreToolUseBlocks(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{CallFor: func(string) string { return "toolu_1" }})
	reqs := fakeHost(t, out, c, func(id string, in map[string]any) map[string]any {
		if id != "hook_0" {
			return map[string]any{}
		}
		return map[string]any{"decision": "block", "reason": "no rm"}
	})
	set := hookSet(t, c, `{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]},{"matcher":"Edit|Write","hookCallbackIds":["hook_9"]}]}`)
	v := set.PreToolUse(context.Background(), "s1", "/work", "rm -rf x")
	if v.Block != "no rm" || len(v.Problems) > 0 {
		t.Fatalf("verdict %+v, want the block with its reason", v)
	}
	req := <-reqs
	in, _ := req["input"].(map[string]any)
	ti, _ := in["tool_input"].(map[string]any)
	if req["tool_use_id"] != "toolu_1" || in["hook_event_name"] != "PreToolUse" || in["tool_name"] != "Bash" ||
		ti["command"] != "rm -rf x" || in["session_id"] != "s1" || in["cwd"] != "/work" {
		t.Errorf("request %v", req)
	}
	if _, ok := in["transcript_path"]; !ok {
		t.Errorf("input without transcript_path: %v", in)
	}
	// deny through hookSpecificOutput blocks as well
	c2out := newLines()
	c2 := NewControl(c2out, errw, Handlers{})
	fakeHost(t, c2out, c2, func(string, map[string]any) map[string]any {
		return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}}
	})
	if v := hookSet(t, c2, `{"PreToolUse":[{"hookCallbackIds":["h"]}]}`).PreToolUse(context.Background(), "", "/", "ls"); v.Block != "not here" {
		t.Errorf("deny: %+v", v)
	}
}

// PostToolUse additionalContext is added for the model; the callback sees
// the call's result.
func TestHookCallbackPostToolUseContext(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{})
	var seen map[string]any
	fakeHost(t, out, c, func(_ string, in map[string]any) map[string]any {
		seen = in
		return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PostToolUse", "additionalContext": "tests are in ./x"}}
	})
	set := hookSet(t, c, `{"PostToolUse":[{"matcher":".*","hookCallbackIds":["h1"]}]}`)
	v := set.PostToolUse(context.Background(), "s1", "/work", "go test", "ok", false)
	if v.AdditionalContext != "tests are in ./x" || v.Block != "" {
		t.Fatalf("verdict %+v", v)
	}
	if tr, _ := seen["tool_response"].(map[string]any); tr["output"] != "ok" {
		t.Errorf("input %v", seen)
	}
}

// A callback the host never answers is a no-op after its timeout, noted
// on stderr; UserPromptSubmit and Stop callbacks are called too.
func TestHookCallbackTimeout(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{})
	fakeHost(t, out, c, func(id string, _ map[string]any) map[string]any {
		if id == "slow" {
			return nil
		}
		return map[string]any{"decision": "block", "reason": "say please"}
	})
	set := hookSet(t, c, `{"PreToolUse":[{"hookCallbackIds":["slow"],"timeout":0.2}],"UserPromptSubmit":[{"hookCallbackIds":["p"]}],"Stop":[{"hookCallbackIds":["s"]}]}`)
	v := set.PreToolUse(context.Background(), "", "/", "ls")
	if v.Block != "" || len(v.Problems) != 1 || !strings.Contains(v.Problems[0].Error(), "did not answer") {
		t.Fatalf("verdict %+v, want a problem and no decision", v)
	}
	if !strings.Contains(errw.String(), "PreToolUse hook callback slow did not answer in time") {
		t.Errorf("stderr %q", errw.String())
	}
	if v := set.UserPromptSubmit(context.Background(), "", "/", "hi"); v.Block != "say please" {
		t.Errorf("UserPromptSubmit: %+v", v)
	}
	outs := set.Stop(context.Background(), hooks.StopInput{Cwd: "/", CanContinue: true})
	if len(outs) != 1 || outs[0].Continue != "say please" {
		t.Errorf("Stop: %+v", outs)
	}
}

// The SDK's matchers are tool-name patterns; Synapse's one tool is Bash.
func TestHookConfigMatchers(t *testing.T) {
	c := NewControl(newLines(), &syncBuf{}, Handlers{})
	cfg, notes := c.HookConfig(map[string][]HookMatcher{
		"PreToolUse":   {{Matcher: "Bash|Read", HookCallbackIDs: []string{"a"}}, {Matcher: "Edit", HookCallbackIDs: []string{"b"}}, {Matcher: "^B.*", HookCallbackIDs: []string{"c"}}},
		"SessionStart": {{HookCallbackIDs: []string{"d"}}},
	})
	if len(cfg["PreToolUse"]) != 2 || len(cfg) != 1 || len(notes) != 2 {
		t.Errorf("cfg %+v notes %q", cfg, notes)
	}
}

// A PreToolUse callback's permissionDecision "allow" answers the ask
// mode's question about that call without asking the host; a sandbox
// grant is still asked (the host here never answers: refused).
func TestHookCallbackAllowSkipsTheQuestion(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{CallFor: func(string) string { return "toolu_7" }})
	reqs := fakeHost(t, out, c, func(string, map[string]any) map[string]any {
		return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "allow"}}
	})
	set := hookSet(t, c, `{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["ok"]}]}`)
	if v := set.PreToolUse(context.Background(), "", "/", "touch a"); v.Block != "" {
		t.Fatalf("verdict %+v", v)
	}
	<-reqs
	if a, in := c.AskRewrite(context.Background(), tool.Question{Kind: tool.AskRun, Command: "touch a"}); a != tool.AnswerOnce || in != nil {
		t.Errorf("ask-mode question: %v %v, want once without asking", a, in)
	}
	select {
	case r := <-reqs:
		t.Errorf("the host was asked: %v", r)
	default:
	}
	// once only: the next question about the call goes to the host
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if a, _ := c.AskRewrite(ctx, tool.Question{Kind: tool.AskRun, Command: "touch a"}); a != tool.AnswerDeny {
		t.Errorf("second question: %v", a)
	}
	if r := <-reqs; r["subtype"] != "can_use_tool" {
		t.Errorf("request %v", r)
	}
}

// A PreToolUse callback's "ask" and updatedInput reach the verdict (the
// agent hands them to the gate); the question a hook forced goes to the
// host with the hook's reason, even after the hook allowed the call.
func TestHookCallbackAskAndUpdatedInput(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{CallFor: func(string) string { return "toolu_8" }})
	reqs := fakeHost(t, out, c, func(id string, _ map[string]any) map[string]any {
		if id == "rewrite" {
			return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "allow",
				"updatedInput": map[string]any{"command": "touch b"}}}
		}
		return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "check it"}}
	})
	set := hookSet(t, c, `{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["rewrite","ask"]}]}`)
	v := set.PreToolUse(context.Background(), "", "/", "touch a")
	if v.Block != "" || v.Ask != "check it" || v.UpdatedCommand != "touch b" {
		t.Fatalf("verdict %+v", v)
	}
	<-reqs
	<-reqs
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if a, _ := c.AskRewrite(ctx, tool.Question{Kind: tool.AskRun, Command: "touch b", Original: "touch a", Hook: "check it"}); a != tool.AnswerDeny {
		t.Errorf("forced question answered %v without the host", a)
	}
	r := <-reqs
	if r["subtype"] != "can_use_tool" || !strings.Contains(fmt.Sprint(r["decision_reason"]), "PreToolUse hook asks for approval: check it") || r["tool_use_id"] != "toolu_8" {
		t.Errorf("request %v", r)
	}
}
