package tool

import (
	"context"
	"strings"
)

// PreDecision is what the PreToolUse hooks decided about one call beyond
// allowing or refusing it: the agent puts it in the call's context
// (WithPreDecision), the Bash tool and the gate read it.
type PreDecision struct {
	// Command, when set, runs instead of the model's command: the first
	// change of the call's command, as the host's canUseTool may make
	// (Rewrite); it counts towards MaxRewrites.
	Command string
	// Ask, when set, is the hook's reason to put the call to the user even
	// where the permission mode would not ask.
	Ask string
}

type preDecisionKey struct{}

// WithPreDecision returns ctx carrying d for the call it runs.
func WithPreDecision(ctx context.Context, d PreDecision) context.Context {
	if d == (PreDecision{}) {
		return ctx
	}
	return context.WithValue(ctx, preDecisionKey{}, d)
}

// preDecision is ctx's PreDecision (zero: none).
func preDecision(ctx context.Context) PreDecision {
	d, _ := ctx.Value(preDecisionKey{}).(PreDecision)
	return d
}

// hookChanged is the command a PreToolUse hook put in place of cmd; ""
// when it changed nothing.
func hookChanged(ctx context.Context, cmd string) string {
	c := preDecision(ctx).Command
	if strings.TrimSpace(c) == "" || strings.TrimSpace(c) == strings.TrimSpace(cmd) {
		return ""
	}
	return c
}

// HookChangeNote starts the result of a call whose command a PreToolUse
// hook changed.
func HookChangeNote(cmd string) string {
	return "[A PreToolUse hook changed the command to: " + cmd + "]"
}

// HookAskNote is what the model is told when a hook asked for the user's
// approval and no one was there to give it.
func HookAskNote(reason string) string {
	return "Refused: a PreToolUse hook asked for the user's approval of this command (" + reason + "), and there is no one to ask."
}
