package headless

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
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
// fills both and the uuid). The camelCase fields and slash_commands,
// skills, agents, output_style, plugins and claude_code_version are the
// Agent SDK's (SDKSystemMessage); permission_mode, sandbox and
// synapse_version are Synapse's.
type InitEvent struct {
	Type              string      `json:"type"`
	Subtype           string      `json:"subtype"`
	UUID              string      `json:"uuid"`
	SessionID         string      `json:"session_id"`
	Model             string      `json:"model"`
	Cwd               string      `json:"cwd"`
	Tools             []string    `json:"tools"`
	MCPServers        []MCPStatus `json:"mcp_servers"`
	PermissionMode    string      `json:"permission_mode"`
	SDKPermissionMode string      `json:"permissionMode"` // the SDK's name of the mode (SDKMode)
	APIKeySource      string      `json:"apiKeySource"`
	SlashCommands     []string    `json:"slash_commands"`
	Skills            []string    `json:"skills"`
	Agents            []string    `json:"agents"`
	OutputStyle       string      `json:"output_style"`
	Plugins           []struct{}  `json:"plugins"`
	ClaudeCodeVersion string      `json:"claude_code_version"` // Synapse's version: the SDK compares it with nothing
	Sandbox           bool        `json:"sandbox"`
	SynapseVersion    string      `json:"synapse_version"`
}

// MCPStatus is one MCP server of the init event.
type MCPStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"` // connected, failed, pending
	Error  string `json:"error,omitempty"`
	// Source is "sdk" for the host's in-process servers.
	Source string `json:"source,omitempty"`
	// Tools are the server's tools, when connected (mcp_status).
	Tools []MCPTool `json:"tools,omitempty"`
}

// MCPTool is one tool of an MCPStatus.
type MCPTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Annotations *MCPAnnotations `json:"annotations,omitempty"`
}

// MCPAnnotations are a tool's hints.
type MCPAnnotations struct {
	ReadOnly bool `json:"readOnly,omitempty"`
}

