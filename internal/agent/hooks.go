package agent

import (
	"context"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Hooks are called at the loop's hook points; app injects a *hooks.Set.
// Sub-agents are built without, so they never run stop hooks.
type Hooks interface {
	UserPromptSubmit(ctx context.Context, sessionID, cwd, prompt string) hooks.Verdict
	PreToolUse(ctx context.Context, sessionID, cwd, command string) hooks.Verdict
	PostToolUse(ctx context.Context, sessionID, cwd, command, output string, isError bool) hooks.Verdict
	Stop(ctx context.Context, in hooks.StopInput) []hooks.Output
}

// blockedPrefix starts the result of a call a PreToolUse hook refused.
const blockedPrefix = "Blocked by the user's PreToolUse hook: "

// reportProblems shows hooks that failed without deciding anything.
func (r *Runner) reportProblems(v hooks.Verdict) {
	for _, p := range v.Problems {
		r.Emit(Event{Kind: Warning, Err: p})
	}
}

// hookedCall runs one call between the PreToolUse and PostToolUse hooks.
func (r *Runner) hookedCall(ctx context.Context, c llm.ToolCall) tool.Result {
	if r.hooks == nil {
		return r.callTool(ctx, c)
	}
	cmd := commandOf(c.Input)
	sid := r.SessionID()
	if cmd != "" {
		v := r.hooks.PreToolUse(ctx, sid, r.cwd, cmd)
		r.reportProblems(v)
		if v.Block != "" {
			msg := blockedPrefix + v.Block
			return tool.Result{Output: msg, IsError: true, Message: "blocked by a PreToolUse hook",
				Facts: tool.Facts{FailureCategory: tool.FailureExecution, BlockedByHook: true}}
		}
	}
	res := r.callTool(ctx, c)
	if cmd != "" && ctx.Err() == nil {
		v := r.hooks.PostToolUse(ctx, sid, r.cwd, cmd, res.Output, res.IsError)
		r.reportProblems(v)
		if v.Block != "" {
			res.Output += "\n[PostToolUse hook] " + v.Block
		}
	}
	return res
}

// runStopHooks runs the stop hooks after a turn that ended with a final
// answer; their outputs go to the renderer and the Result, never into the
// history.
func (r *Runner) runStopHooks(ctx context.Context, res *Result) {
	if r.hooks == nil || ctx.Err() != nil {
		return
	}
	// A stop hook's sub-agent (skill auto-enhance) reports like a tool call's.
	outs := r.hooks.Stop(WithCallTrace(ctx, r.callTrace()), hooks.StopInput{
		SessionID:    r.SessionID(),
		Cwd:          r.cwd,
		Conversation: r.History(),
		FinalAnswer:  res.Text,
		Progress:     func(s string) { r.Emit(Event{Kind: HookProgress, Text: s}) },
	})
	if len(outs) == 0 {
		return
	}
	res.Hooks = outs
	r.Emit(Event{Kind: HookOutput, Hooks: outs, Text: strings.TrimRight(hooks.Format(outs), "\n")})
}

// denied reports whether the user refused a permission for one of results.
func denied(results []tool.Result) bool {
	for _, res := range results {
		if slices.Contains(res.Facts.Approval, tool.Deny.String()) {
			return true
		}
	}
	return false
}
