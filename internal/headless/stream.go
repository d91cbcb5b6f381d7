package headless

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/tool"
)

// ToolName is the one tool the model has.
const ToolName = "Bash"

// InitEvent opens a stream-json run (type "system", subtype "init"; Init
// fills both).
type InitEvent struct {
	Type           string      `json:"type"`
	Subtype        string      `json:"subtype"`
	SessionID      string      `json:"session_id"`
	Model          string      `json:"model"`
	Cwd            string      `json:"cwd"`
	Tools          []string    `json:"tools"`
	MCPServers     []MCPStatus `json:"mcp_servers"`
	PermissionMode string      `json:"permission_mode"`
	Sandbox        bool        `json:"sandbox"`
	SynapseVersion string      `json:"synapse_version"`
}

// MCPStatus is one MCP server of the init event.
type MCPStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"` // connected, failed, pending
}

// messageEvent is an assistant or user message carrying content blocks.
type messageEvent struct {
	Type            string  `json:"type"` // assistant, user
	Message         message `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	SessionID       string  `json:"session_id"`
	// ToolUseResult is Synapse's structured view of a tool_result (user
	// messages only): the command, its failure category and exit code…
	ToolUseResult *toolUseResult `json:"tool_use_result,omitempty"`
}

type toolUseResult struct {
	Command    string         `json:"command"`
	Output     string         `json:"output"`
	IsError    bool           `json:"is_error"`
	Message    string         `json:"message,omitempty"`
	Extras     map[string]any `json:"extras,omitempty"`
	DurationMs int64          `json:"duration_ms"`
	Cancelled  bool           `json:"cancelled,omitempty"`
}

// factsJSON is the result's facts as the "extras" object, keys snake_case.
func factsJSON(f tool.Facts) map[string]any {
	b, err := json.Marshal(f)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return snakeKeys(m)
}

// snakeKeys copies extras with snake_case keys (failureCategory →
// failure_category), as everything else in the format is.
func snakeKeys(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		var b strings.Builder
		for i, r := range k {
			if r >= 'A' && r <= 'Z' {
				if i > 0 {
					b.WriteByte('_')
				}
				r += 'a' - 'A'
			}
			b.WriteRune(r)
		}
		out[b.String()] = v
	}
	return out
}

type message struct {
	ID      string      `json:"id,omitempty"`
	Type    string      `json:"type,omitempty"` // "message" on assistant messages
	Role    string      `json:"role"`
	Model   string      `json:"model,omitempty"`
	Content []Block     `json:"content"`
	Usage   *UsageEvent `json:"usage,omitempty"`
}

// Block is one content block: text, thinking, tool_use or tool_result.
type Block struct {
	Type      string         `json:"type"`
	Text      *string        `json:"text,omitempty"`
	Thinking  *string        `json:"thinking,omitempty"`
	ID        string         `json:"id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Input     map[string]any `json:"input,omitempty"`
	ToolUseID string         `json:"tool_use_id,omitempty"`
	Content   *string        `json:"content,omitempty"`
	IsError   *bool          `json:"is_error,omitempty"`
}

// UsageEvent is token usage as the format spells it.
type UsageEvent struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// UsageOf converts the runner's usage.
func UsageOf(u llm.Usage) UsageEvent {
	return UsageEvent{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheCreationTokens}
}

// streamEvent is a partial-message event (--include-partial-messages).
type streamEvent struct {
	Type            string         `json:"type"` // stream_event
	Event           map[string]any `json:"event"`
	ParentToolUseID *string        `json:"parent_tool_use_id"`
	SessionID       string         `json:"session_id"`
}

// systemEvent is one of Synapse's own events (type "system").
type systemEvent struct {
	Type            string         `json:"type"`
	Subtype         string         `json:"subtype"`
	SessionID       string         `json:"session_id"`
	ParentToolUseID *string        `json:"parent_tool_use_id,omitempty"`
	ToolUseID       string         `json:"tool_use_id,omitempty"`
	TaskID          string         `json:"task_id,omitempty"`
	TaskType        string         `json:"task_type,omitempty"`
	Description     string         `json:"description,omitempty"`
	Command         string         `json:"command,omitempty"`
	Resource        string         `json:"resource,omitempty"`
	Reason          string         `json:"reason,omitempty"`
	Text            string         `json:"text,omitempty"`
	Message         string         `json:"message,omitempty"`
	Todos           *[]todoEvent   `json:"todos,omitempty"`
	Hooks           []hooks.Output `json:"hooks,omitempty"`
	DurationMs      *int64         `json:"duration_ms,omitempty"`
	ToolCount       *int           `json:"tool_count,omitempty"`
	Usage           *UsageEvent    `json:"usage,omitempty"`
	IsError         *bool          `json:"is_error,omitempty"`
	Error           string         `json:"error,omitempty"`
}