// messageEvent is an assistant or user message carrying content blocks.
type messageEvent struct {
	Type            string  `json:"type"` // assistant, user
	Message         message `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`
	UUID            string  `json:"uuid"`
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

// message is an Anthropic Messages API message: an assistant message has
// every field the API's Message has (null where Synapse has nothing to
// say), a user message only role and content.
type message struct {
	ID      string      `json:"id,omitempty"`
	Type    string      `json:"type,omitempty"` // "message" on assistant messages
	Role    string      `json:"role"`
	Model   string      `json:"model,omitempty"`
	Content []Block     `json:"content"`
	Usage   *UsageEvent `json:"usage,omitempty"`
	*apiNulls
}

// apiNulls are the API message's fields Synapse never fills: present, and
// null, on assistant messages.
type apiNulls struct {
	StopReason        *string   `json:"stop_reason"` // null until the response is complete
	Container         *struct{} `json:"container"`
	ContextManagement *struct{} `json:"context_management"`
	Diagnostics       *struct{} `json:"diagnostics"`
	StopDetails       *struct{} `json:"stop_details"`
	StopSequence      *string   `json:"stop_sequence"`
}

// Block is one content block: text, thinking, tool_use or tool_result.
type Block struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Citations json.RawMessage `json:"citations,omitempty"` // text blocks: null
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"` // thinking blocks
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

func textBlock(t string) Block { return Block{Type: "text", Text: &t, Citations: jsonNull} }

func thinkingBlock(t string) Block { return Block{Type: "thinking", Thinking: &t, Signature: ptr("")} }

var jsonNull = json.RawMessage("null")

// UsageEvent is token usage as the Messages API spells it. The fields
// after the four counts are the API's too; Synapse knows none of them and
// writes zeros ("standard" for the tier and speed), so that the SDK's
// NonNullableUsage holds.
type UsageEvent struct {
	InputTokens              int64               `json:"input_tokens"`
	OutputTokens             int64               `json:"output_tokens"`
	CacheReadInputTokens     int64               `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64               `json:"cache_creation_input_tokens"`
	CacheCreation            cacheCreation       `json:"cache_creation"`
	ServerToolUse            serverToolUse       `json:"server_tool_use"`
	OutputTokensDetails      outputTokensDetails `json:"output_tokens_details"`
	Iterations               []struct{}          `json:"iterations"`
	InferenceGeo             string              `json:"inference_geo"`
	ServiceTier              string              `json:"service_tier"`
	Speed                    string              `json:"speed"`
	FallbackCredit           *struct{}           `json:"fallback_credit"`
}

type cacheCreation struct {
	Ephemeral1h int64 `json:"ephemeral_1h_input_tokens"`
	Ephemeral5m int64 `json:"ephemeral_5m_input_tokens"`
}

type serverToolUse struct {
	WebFetch  int64 `json:"web_fetch_requests"`
	WebSearch int64 `json:"web_search_requests"`
}

type outputTokensDetails struct {
	Thinking int64 `json:"thinking_tokens"`
}

// UsageOf converts the runner's usage.
func UsageOf(u llm.Usage) UsageEvent {
	return UsageEvent{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheCreationTokens,
		Iterations: []struct{}{}, ServiceTier: "standard", Speed: "standard"}
}

// deltaUsage is a message_delta's usage (the API's MessageDeltaUsage).
func deltaUsage(u llm.Usage) map[string]any {
	return map[string]any{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_input_tokens": u.CacheReadTokens, "cache_creation_input_tokens": u.CacheCreationTokens,
		"server_tool_use": nil, "output_tokens_details": nil, "iterations": nil, "fallback_credit": nil}
}

// ModelUsage is one model's share of a run (the SDK's ModelUsage; camelCase
// as the SDK spells it).
type ModelUsage struct {
	InputTokens              int64   `json:"inputTokens"`
	OutputTokens             int64   `json:"outputTokens"`
	CacheReadInputTokens     int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests        int64   `json:"webSearchRequests"`
	CostUSD                  float64 `json:"costUSD"`
	ContextWindow            int     `json:"contextWindow"`
	MaxOutputTokens          int     `json:"maxOutputTokens"`
}

// streamEvent is a partial-message event (--include-partial-messages).
type streamEvent struct {
	Type            string         `json:"type"` // stream_event
	Event           map[string]any `json:"event"`
	ParentToolUseID *string        `json:"parent_tool_use_id"`
	UUID            string         `json:"uuid"`
	SessionID       string         `json:"session_id"`
}

// systemEvent is one of Synapse's own events (type "system"), or the SDK's
// compact_boundary.
type systemEvent struct {
	Type            string           `json:"type"`
	Subtype         string           `json:"subtype"`
	UUID            string           `json:"uuid"`
	SessionID       string           `json:"session_id"`
	ParentToolUseID *string          `json:"parent_tool_use_id,omitempty"`
	ToolUseID       string           `json:"tool_use_id,omitempty"`
	TaskID          string           `json:"task_id,omitempty"`
	TaskType        string           `json:"task_type,omitempty"`
	SubagentType    string           `json:"subagent_type,omitempty"`
	Description     string           `json:"description,omitempty"`
	Command         string           `json:"command,omitempty"`
	Resource        string           `json:"resource,omitempty"`
	Reason          string           `json:"reason,omitempty"`
	Text            string           `json:"text,omitempty"`
	Message         string           `json:"message,omitempty"`
	Todos           *[]todoEvent     `json:"todos,omitempty"`
	Hooks           []hooks.Output   `json:"hooks,omitempty"`
	DurationMs      *int64           `json:"duration_ms,omitempty"`
	ToolCount       *int             `json:"tool_count,omitempty"`
	Usage           *UsageEvent      `json:"usage,omitempty"`
	IsError         *bool            `json:"is_error,omitempty"`
	Error           string           `json:"error,omitempty"`
	Action          string           `json:"action,omitempty"`
	CompactMetadata *compactMetadata `json:"compact_metadata,omitempty"`
	// api_retry, as the SDK's SDKAPIRetryMessage has it.
	Attempt      *int   `json:"attempt,omitempty"`
	MaxRetries   *int   `json:"max_retries,omitempty"`
	RetryDelayMs *int64 `json:"retry_delay_ms,omitempty"`
}

// compactMetadata is compact_boundary's: what triggered the rewrite and
// the context's estimated tokens before and after it.
type compactMetadata struct {
	Trigger    string `json:"trigger"` // auto, manual
	PreTokens  int    `json:"pre_tokens"`
	PostTokens int    `json:"post_tokens"`
}

type todoEvent struct {
	Content    string `json:"content"`
	ActiveForm string `json:"active_form"`
	Status     string `json:"status"`
}

// ResultEvent ends a run (and is the whole output of --output-format json).
// modelUsage and errors are the SDK's (errors: on error results, what went
// wrong); error, cost_known and hooks are Synapse's.
type ResultEvent struct {
	Type              string                `json:"type"`
	Subtype           string                `json:"subtype"` // success, error_max_turns, error_during_execution
	IsError           bool                  `json:"is_error"`
	DurationMs        int64                 `json:"duration_ms"`
	DurationAPIMs     int64                 `json:"duration_api_ms"`
	NumTurns          int                   `json:"num_turns"`
	Result            string                `json:"result"`
	SessionID         string                `json:"session_id"`
	UUID              string                `json:"uuid"`
	TotalCostUSD      float64               `json:"total_cost_usd"`
	CostKnown         bool                  `json:"cost_known"`
	Usage             UsageEvent            `json:"usage"`
	ModelUsage        map[string]ModelUsage `json:"modelUsage"`
	PermissionDenials []Denial              `json:"permission_denials"`
	StopReason        string                `json:"stop_reason"`
	Errors            []string              `json:"errors,omitempty"`
	Error             string                `json:"error,omitempty"`
	Hooks             []hooks.Output        `json:"hooks,omitempty"`
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
	uuid    func() string

	sessionID string
	model     string

	msgSeq   int
	msgID    string // the current model turn's message id ("" between turns)
	thinking strings.Builder
	text     strings.Builder
	block    string // the open partial block: "text", "thinking" or ""
	stopped  bool   // the turn's message_stop was sent
	index    int    // the open block's index within the message
	usage    *llm.Usage
	stop     string // the model's stop reason, once its response is complete

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
	return &Stream{enc: enc, stream: stream, partial: partial, uuid: NewUUID, parent: map[string]string{}, command: map[string]string{}}
}

// SetModel changes the model later messages name (set_model).
func (s *Stream) SetModel(m string) { s.model = m }

// NewUUID is a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

func (s *Stream) emit(v any) {
	if s.stream {
		_ = s.enc.Encode(v)
	}
}

// Init writes the system/init event and remembers its session and model.
func (s *Stream) Init(ev InitEvent) {
	s.sessionID, s.model = ev.SessionID, ev.Model
	ev.Type, ev.Subtype, ev.UUID = "system", "init", s.uuid()
	for _, l := range []*[]string{&ev.Tools, &ev.SlashCommands, &ev.Skills, &ev.Agents} {
		if *l == nil {
			*l = []string{}
		}
	}
	if ev.MCPServers == nil {
		ev.MCPServers = []MCPStatus{}
	}
	if ev.Plugins == nil {
		ev.Plugins = []struct{}{}
	}
	if ev.OutputStyle == "" {
		ev.OutputStyle = "default"
	}
	if ev.APIKeySource == "" {
		ev.APIKeySource = "none"
	}
	if ev.SDKPermissionMode == "" {
		ev.SDKPermissionMode = "default"
	}
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
	ev.Type, ev.SessionID, ev.UUID = "system", s.sessionID, s.uuid()
	s.emit(ev)
}

func (s *Stream) partialEvent(ev map[string]any) {
	if s.partial {
		s.emit(streamEvent{Type: "stream_event", Event: ev, SessionID: s.sessionID, UUID: s.uuid()})
	}
}

// turnID is the current model turn's message id, starting a turn if needed.
func (s *Stream) turnID() string {
	if s.msgID == "" {
		s.msgSeq++
		s.msgID = fmt.Sprintf("msg_%d", s.msgSeq)
		s.index = 0
		m := s.apiMessage(nil, "", llm.Usage{})
		s.partialEvent(map[string]any{"type": "message_start", "message": m})
	}
	return s.msgID
}

// apiMessage is an assistant message of the current model turn (parent
// "": the main agent's) or of a sub-agent, with blocks.
func (s *Stream) apiMessage(blocks []Block, parent string, u llm.Usage) message {
	if blocks == nil {
		blocks = []Block{}
	}
	ue := UsageOf(u)
	m := message{Type: "message", Role: "assistant", Model: s.model, Content: blocks, Usage: &ue, apiNulls: &apiNulls{}}
	if parent != "" {
		s.msgSeq++
		m.ID = fmt.Sprintf("msg_%d", s.msgSeq)
		m.apiNulls.StopReason = ptr("tool_use")
		return m
	}
	m.ID = s.msgID
	if s.usage != nil {
		ue = UsageOf(*s.usage)
	}
	if s.stop != "" {
		m.apiNulls.StopReason = ptr(s.stop)
	}
	return m
}

func (s *Stream) delta(kind, text string) {
	if text == "" {
		return
	}
	s.turnID()
	if s.block != kind {
		s.closeBlock()
		s.block = kind
		start := textBlock("")
		if kind == "thinking" {
			start = thinkingBlock("")
		}
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
		s.assistant(thinkingBlock(s.thinking.String()), "")
		s.thinking.Reset()
	}
	if s.text.Len() > 0 {
		s.assistant(textBlock(s.text.String()), "")
		s.text.Reset()
	}
}

func (s *Stream) assistant(b Block, parent string) {
	if parent == "" {
		s.turnID()
	}
	m := s.apiMessage([]Block{b}, parent, llm.Usage{})
	s.emit(messageEvent{Type: "assistant", Message: m, ParentToolUseID: parentID(parent), SessionID: s.sessionID, UUID: s.uuid()})
}

// apiStopReason is the model's stop reason in the Messages API's words
// (another provider's are mapped; a response with tool calls stopped for
// them).
func apiStopReason(reason string, calls int) string {
	if calls > 0 {
		return "tool_use"
	}
	switch reason {
	case "end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal", "model_context_window_exceeded":
		return reason
	case "length":
		return "max_tokens"
	}
	return "end_turn"
}

// respond ends the model's response: its text and thinking blocks, then
// its tool calls (with partial messages streamed as tool_use blocks whose
// input is an input_json_delta), then message_delta (stop reason and
// usage) and message_stop — all before any call runs and is answered.
func (s *Stream) respond(e agent.Event) {
	if e.Usage != nil {
		u := *e.Usage
		s.usage = &u
	}
	s.turnID()
	s.stop = apiStopReason(e.StopReason, len(e.Calls))
	s.closeBlock()
	for _, c := range e.Calls {
		input := callInput(c)
		s.partialEvent(map[string]any{"type": "content_block_start", "index": s.index,
			"content_block": map[string]any{"type": "tool_use", "id": c.ID, "name": ToolName, "input": map[string]any{}}})
		s.partialEvent(map[string]any{"type": "content_block_delta", "index": s.index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		s.partialEvent(map[string]any{"type": "content_block_stop", "index": s.index})
		s.index++
	}
	s.flush()
	for _, c := range e.Calls {
		s.announce(c.ID, callInput(c), commandOf(c), "")
	}
	s.stopMessage()
}

// callInput is a call's input object as the model sent it ({} and the
// parser's complaint when it is not JSON).
func callInput(c llm.ToolCall) json.RawMessage {
	var m map[string]any
	if c.InvalidInput != "" || json.Unmarshal(c.Input, &m) != nil {
		b, _ := json.Marshal(map[string]any{"invalid_input": cmp.Or(c.InvalidInput, string(c.Input))})
		return b
	}
	b, _ := json.Marshal(m) // compact, keys in order
	return b
}

// commandOf is the command a call's input names ("" when none).
func commandOf(c llm.ToolCall) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(c.Input, &in)
	return in.Command
}

// stopMessage ends the model's message: its blocks are written, and with
// partial messages, message_delta (stop reason, usage) and message_stop follow.
func (s *Stream) stopMessage() {
	s.flush()
	if s.msgID == "" || s.stopped {
		return
	}
	s.stopped = true
	var u llm.Usage
	if s.usage != nil {
		u = *s.usage
	}
	s.partialEvent(map[string]any{"type": "message_delta", "context_management": nil,
		"delta": map[string]any{"stop_reason": cmp.Or(s.stop, "end_turn"), "stop_sequence": nil, "container": nil, "stop_details": nil},
		"usage": deltaUsage(u)})
	s.partialEvent(map[string]any{"type": "message_stop"})
}

// endTurn closes the model turn (its message and tool calls).
func (s *Stream) endTurn() {
	s.stopMessage()
	s.msgID, s.usage, s.stopped, s.stop = "", nil, false, ""
}

// announce writes a tool_use block once per call id.
func (s *Stream) announce(id string, input json.RawMessage, command, parent string) {
	if _, seen := s.parent[id]; seen {
		return
	}
	s.assistant(Block{Type: "tool_use", ID: id, Name: ToolName, Input: input}, parent)
	s.open = append(s.open, id)
	s.parent[id] = parent
	s.command[id] = command
}

func (s *Stream) toolUse(id, command, parent string) {
	if _, seen := s.parent[id]; seen {
		return
	}
	if parent == "" {
		s.flush()
	}
	in, _ := json.Marshal(map[string]any{"command": command})
	s.announce(id, in, command, parent)
}

// CallFor is the id of the open tool call running command (the latest
// such), "" when none: what a permission question is about.
func (s *Stream) CallFor(command string) string {
	for i := len(s.open) - 1; i >= 0; i-- {
		if s.command[s.open[i]] == command {
			return s.open[i]
		}
	}
	return ""
}

// toolResult writes the call's result, once: a call already answered (or
// never started) is skipped.
func (s *Stream) toolResult(id, command, parent string, res *tool.Result, took time.Duration) {
	i := slices.Index(s.open, id)
	if i < 0 {
		return
	}
	s.open = slices.Delete(s.open, i, i+1)
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
		ParentToolUseID: parentID(parent), SessionID: s.sessionID, UUID: s.uuid(), ToolUseResult: tr})
	if res != nil && res.Facts.SandboxBlocked() {
		resource, reason := res.Facts.Resource, res.Facts.Reason
		s.denials = append(s.denials, Denial{ToolName: ToolName, ToolUseID: id, ToolInput: map[string]any{"command": command}})
		s.sys(systemEvent{Subtype: "sandbox_blocked", ToolUseID: id, ParentToolUseID: parentID(parent), Command: command, Resource: resource, Reason: reason})
	}
}

// Deny records a call the host or the permission mode refused (the
// result's permission_denials).
func (s *Stream) Deny(id, command string) {
	s.denials = append(s.denials, Denial{ToolName: ToolName, ToolUseID: id, ToolInput: map[string]any{"command": command}})
}

// Event encodes one agent event.
func (s *Stream) Event(e agent.Event) {
	switch e.Kind {
	case agent.TextDelta:
		s.delta("text", e.Text)
	case agent.ThinkingDelta:
		s.delta("thinking", e.Text)
	case agent.Usage:
		s.respond(e)
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
		s.sys(systemEvent{Subtype: "task_started", TaskID: e.TaskID, ParentToolUseID: parentID(e.ParentCallID), ToolUseID: e.ParentCallID,
			TaskType: e.TaskType, SubagentType: e.TaskType, Description: e.TaskDescription})
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
		ev := systemEvent{Subtype: "api_retry", Message: e.Text, Error: "unknown"}
		if n := e.RetryNotice; n != nil {
			ev.Attempt, ev.MaxRetries, ev.RetryDelayMs = ptr(n.Attempt), ptr(n.Max), ptr(n.Wait.Milliseconds())
		}
		s.sys(ev)
	case agent.Warning:
		if e.Err != nil {
			s.sys(systemEvent{Subtype: "warning", Message: e.Err.Error()})
		}
	case agent.ContextNotice:
		s.context(e)
	case agent.HookProgress:
		s.sys(systemEvent{Subtype: "hook_progress", Text: e.Text})
	case agent.HookOutput:
		s.sys(systemEvent{Subtype: "hook_output", Hooks: e.Hooks, Text: e.Text})
	}
}

// context writes a history rewrite (compaction, offload, shrink) as the
// SDK's compact_boundary, with Synapse's action and message beside it.
func (s *Stream) context(e agent.Event) {
	c := e.Context
	if c == nil {
		s.sys(systemEvent{Subtype: "warning", Message: e.Text})
		return
	}
	trigger := "auto"
	if c.Manual {
		trigger = "manual"
	}
	s.sys(systemEvent{Subtype: "compact_boundary", Action: c.Action, Message: e.Text,
		CompactMetadata: &compactMetadata{Trigger: trigger, PreTokens: c.Before, PostTokens: c.After}})
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
// be cut off mid-way, and a call after an interrupted one never starts),
// closes the turn and writes the result event.
func (s *Stream) Finish(r Summary) {
	for len(s.open) > 0 {
		id := s.open[len(s.open)-1] // innermost (a sub-agent's) first
		res := tool.Result{Output: "[interrupted: the command was cancelled]", IsError: true, Message: "Command interrupted",
			Facts: tool.Facts{Interrupted: true, Status: "cancelled"}}
		s.toolResult(id, "", s.parent[id], &res, 0)
	}
	s.endTurn()
	out := ResultEvent{Type: "result", Subtype: "success", DurationMs: r.Took.Milliseconds(), DurationAPIMs: r.Result.APIDuration.Milliseconds(),
		NumTurns: r.Result.Turns, Result: r.Result.Text, SessionID: s.sessionID, UUID: s.uuid(), TotalCostUSD: r.Cost, CostKnown: r.Priced,
		Usage: UsageOf(r.Result.Usage), PermissionDenials: s.denials, StopReason: r.Result.StopReason, Hooks: r.Result.Hooks,
		ModelUsage: map[string]ModelUsage{}}
	if u := r.Result.Usage; s.model != "" && u != (llm.Usage{}) {
		out.ModelUsage[s.model] = ModelUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadInputTokens: u.CacheReadTokens, CacheCreationInputTokens: u.CacheCreationTokens, CostUSD: r.Cost}
	}
	if out.PermissionDenials == nil {
		out.PermissionDenials = []Denial{}
	}
	if r.Err != nil {
		out.IsError, out.Error = true, r.Err.Error()
		out.Errors = []string{r.Err.Error()}
		out.Subtype = "error_during_execution"
		var le *agent.LimitError
		if errors.As(r.Err, &le) && le.Reason == agent.StopMaxTurns {
			out.Subtype = "error_max_turns"
		}
	}
	s.denials = nil
	_ = s.enc.Encode(out)
}
