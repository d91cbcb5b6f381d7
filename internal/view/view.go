// Package view is the one translation of agent events into renderer calls,
// shared by the REPL and `synapse run`'s text output so that both show a
// turn the same way. It reads the typed facts events carry (the route, the
// result's kind); it never parses command text.
package view

import (
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// ReminderNotice is shown when the agent reminds the model of unfinished todos.
const ReminderNotice = "todo list unfinished: reminding the model to continue"

// View draws agent events on a renderer. Its Handle is an
// agent.Options.OnEvent; it is safe for concurrent use, though the runner
// serialises events already.
type View struct {
	r *render.Renderer

	mu         sync.Mutex
	text       io.Writer   // where answer text goes instead of the renderer (nil: the renderer)
	textNL     bool        // the text written to text ends with a newline (or none was written)
	wrote      bool        // some answer text went to text
	lastPrompt int64       // input tokens of the last request, cache included
	todos      []todo.Item // the list after the latest change, for the next tool line
	lastErr    error       // the last error drawn, so a caller does not repeat it
	// failedTasks are the task:* calls (by call id) whose sub-agent task
	// ended in failure: its row showed that, the call's end need not.
	failedTasks map[string]bool
}

// New returns a view drawing everything on r.
func New(r *render.Renderer) *View { return &View{r: r, textNL: true} }

// NewSplit returns a view that writes the answer text, unstyled, to text and
// everything else (tools, tasks, notices) on r: `synapse run` piped, where
// stdout carries only the answer.
func NewSplit(r *render.Renderer, text io.Writer) *View {
	return &View{r: r, text: text, textNL: true}
}

// Renderer is the renderer the view draws on.
func (v *View) Renderer() *render.Renderer { return v.r }

// ContextTokens is the size of the last request's prompt in tokens.
func (v *View) ContextTokens() int64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lastPrompt
}

// Reset forgets per-conversation figures (after /clear or /resume).
func (v *View) Reset() {
	v.mu.Lock()
	v.lastPrompt = 0
	v.mu.Unlock()
}

// Shown reports whether err is the error the view drew last.
func (v *View) Shown(err error) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lastErr != nil && v.lastErr == err
}

// Handle draws one event.
func (v *View) Handle(e agent.Event) {
	switch e.Kind {
	case agent.TextDelta:
		v.textDelta(e.Text)
	case agent.TurnEnd:
		v.endText()
	case agent.ThinkingDelta:
		v.r.Thinking(e.Text)
	case agent.ToolOutput:
		v.r.ToolOutput(e.CallID, e.Text)
	case agent.ToolStart:
		v.endText()
		v.r.ToolStartKind(e.CallID, e.Command, toolKind(e))
	case agent.ToolEnd:
		ok, out, meta := ToolOutcome(e.Result)
		meta.Duration = e.Duration
		// A sub-agent's answer is Markdown, shown as such.
		meta.Markdown = toolKind(e) == render.ToolTask
		v.mu.Lock()
		if route(e).Name == registry.TodoWrite {
			// Its summary replaces the raw output.
			meta.Todos = e.Todos
			if meta.Todos == nil {
				meta.Todos = v.todos
			}
		}
		v.todos = nil
		meta.TaskFailed = v.failedTasks[e.CallID]
		delete(v.failedTasks, e.CallID)
		v.mu.Unlock()
		v.r.ToolEnd(e.CallID, ok, out, meta)
	case agent.TaskStart:
		v.endText()
		v.r.TaskStart(e.TaskID, e.TaskType, e.TaskDescription)
	case agent.TaskToolStart:
		v.r.TaskToolStart(e.TaskID, e.Command)
	case agent.TaskToolEnd:
		v.r.TaskToolEnd(e.TaskID, e.Command, e.Result == nil || !e.Result.IsError)
	case agent.TaskEnd:
		ok, errText := TaskOutcome(e)
		if !ok && e.ParentCallID != "" {
			v.mu.Lock()
			if v.failedTasks == nil {
				v.failedTasks = map[string]bool{}
			}
			v.failedTasks[e.ParentCallID] = true
			v.mu.Unlock()
		}
		var tokens int64
		if e.Usage != nil {
			tokens = promptTokens(*e.Usage) + e.Usage.OutputTokens
		}
		v.r.TaskEnded(e.TaskID, render.TaskOutcome{OK: ok, Duration: e.Duration, Tools: e.ToolCount, Tokens: tokens, Err: errText, CallID: e.ParentCallID})
	case agent.TodoChange:
		// Shown with the TodoWrite call's result, in the scrolling tool
		// flow; a change from elsewhere (a /clear) needs no line of its own.
		v.mu.Lock()
		v.todos = append([]todo.Item{}, e.Todos...)
		v.mu.Unlock()
	case agent.Usage:
		if e.Usage != nil {
			v.mu.Lock()
			v.lastPrompt = promptTokens(*e.Usage)
			v.mu.Unlock()
			v.r.TurnUsage(promptTokens(*e.Usage), e.Usage.OutputTokens)
		}
	case agent.Reminder:
		v.r.Notice(ReminderNotice)
	case agent.Error:
		v.mu.Lock()
		v.lastErr = e.Err
		v.mu.Unlock()
		var le *agent.LimitError
		if e.Err != nil && !errors.As(e.Err, &le) {
			v.r.Error(e.Err.Error())
		} else if le != nil {
			v.r.Notice(le.Message)
		}
	case agent.Warning:
		if e.Err != nil {
			v.r.Notice("warning: " + e.Err.Error())
		}
	case agent.HookProgress:
		v.r.Notice(e.Text)
	case agent.Retry:
		if n := e.RetryNotice; n != nil {
			v.r.RetryNotice(render.Retry{Reason: n.Reason, Attempt: n.Attempt, Max: n.Max, Wait: n.Wait})
		} else {
			v.r.Notice(e.Text)
		}
	case agent.ContextNotice:
		v.r.Notice(e.Text)
	case agent.HookOutput:
		v.hookOutput(e.Hooks)
	}
}