type todoEvent struct {
	Content    string `json:"content"`
	ActiveForm string `json:"active_form"`
	Status     string `json:"status"`
}

// ResultEvent ends a run (and is the whole output of --output-format json).
type ResultEvent struct {
	Type              string         `json:"type"`
	Subtype           string         `json:"subtype"` // success, error_max_turns, error_during_execution
	IsError           bool           `json:"is_error"`
	DurationMs        int64          `json:"duration_ms"`
	DurationAPIMs     int64          `json:"duration_api_ms"`
	NumTurns          int            `json:"num_turns"`
	Result            string         `json:"result"`
	SessionID         string         `json:"session_id"`
	TotalCostUSD      float64        `json:"total_cost_usd"`
	CostKnown         bool           `json:"cost_known"`
	Usage             UsageEvent     `json:"usage"`
	PermissionDenials []Denial       `json:"permission_denials"`
	StopReason        string         `json:"stop_reason"`
	Error             string         `json:"error,omitempty"`
	Hooks             []hooks.Output `json:"hooks,omitempty"`
}

// Denial is a call the sandbox refused.
type Denial struct {
	ToolName  string         `json:"tool_name"`
	ToolUseID string         `json:"tool_use_id"`
	ToolInput map[string]any `json:"tool_input"`
}

// Stream turns agent events into the stream-json events. Not safe for
// concurrent use: the caller serialises the calls.
type Stream struct {
	enc     *json.Encoder
	partial bool // --include-partial-messages
	stream  bool // false for --output-format json: only the result is written

	sessionID string
	model     string

	msgSeq   int
	msgID    string // the current model turn's message id ("" between turns)
	thinking strings.Builder
	text     strings.Builder
	block    string // the open partial block: "text", "thinking" or ""
	stopped  bool   // the turn's message_stop was sent
	index    int    // its index within the message
	usage    *llm.Usage

	open    []string // tool_use ids without a tool_result, in order
	parent  map[string]string
	command map[string]string
	denials []Denial
}

// New returns a Stream writing to w: every event when stream is true
// (stream-json), else only the result (json); partial adds the
// stream_event partial-message events (--include-partial-messages).
func New(w io.Writer, stream, partial bool) *Stream {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Stream{enc: enc, stream: stream, partial: partial, parent: map[string]string{}, command: map[string]string{}}
}

func (s *Stream) emit(v any) {
	if s.stream {
		_ = s.enc.Encode(v)
	}
}

// Init writes the system/init event and remembers its session and model.
func (s *Stream) Init(ev InitEvent) {
	s.sessionID, s.model = ev.SessionID, ev.Model
	ev.Type, ev.Subtype = "system", "init"
	s.emit(ev)
}

func ptr[T any](v T) *T { return &v }

func parentID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

func (s *Stream) sys(ev systemEvent) {
	ev.Type, ev.SessionID = "system", s.sessionID
	s.emit(ev)
}

func (s *Stream) partialEvent(ev map[string]any) {
	if s.partial {
		s.emit(streamEvent{Type: "stream_event", Event: ev, SessionID: s.sessionID})
	}
}

// turnID is the current model turn's message id, starting a turn if needed.
func (s *Stream) turnID() string {
	if s.msgID == "" {
		s.msgSeq++
		s.msgID = fmt.Sprintf("msg_%d", s.msgSeq)
		s.index = 0
		s.partialEvent(map[string]any{"type": "message_start", "message": map[string]any{
			"id": s.msgID, "type": "message", "role": "assistant", "model": s.model, "content": []any{}}})
	}
	return s.msgID
}

func (s *Stream) delta(kind, text string) {
	if text == "" {
		return
	}
	s.turnID()
	if s.block != kind {
		s.closeBlock()
		s.block = kind
		start := map[string]any{"type": kind, kind: ""}
		s.partialEvent(map[string]any{"type": "content_block_start", "index": s.index, "content_block": start})
	}
	field := "text"
	if kind == "thinking" {
		field = "thinking"
		s.thinking.WriteString(text)
	} else {
		s.text.WriteString(text)
	}
	s.partialEvent(map[string]any{"type": "content_block_delta", "index": s.index,
		"delta": map[string]any{"type": kind + "_delta", field: text}})
}

