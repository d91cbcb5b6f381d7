// Package hooks runs what happens around the agent's turns: stop hooks
// (functions registered in code, such as skill auto-enhance) after a turn
// that ended normally, and the user's command hooks from
// $SYNAPSE_HOME/settings.json at UserPromptSubmit, PreToolUse, PostToolUse
// and Stop. The agent calls a Set through the small interface it declares;
// app builds the Set.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"github.com/synapse-agent/synapse/internal/textutil"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/llm"
)

// StopInput is what a stop hook receives about the finished turn.
type StopInput struct {
	// SessionID is the session's id, "" without persistence.
	SessionID string
	Cwd       string
	// Conversation is the whole history, the final answer included. Hooks
	// must not change it.
	Conversation []llm.Message
	FinalAnswer  string
	// Progress reports a line of progress while the hook runs (never nil
	// inside a hook).
	Progress func(string)
	// StopHookActive: the turn goes on because a Stop hook asked it to
	// (stop_hook_active in the Stop hooks' input).
	StopHookActive bool
	// CanContinue: a Stop command hook may still make the agent go on
	// instead of stopping (the agent bounds how often per turn).
	CanContinue bool
}

// StopFunc is one stop hook. Its non-empty output is shown after the answer;
// an error is reported in its place.
type StopFunc func(ctx context.Context, in StopInput) (string, error)

// Output is one hook's contribution to the block shown after the answer.
type Output struct {
	Hook string `json:"hook"`
	Text string `json:"text,omitempty"`
	// Error is set when the hook failed (or panicked); Text may hold what
	// it printed before.
	Error string `json:"error,omitempty"`
	// Continue, set only on the user's Stop hooks' Output, is their reason
	// for the agent to go on instead of stopping (exit 2, or JSON
	// "decision": "block"); no other stop hook ran then.
	Continue string `json:"-"`
}

// Verdict is what a user hook point decided.
type Verdict struct {
	// Block, when non-empty, refuses the prompt (UserPromptSubmit) or the
	// call (PreToolUse) with this reason; for PostToolUse it is feedback
	// added to the call's result for the model.
	Block string
	// Problems are hooks that failed without deciding anything (a non-zero
	// exit other than 2, a timeout): reported to the user and ignored.
	Problems []error
	// Context is what the hooks added for the model: UserPromptSubmit
	// hooks' stdout (exit 0) or JSON additionalContext; for Stop hooks,
	// their stdout shown after the answer.
	Context string
	// AdditionalContext is the hooks' JSON additionalContext alone (also
	// in Context): PreToolUse and PostToolUse add it to the call's result
	// for the model.
	AdditionalContext string
	// Halt: a hook answered {"continue": false}; the agent stops the turn
	// and shows HaltReason (its "stopReason") to the user.
	Halt       bool
	HaltReason string
	// Ask (PreToolUse): a hook answered permissionDecision "ask" with this
	// reason: the call is put to the user even where the mode would not ask.
	Ask string
	// UpdatedCommand (PreToolUse): a hook answered updatedInput with this
	// command, which runs instead of the model's (the first hook's wins).
	UpdatedCommand string
}

type namedStop struct {
	name string
	fn   StopFunc
}

// Set holds the stop hooks and the user's command hooks of one top-level
// agent. The zero value runs nothing. It is safe for concurrent use.
type Set struct {
	mu    sync.Mutex
	stops []namedStop
	user  *Runner
	// toolOnly: a sub-agent's view, running only the tool hooks.
	toolOnly bool
	// extra are hooks registered in code after the Set was built (the
	// Agent SDK host's callbacks), shared with the sub-agents' view.
	extra *extraHooks
}

type extraHooks struct {
	mu  sync.Mutex
	cfg Config
}

// AddHooks registers more hooks (Commands with Call, such as the Agent
// SDK host's callbacks); they run after the user's settings.json hooks of
// the same event, in the sub-agents' view too (tool events only).
func (s *Set) AddHooks(cfg Config) {
	if s == nil || s.extra == nil {
		return
	}
	s.extra.mu.Lock()
	defer s.extra.mu.Unlock()
	merged := Config{}
	for ev, l := range s.extra.cfg {
		merged[ev] = l
	}
	for ev, l := range cfg {
		merged[ev] = append(slices.Clip(merged[ev]), l...)
	}
	s.extra.cfg = merged
}

// runner is the user's Runner with the hooks added in code; nil when
// there are none.
func (s *Set) runner() *Runner {
	var extra Config
	if s.extra != nil {
		s.extra.mu.Lock()
		extra = s.extra.cfg
		s.extra.mu.Unlock()
	}
	if len(extra) == 0 {
		return s.user
	}
	r := Runner{}
	if s.user != nil {
		r = *s.user
	}
	merged := Config{}
	for ev, l := range r.Config {
		merged[ev] = l
	}
	for ev, l := range extra {
		merged[ev] = append(slices.Clip(merged[ev]), l...)
	}
	r.Config = merged
	return &r
}

// ForSubagents is the view of s that sub-agents get: the user's PreToolUse
// and PostToolUse hooks guard their calls too, but no stop hook runs and no
// UserPromptSubmit hook (their prompts are the model's, not the user's).
func (s *Set) ForSubagents() *Set {
	if s == nil {
		return nil
	}
	return &Set{user: s.user, toolOnly: true, extra: s.extra}
}