// hookOutput shows the stop hooks' outputs after the answer, set apart from
// it: in the renderer's styled block, or, when the answer goes to its own
// writer, there (it is part of the outcome), cleaned like all outside text.
func (v *View) hookOutput(outs []hooks.Output) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.text == nil {
		v.r.EndText()
		v.r.HookBlock("hooks", hooks.Body(outs))
		return
	}
	if !v.textNL {
		_, _ = io.WriteString(v.text, "\n")
	}
	_, _ = io.WriteString(v.text, "\n"+textutil.Sanitize(hooks.Format(outs)))
	v.textNL, v.wrote = true, true
}

// Finish ends the output of a run: an interrupted run says so, and the
// answer ends with a newline.
func (v *View) Finish(interrupted bool) {
	if interrupted {
		v.r.Abort("interrupted")
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.text == nil {
		v.r.EndText()
	} else if v.wrote && !v.textNL {
		_, _ = io.WriteString(v.text, "\n")
		v.textNL = true
	}
}

func (v *View) textDelta(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.text == nil {
		v.r.TextDelta(s)
		return
	}
	if s != "" {
		_, _ = io.WriteString(v.text, s)
		v.textNL = strings.HasSuffix(s, "\n")
		v.wrote = true
	}
}

// endText finishes the answer's current line before something else is drawn.
func (v *View) endText() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.text == nil {
		v.r.EndText()
		return
	}
	if !v.textNL {
		_, _ = io.WriteString(v.text, "\n")
		v.textNL = true
	}
}

// ToolOutcome is how a tool result is shown: whether it succeeded, its
// output and the renderer's extra facts. A sandbox refusal is information
// for the model, not a failed command, but the user should see at a glance
// that it did not run.
func ToolOutcome(res *tool.Result) (ok bool, output string, meta render.ToolMeta) {
	if res == nil {
		return true, "", meta
	}
	ok, output, meta.Message = !res.IsError, tool.UserOutput(*res), res.Message
	meta.FullOutputPath = res.Facts.FullOutputPath
	if c := res.Change; c != nil && !res.IsError {
		meta.Change = &render.FileChange{Path: c.Path, Old: c.Old, New: c.New, Created: c.Created}
	}
	if res.Facts.SandboxBlocked() {
		ok, meta.Message = false, "blocked by the sandbox"
	}
	return ok, output, meta
}

// TaskOutcome is how a TaskEnd event is shown: whether the task succeeded
// and, if not, why (the run's error, else the result's message).
func TaskOutcome(e agent.Event) (ok bool, errText string) {
	ok = e.Err == nil
	if e.Result != nil && e.Result.IsError {
		ok, errText = false, e.Result.Message
	}
	if e.Err != nil {
		errText = e.Err.Error()
	}
	return ok, errText
}

// toolKind is how a top-level call is shown while it runs: task:* calls
// have their tasks' rows instead of one of their own.
func toolKind(e agent.Event) render.ToolKind {
	if route(e).Family == router.FamilyTask {
		return render.ToolTask
	}
	return render.ToolCommand
}

// route is where e's command went, as the event carries it.
func route(e agent.Event) router.Route {
	if e.Route.Name == "" { // an event made without its route (tests, old callers)
		return router.Classify(e.Command)
	}
	return e.Route
}

func promptTokens(u llm.Usage) int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens
}
