package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// wireFormats are the provider set every scenario runs against.
var wireFormats = []string{"fake"}

// newProvider returns a provider answering with turns in order.
func newProvider(t *testing.T, format string, turns ...llmtest.Turn) llm.Provider {
	t.Helper()
	switch format {
	case "fake":
		return &fakeProvider{turns: turns}
	}
	return newWireProvider(t, format, turns...)
}

// fakeProvider answers from a script in-process (until the real adapters
// run against llmtest, and for tests that need no HTTP).
type fakeProvider struct {
	mu       sync.Mutex
	turns    []llmtest.Turn
	requests []llm.Request
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Stream(ctx context.Context, req llm.Request, onEvent func(llm.Event)) (llm.Response, error) {
	p.mu.Lock()
	req.Messages = append([]llm.Message(nil), req.Messages...)
	p.requests = append(p.requests, req)
	if len(p.turns) == 0 {
		p.mu.Unlock()
		return llm.Response{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: "fake", Message: "no scripted reply left"}
	}
	turn := p.turns[0]
	p.turns = p.turns[1:]
	p.mu.Unlock()
	if turn.Delay > 0 {
		select {
		case <-time.After(turn.Delay):
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	if turn.Status >= 400 {
		return llm.Response{}, &llm.Error{Kind: llm.ErrStatus, Provider: "fake", StatusCode: turn.Status, Message: turn.Error.Message}
	}
	msg := llm.Message{Role: llm.RoleAssistant, Text: turn.Text}
	if turn.Text != "" && onEvent != nil {
		onEvent(llm.Event{Type: llm.EventTextDelta, Text: turn.Text})
	}
	for i, c := range turn.ToolCalls {
		in := c.RawInput
		if in == "" {
			b, _ := json.Marshal(c.Input)
			in = string(b)
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		tc := llm.ToolCall{ID: id, Name: c.Name, Input: json.RawMessage(in)}
		if !json.Valid(tc.Input) { // as the adapters do (llm.ToolCall)
			tc.Input, tc.InvalidInput = json.RawMessage("{}"), in
		}
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	stop := llm.StopEndTurn
	switch {
	case turn.StopReason == llmtest.StopMaxTokens:
		stop = llm.StopMaxTokens
	case len(msg.ToolCalls) > 0:
		stop = llm.StopToolUse
	}
	u := llm.Usage{InputTokens: 10, OutputTokens: 5}
	return llm.Response{Message: msg, Usage: u, StopReason: stop, Model: req.Model}, nil
}

// testTool is a scriptable stand-in for the Bash tool: the agent loop's
// scheduling is what is under test, so each command's behaviour is chosen by
// the test through exec.
type testTool struct {
	todos *todo.Store
	exec  func(ctx context.Context, command string) tool.Result

	mu       sync.Mutex
	inFlight int
	maxIn    int
	log      []string // "start <cmd>" / "end <cmd>"
	ctxErrs  []error  // ctx.Err() seen by each call when it returned
	cond     *sync.Cond
}

func newTestTool(exec func(ctx context.Context, command string) tool.Result) *testTool {
	tt := &testTool{exec: exec}
	tt.cond = sync.NewCond(&tt.mu)
	return tt
}

func (tt *testTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Bash", Description: "run a command",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"restart":{"type":"boolean"}},"required":["command"]}`)}
}

func (tt *testTool) Call(ctx context.Context, input json.RawMessage) tool.Result {
	var in tool.Input
	if err := json.Unmarshal(input, &in); err != nil {
		return tool.Result{Output: "bad input", IsError: true, Facts: tool.Facts{FailureCategory: tool.FailureInvalidUsage}}
	}
	tt.mu.Lock()
	tt.inFlight++
	tt.maxIn = max(tt.maxIn, tt.inFlight)
	tt.log = append(tt.log, "start "+in.Command)
	tt.cond.Broadcast()
	tt.mu.Unlock()

	var res tool.Result
	switch {
	case tt.exec != nil:
		res = tt.exec(ctx, in.Command)
	case strings.HasPrefix(in.Command, "TodoWrite "):
		var items []todo.Item
		if err := json.Unmarshal([]byte(strings.TrimPrefix(in.Command, "TodoWrite ")), &items); err != nil {
			res = tool.Result{Output: err.Error(), IsError: true, Facts: tool.Facts{FailureCategory: tool.FailureInvalidUsage}}
		} else {
			tt.todos.Set(items)
			res = tool.Result{Output: "todos updated"}
		}
	default:
		res = tool.Result{Output: "ran " + in.Command}
	}

	tt.mu.Lock()
	tt.inFlight--
	tt.log = append(tt.log, "end "+in.Command)
	tt.ctxErrs = append(tt.ctxErrs, ctx.Err())
	tt.cond.Broadcast()
	tt.mu.Unlock()
	return res
}

// waitInFlight blocks until at least n calls run at once, or the deadlock
// guard fires (which the caller turns into a failing result).
func (tt *testTool) waitInFlight(ctx context.Context, n int) bool {
	guard := time.AfterFunc(10*time.Second, func() { tt.mu.Lock(); tt.cond.Broadcast(); tt.mu.Unlock() })
	defer guard.Stop()
	deadline := time.Now().Add(10 * time.Second)
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for tt.maxIn < n {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		tt.cond.Wait()
	}
	return true
}

func (tt *testTool) maxInFlight() int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.maxIn
}

func (tt *testTool) events() []string {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return append([]string(nil), tt.log...)
}

// recorder collects events (OnEvent is serialised, the mutex guards reads).
type recorder struct {
	mu     sync.Mutex
	events []Event
	hook   func(Event)
}

func (r *recorder) on(e Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(e)
	}
}

func (r *recorder) kinds(k EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func taskCall(id, typ, prompt string) llmtest.ToolCall {
	return llmtest.BashCall(id, fmt.Sprintf("task:%s --prompt %q --description %q", typ, prompt, prompt))
}

// toolMessages returns the tool messages of history, in order.
func toolMessages(h []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range h {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// danglingCalls lists tool call ids in h that have no result.
func danglingCalls(h []llm.Message) []string {
	results := map[string]bool{}
	for _, m := range h {
		if m.Role == llm.RoleTool {
			results[m.ToolCallID] = true
		}
	}
	var out []string
	for _, m := range h {
		for _, c := range m.ToolCalls {
			if !results[c.ID] {
				out = append(out, c.ID)
			}
		}
	}
	return out
}
