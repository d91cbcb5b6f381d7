package repl

import (
	"errors"
	"sync"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Sink turns agent events into renderer calls. It also remembers what the
// status commands need (the size of the last request's context). Pass
// Sink.Handle as agent.Options.OnEvent.
type Sink struct {
	r *render.Renderer

	mu         sync.Mutex
	lastPrompt int64       // input tokens of the last request, cache included
	todos      []todo.Item // the list after the latest change, for the next TodoWrite line
	lastErr    error       // the last error drawn, so the REPL does not repeat it
}

func (s *Sink) shown(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr != nil && s.lastErr == err
}

// NewSink returns a sink drawing on r.
func NewSink(r *render.Renderer) *Sink { return &Sink{r: r} }

// ContextTokens is the size of the last request's prompt in tokens.
func (s *Sink) ContextTokens() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastPrompt
}

// Reset forgets per-conversation figures (after /clear or /resume).
func (s *Sink) Reset() {
	s.mu.Lock()
	s.lastPrompt = 0
	s.mu.Unlock()
}

// Handle renders one event.
func (s *Sink) Handle(e agent.Event) {
	switch e.Kind {
	case agent.TextDelta:
		s.r.TextDelta(e.Text)
	case agent.ToolStart:
		s.r.EndText()
		s.r.ToolStart(e.CallID, e.Command)
	case agent.ToolEnd:
		ok, out, meta := true, "", render.ToolMeta{}
		if e.Result != nil {
			ok, out, meta.Message = !e.Result.IsError, e.Result.Output, e.Result.Message
			// A refusal is information for the model, not a failed command,
			// but the user should see at a glance that it did not run.
			if e.Result.Extras["type"] == tool.ExtrasTypeSandboxBlocked {
				ok = false
				meta.Message = "blocked by the sandbox"
			}
		}
		meta.Todos = e.Todos
		if meta.Todos == nil {
			s.mu.Lock()
			meta.Todos, s.todos = s.todos, nil
			s.mu.Unlock()
		}
		s.r.ToolEnd(e.CallID, ok, out, meta)
	case agent.TaskStart:
		s.r.EndText()
		s.r.TaskStart(e.TaskID, e.TaskType, e.TaskDescription)
	case agent.TaskToolStart:
		s.r.TaskToolStart(e.TaskID, e.Command)
	case agent.TaskToolEnd:
		s.r.TaskToolEnd(e.TaskID, e.Command, e.Result == nil || !e.Result.IsError)
	case agent.TaskEnd:
		ok, errText := e.Err == nil, ""
		if e.Result != nil && e.Result.IsError {
			ok = false
			errText = e.Result.Message
		}
		if e.Err != nil {
			errText = e.Err.Error()
		}
		s.r.TaskEnd(e.TaskID, ok, e.Duration, e.ToolCount, errText)
	case agent.TodoChange:
		// Shown with the TodoWrite call's result, in the scrolling tool
		// flow; a change from elsewhere (a /clear) needs no line of its own.
		s.mu.Lock()
		s.todos = append([]todo.Item{}, e.Todos...)
		s.mu.Unlock()
	case agent.Usage:
		if e.Usage != nil {
			s.mu.Lock()
			s.lastPrompt = promptTokens(*e.Usage)
			s.mu.Unlock()
		}
	case agent.TurnEnd:
		s.r.EndText()
	case agent.Error:
		s.mu.Lock()
		s.lastErr = e.Err
		s.mu.Unlock()
		var le *agent.LimitError
		if e.Err != nil && !errors.As(e.Err, &le) {
			s.r.Error(e.Err.Error())
		} else if le != nil {
			s.r.Notice(le.Message)
		}
	case agent.Warning:
		if e.Err != nil {
			s.r.Notice("warning: " + e.Err.Error())
		}
	case agent.HookProgress:
		s.r.Notice(e.Text)
	case agent.HookOutput:
		s.r.EndText()
		s.r.HookBlock("hooks", hooks.Body(e.Hooks))
	}
}

func promptTokens(u llm.Usage) int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens
}