func (s *Stream) closeBlock() {
	if s.block == "" {
		return
	}
	s.partialEvent(map[string]any{"type": "content_block_stop", "index": s.index})
	s.block = ""
	s.index++
}

// flush writes the turn's thinking and text as assistant messages (one per
// block, sharing the turn's message id).
func (s *Stream) flush() {
	s.closeBlock()
	if s.thinking.Len() > 0 {
		t := s.thinking.String()
		s.assistant(Block{Type: "thinking", Thinking: &t}, "")
		s.thinking.Reset()
	}
	if s.text.Len() > 0 {
		t := s.text.String()
		s.assistant(Block{Type: "text", Text: &t}, "")
		s.text.Reset()
	}
}

func (s *Stream) assistant(b Block, parent string) {
	m := message{Type: "message", Role: "assistant", Model: s.model, Content: []Block{b}}
	if parent == "" {
		m.ID = s.turnID()
		if s.usage != nil {
			u := UsageOf(*s.usage)
			m.Usage = &u
		}
	}
	s.emit(messageEvent{Type: "assistant", Message: m, ParentToolUseID: parentID(parent), SessionID: s.sessionID})
}

// stopMessage ends the model's message: its blocks are written, and with
// partial messages, message_delta (usage) and message_stop follow.
func (s *Stream) stopMessage() {
	s.flush()
	if s.msgID == "" || s.stopped {
		return
	}
	s.stopped = true
	if s.usage != nil {
		s.partialEvent(map[string]any{"type": "message_delta", "usage": UsageOf(*s.usage)})
	}
	s.partialEvent(map[string]any{"type": "message_stop"})
}

// endTurn closes the model turn (its message and tool calls).
func (s *Stream) endTurn() {
	s.stopMessage()
	s.msgID, s.usage, s.stopped = "", nil, false
}

func (s *Stream) toolUse(id, command, parent string) {
	if parent == "" {
		s.flush()
	}
	s.assistant(Block{Type: "tool_use", ID: id, Name: ToolName, Input: map[string]any{"command": command}}, parent)
	s.open = append(s.open, id)
	s.parent[id] = parent
	s.command[id] = command
}

// toolResult writes the call's result, once: a call already answered (or
// never started) is skipped.
func (s *Stream) toolResult(id, command, parent string, res *tool.Result, took time.Duration) {
	i := -1
	for k, o := range s.open {
		if o == id {
			i = k
			break
		}
	}
	if i < 0 {
		return
	}
	s.open = append(s.open[:i], s.open[i+1:]...)
	delete(s.parent, id)
	if command == "" {
		command = s.command[id]
	}
	delete(s.command, id)
	out, isErr := "", false
	tr := &toolUseResult{Command: command, DurationMs: took.Milliseconds()}
	if res != nil {
		out, isErr = res.Output, res.IsError
		if out == "" {
			out = res.Message
		}
		tr.Output, tr.IsError, tr.Message, tr.Extras = res.Output, res.IsError, res.Message, factsJSON(res.Facts)
		tr.Cancelled = res.Facts.Interrupted || res.Facts.Status == "cancelled"
	}
	s.emit(messageEvent{Type: "user", Message: message{Role: "user", Content: []Block{{Type: "tool_result", ToolUseID: id, Content: &out, IsError: &isErr}}},
		ParentToolUseID: parentID(parent), SessionID: s.sessionID, ToolUseResult: tr})
	if res != nil && res.Facts.SandboxBlocked() {
		resource, reason := res.Facts.Resource, res.Facts.Reason
		s.denials = append(s.denials, Denial{ToolName: ToolName, ToolUseID: id, ToolInput: map[string]any{"command": command}})
		s.sys(systemEvent{Subtype: "sandbox_blocked", ToolUseID: id, ParentToolUseID: parentID(parent), Command: command, Resource: resource, Reason: reason})
	}
}

