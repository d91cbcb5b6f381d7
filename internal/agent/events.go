package agent

import (
	"time"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// EventKind names what happened.
type EventKind int

// Event kinds. The loop emits all but the Task* kinds, which sub-agents emit
// through Runner.Emit so that they are serialised with the loop's own.
const (
	TextDelta     EventKind = iota + 1 // Text: new answer text
	ThinkingDelta                      // Text: new thinking text
	ToolStart                          // CallID, Command, Route
	ToolEnd                            // CallID, Command, Route, Result, Duration
	TaskStart                          // TaskID, TaskType, TaskDescription
	TaskToolStart                      // TaskID, CallID, Command, Route
	TaskToolEnd                        // TaskID, CallID, Command, Route, Result, Duration
	TaskEnd                            // TaskID, Result, Duration, ToolCount, Usage, Err
	Usage                              // Usage: one model request's usage
	TodoChange                         // Todos: the whole list after a change
	Reminder                           // Text: the reminder appended as a user message
	TurnEnd                            // one model turn (and its tool calls) is done
	Error                              // Err: the run failed
	Warning                            // Err: something non-fatal (a corrupt session line)
	HookProgress                       // Text: a stop hook's progress line
	HookOutput                         // Hooks (and Text, formatted): the stop hooks' block after the answer
	Retry                              // Text: a failed model request is retried (attempt, wait, reason)
	ContextNotice                      // Text: the context was offloaded or compacted
	ToolOutput                         // CallID, Text: output of a running top-level command, as it arrives
)

var kindNames = [...]string{"", "text_delta", "thinking_delta", "tool_start", "tool_end", "task_start",
	"task_tool_start", "task_tool_end", "task_end", "usage", "todo_change", "reminder", "turn_end", "error", "warning",
	"hook_progress", "hook_output", "retry", "context", "tool_output"}

// String is the kind's snake_case name (used by stream-json output).
func (k EventKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Event is one thing the loop (or a sub-agent) reports to the renderer.
type Event struct {
	Kind    EventKind
	Text    string
	CallID  string
	Command string
	// Route is where Command went (native / agent / extension, and which
	// command), so that no view has to parse the command text.
	Route    router.Route
	Result   *tool.Result
	Duration time.Duration
	Usage    *llm.Usage
	Todos    []todo.Item
	TaskID   string
	// ParentCallID is, on Task* events, the id of the parent's task:* tool
	// call that started the sub-agent.
	ParentCallID    string
	TaskType        string
	TaskDescription string
	ToolCount       int
	Err             error
	Hooks           []hooks.Output
	// RetryNotice is the retry a Retry event announces (Text says it in words).
	RetryNotice *llm.RetryNotice
	// StopReason and Calls are, on a Usage event, why the model's response
	// ended and the tool calls it made (in order, ids made unique): a
	// headless stream closes the model's message with them before any
	// call runs.
	StopReason string
	Calls      []llm.ToolCall
	// Context is, on a ContextNotice event, what changed in the history.
	Context *ContextChange
}

// ContextChange is a rewrite of the history a ContextNotice announces.
type ContextChange struct {
	// Action: "compact" (older messages summarised), "offload" (large older
	// tool results moved to files) or "shrink" (the newest cut to fit).
	Action string
	// Manual: the user asked for it (/compact); else the thresholds did.
	Manual        bool
	Before, After int // estimated context tokens around the change
}
