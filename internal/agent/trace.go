package agent

import (
	"context"

	"github.com/synapse-agent/synapse/internal/llm"
)

// CallTrace is what a runner hands down to the work of one tool call, in
// the call's context, the way net/http/httptrace hands a ClientTrace down a
// request: a sub-agent reports its Task* events and its requests' usage
// through it rather than holding on to its parent. Nil hooks are skipped.
type CallTrace struct {
	// Emit reports an event, serialised with the runner's own.
	Emit func(Event)
	// RecordUsage adds one sub-agent request's usage to the runner's totals
	// and session.
	RecordUsage func(u llm.Usage, model string)
	// Model is the runner's current model (the sub-agents' default).
	Model func() string
	// CallID is the id of the tool call the work belongs to; Report stamps
	// it on Task* events as their ParentCallID.
	CallID string
}

type callTraceKey struct{}

// WithCallTrace returns ctx carrying t; work done under ctx reports to t.
func WithCallTrace(ctx context.Context, t CallTrace) context.Context {
	return context.WithValue(ctx, callTraceKey{}, t)
}

// ContextCallTrace is the trace ctx carries (the zero CallTrace, whose
// methods do nothing, when there is none).
func ContextCallTrace(ctx context.Context) CallTrace {
	t, _ := ctx.Value(callTraceKey{}).(CallTrace)
	return t
}

// Report sends e to the trace's Emit.
func (t CallTrace) Report(e Event) {
	switch e.Kind {
	case TaskStart, TaskToolStart, TaskToolEnd, TaskEnd:
		if e.ParentCallID == "" {
			e.ParentCallID = t.CallID
		}
	}
	if t.Emit != nil {
		t.Emit(e)
	}
}

// AddUsage sends u to the trace's RecordUsage.
func (t CallTrace) AddUsage(u llm.Usage, model string) {
	if t.RecordUsage != nil {
		t.RecordUsage(u, model)
	}
}

// CurrentModel is the trace's Model, "" without one.
func (t CallTrace) CurrentModel() string {
	if t.Model == nil {
		return ""
	}
	return t.Model()
}

// callTrace is the trace this runner hands to its tool calls and hooks.
func (r *Runner) callTrace() CallTrace {
	return CallTrace{Emit: r.Emit, RecordUsage: r.RecordUsage, Model: r.Model}
}
