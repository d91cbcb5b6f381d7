package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/textutil"
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
	preContext := ""
	if cmd != "" {
		v := r.hooks.PreToolUse(ctx, sid, r.cwd, cmd)
		r.reportProblems(v)
		if v.Halt {
			r.haltByHook(hooks.EventPreToolUse, v.HaltReason)
			v.Block = "the user's hook stopped the turn: " + v.HaltReason
		}
		if v.Block != "" {
			msg := blockedPrefix + v.Block
			return tool.Result{Output: msg, IsError: true, Message: "blocked by a PreToolUse hook",
				Facts: tool.Facts{FailureCategory: tool.FailureExecution, BlockedByHook: true}}
		}
		preContext = v.AdditionalContext
		ctx = tool.WithPreDecision(ctx, tool.PreDecision{Command: v.UpdatedCommand, Ask: v.Ask})
	}
	res := r.callTool(ctx, c)
	if preContext != "" {
		res.Output += "\n[PreToolUse hook] " + preContext
	}
	if cmd != "" && ctx.Err() == nil {
		v := r.hooks.PostToolUse(ctx, sid, r.cwd, cmd, res.Output, res.IsError)
		r.reportProblems(v)
		if v.Halt {
			r.haltByHook(hooks.EventPostToolUse, v.HaltReason)
		}
		if v.Block != "" {
			res.Output += "\n[PostToolUse hook] " + v.Block
		}
		if v.AdditionalContext != "" {
			res.Output += "\n[PostToolUse hook] " + v.AdditionalContext
		}
	}
	return res
}

// maxStopContinuations bounds how often the user's Stop hooks can make one
// turn go on, so that a hook that always objects cannot loop forever.
const maxStopContinuations = 3

// StopHookNotePrefix starts the user message that tells the model why it
// goes on after a Stop hook objected: part of the turn, not a prompt.
const StopHookNotePrefix = "[Stop hook] "

// stopHookNote is the user message that tells the model why it goes on.
func stopHookNote(reason string) string {
	return StopHookNotePrefix + "The user's Stop hook asked you to continue instead of stopping:\n" + reason
}

// runStopHooks runs the stop hooks after a turn that ended with a final
// answer; their outputs go to the renderer and the Result, never into the
// history. continued is how often the user's Stop hooks already made this
// turn go on; a non-empty result is their reason to go on once more.
func (r *Runner) runStopHooks(ctx context.Context, res *Result, continued int) string {
	if r.hooks == nil || ctx.Err() != nil {
		return ""
	}
	// A stop hook's sub-agent (skill auto-enhance) reports like a tool call's.
	outs := r.hooks.Stop(WithCallTrace(ctx, r.callTrace()), hooks.StopInput{
		SessionID:      r.SessionID(),
		Cwd:            r.cwd,
		Conversation:   r.History(),
		FinalAnswer:    res.Text,
		Progress:       func(s string) { r.Emit(Event{Kind: HookProgress, Text: s}) },
		StopHookActive: continued > 0,
		CanContinue:    continued < maxStopContinuations,
	})
	for _, o := range outs {
		if o.Continue != "" {
			if o.Text != "" {
				r.Emit(Event{Kind: HookProgress, Text: o.Text})
			}
			r.Emit(Event{Kind: HookProgress, Text: "Stop hook: the agent continues: " + textutil.OneLine(o.Continue, 200)})
			return o.Continue
		}
	}
	if len(outs) == 0 {
		return ""
	}
	res.Hooks = outs
	r.Emit(Event{Kind: HookOutput, Hooks: outs, Text: strings.TrimRight(hooks.Format(outs), "\n")})
	return ""
}

// haltByHook records a tool hook's {"continue": false}: the turn ends after
// the current step.
func (r *Runner) haltByHook(event, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hookHalt == "" {
		r.hookHalt = fmt.Sprintf("a %s hook stopped the turn: %s", event, reason)
	}
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