// NewSet returns a Set running the user hooks of r (nil: none).
func NewSet(r *Runner) *Set { return &Set{user: r, extra: &extraHooks{}} }

// AddStop registers a stop hook. Stop hooks run in reverse order of
// registration: the last registered runs first. A hook registered under a
// name already taken replaces that one in its place: a component set up
// again (a new session's enhancer) must not run twice.
func (s *Set) AddStop(name string, fn StopFunc) {
	if s.toolOnly {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.stops, func(h namedStop) bool { return h.name == name }); i >= 0 {
		s.stops[i].fn = fn
		return
	}
	s.stops = append(s.stops, namedStop{name: name, fn: fn})
}

// Stop runs every stop hook, last registered first, each isolated: an error
// or a panic becomes that hook's Output and the others still run. Hooks
// with nothing to say (no text, no error) are left out. The user's Stop
// command hooks run first, as if registered last.
func (s *Set) Stop(ctx context.Context, in StopInput) []Output {
	if s == nil || s.toolOnly {
		return nil
	}
	s.mu.Lock()
	stops := append([]namedStop(nil), s.stops...)
	s.mu.Unlock()
	if in.Progress == nil {
		in.Progress = func(string) {}
	}
	var out []Output
	// The user's Stop command hooks run first, as if registered last; one
	// asking the agent to go on means the turn is not over, so the others
	// (auto-enhance learning from it) wait for its real end.
	if user := s.runner(); user.Has(EventStop) && ctx.Err() == nil {
		v := user.stopVerdict(ctx, in)
		o := Output{Hook: EventStop, Text: v.Context}
		errs := v.Problems
		switch {
		case v.Halt:
			o.Text = strings.TrimSpace(o.Text + "\n" + v.HaltReason)
		case v.Block != "" && in.CanContinue:
			o.Continue = v.Block
			return []Output{o}
		case v.Block != "":
			errs = append(errs, fmt.Errorf("asked the agent to go on again (%s), but it already went on as often as one turn allows; the turn ends", textutil.FirstLines(v.Block, 3)))
		}
		if err := errors.Join(errs...); err != nil {
			o.Error = err.Error()
		}
		if o.Text != "" || o.Error != "" {
			out = append(out, o)
		}
	}
	for i := len(stops) - 1; i >= 0; i-- {
		if ctx.Err() != nil {
			break
		}
		h := stops[i]
		text, err := runIsolated(ctx, h, in)
		o := Output{Hook: h.name, Text: strings.TrimSpace(text)}
		if err != nil {
			o.Error = err.Error()
		}
		if o.Text != "" || o.Error != "" {
			out = append(out, o)
		}
	}
	return out
}

func runIsolated(ctx context.Context, h namedStop, in StopInput) (text string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("stop hook %s panicked: %v\n%s", h.name, p, firstFrames(debug.Stack()))
		}
	}()
	// Each hook gets its own copy of the conversation slice header: one
	// hook appending cannot change what the next sees.
	in.Conversation = in.Conversation[:len(in.Conversation):len(in.Conversation)]
	return h.fn(ctx, in)
}

// firstFrames keeps a panic's stack short enough to show.
func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	if len(lines) > 12 {
		lines = lines[:12]
	}
	return strings.Join(lines, "\n")
}

// UserPromptSubmit runs the user's UserPromptSubmit hooks.
func (s *Set) UserPromptSubmit(ctx context.Context, sessionID, cwd, prompt string) Verdict {
	if s == nil || s.toolOnly {
		return Verdict{}
	}
	return s.runner().run(ctx, Payload{Event: EventUserPromptSubmit, SessionID: sessionID, Cwd: cwd, Prompt: prompt}, "")
}

// PreToolUse runs the user's PreToolUse hooks whose matcher fits command.
func (s *Set) PreToolUse(ctx context.Context, sessionID, cwd, command string) Verdict {
	if s == nil {
		return Verdict{}
	}
	return s.runner().run(ctx, toolPayload(EventPreToolUse, sessionID, cwd, command), command)
}

// PostToolUse runs the user's PostToolUse hooks whose matcher fits command.
func (s *Set) PostToolUse(ctx context.Context, sessionID, cwd, command, output string, isError bool) Verdict {
	if s == nil {
		return Verdict{}
	}
	p := toolPayload(EventPostToolUse, sessionID, cwd, command)
	p.ToolResponse = &ToolResponse{Output: output, IsError: isError}
	return s.runner().run(ctx, p, command)
}

// Format is the block shown after the answer in plain text (synapse run):
// a marked header line, then Body.
func Format(outs []Output) string {
	if len(outs) == 0 {
		return ""
	}
	return "── hooks ──\n" + Body(outs)
}

// Body is each hook's output, then its failure, one after another.
func Body(outs []Output) string {
	var b strings.Builder
	for _, o := range outs {
		if o.Text != "" {
			b.WriteString(o.Text)
			b.WriteString("\n")
		}
		if o.Error != "" {
			fmt.Fprintf(&b, "[%s] failed: %s\n", o.Hook, o.Error)
		}
	}
	return b.String()
}