// Event encodes one agent event.
func (s *Stream) Event(e agent.Event) {
	switch e.Kind {
	case agent.TextDelta:
		s.delta("text", e.Text)
	case agent.ThinkingDelta:
		s.delta("thinking", e.Text)
	case agent.Usage:
		if e.Usage != nil {
			u := *e.Usage
			s.usage = &u
		}
		s.stopMessage() // the model's response is complete
	case agent.ToolStart:
		s.toolUse(e.CallID, e.Command, "")
	case agent.ToolEnd:
		s.toolResult(e.CallID, e.Command, "", e.Result, e.Duration)
	case agent.TaskToolStart:
		s.toolUse(e.CallID, e.Command, e.ParentCallID)
	case agent.TaskToolEnd:
		s.toolResult(e.CallID, e.Command, e.ParentCallID, e.Result, e.Duration)
	case agent.TurnEnd:
		s.endTurn()
	case agent.TaskStart:
		s.sys(systemEvent{Subtype: "task_started", TaskID: e.TaskID, ParentToolUseID: parentID(e.ParentCallID), TaskType: e.TaskType, Description: e.TaskDescription})
	case agent.TaskEnd:
		ev := systemEvent{Subtype: "task_finished", TaskID: e.TaskID, ParentToolUseID: parentID(e.ParentCallID), TaskType: e.TaskType,
			Description: e.TaskDescription, DurationMs: ptr(e.Duration.Milliseconds()), ToolCount: ptr(e.ToolCount),
			IsError: ptr(e.Err != nil || (e.Result != nil && e.Result.IsError))}
		if e.Usage != nil {
			ev.Usage = ptr(UsageOf(*e.Usage))
		}
		if e.Err != nil {
			ev.Error = e.Err.Error()
		}
		s.sys(ev)
	case agent.TodoChange:
		items := make([]todoEvent, 0, len(e.Todos))
		for _, it := range e.Todos {
			items = append(items, todoEvent{Content: it.Content, ActiveForm: it.ActiveForm, Status: string(it.Status)})
		}
		s.sys(systemEvent{Subtype: "todo_update", Todos: &items})
	case agent.Reminder:
		s.sys(systemEvent{Subtype: "todo_reminder", Text: e.Text})
	case agent.Retry:
		s.sys(systemEvent{Subtype: "api_retry", Message: e.Text})
	case agent.Warning:
		if e.Err != nil {
			s.sys(systemEvent{Subtype: "warning", Message: e.Err.Error()})
		}
	case agent.HookProgress:
		s.sys(systemEvent{Subtype: "hook_progress", Text: e.Text})
	case agent.HookOutput:
		s.sys(systemEvent{Subtype: "hook_output", Hooks: e.Hooks, Text: e.Text})
	}
}

// Summary is the outcome of one run, for the result event.
type Summary struct {
	Result agent.Result  // the runner's result
	Err    error         // the run's error, if any
	Took   time.Duration // wall time of the run
	Cost   float64       // USD, when Priced
	Priced bool          // the cost is known
}

// Finish answers every tool_use still open (the run was cancelled under
// it; the agent reports its own calls ended, but a sub-agent's command can
// be cut off mid-way), closes the turn and writes the result event.
func (s *Stream) Finish(r Summary) {
	for len(s.open) > 0 {
		id := s.open[len(s.open)-1] // innermost (a sub-agent's) first
		res := tool.Result{Output: "[interrupted: the command was cancelled]", IsError: true, Message: "Command interrupted",
			Facts: tool.Facts{Interrupted: true, Status: "cancelled"}}
		s.toolResult(id, "", s.parent[id], &res, 0)
	}
	s.endTurn()
	out := ResultEvent{Type: "result", Subtype: "success", DurationMs: r.Took.Milliseconds(), DurationAPIMs: r.Result.APIDuration.Milliseconds(),
		NumTurns: r.Result.Turns, Result: r.Result.Text, SessionID: s.sessionID, TotalCostUSD: r.Cost, CostKnown: r.Priced,
		Usage: UsageOf(r.Result.Usage), PermissionDenials: s.denials, StopReason: r.Result.StopReason, Hooks: r.Result.Hooks}
	if out.PermissionDenials == nil {
		out.PermissionDenials = []Denial{}
	}
	if r.Err != nil {
		out.IsError, out.Error = true, r.Err.Error()
		out.Subtype = "error_during_execution"
		var le *agent.LimitError
		if errors.As(r.Err, &le) && le.Reason == agent.StopMaxTurns {
			out.Subtype = "error_max_turns"
		}
	}
	s.denials = nil
	_ = s.enc.Encode(out)
}
