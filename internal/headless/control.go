package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// SyncWriter writes whole lines to w from several goroutines: the event
// stream and the control protocol share stdout, and a line must never be
// cut by another.
type SyncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewSyncWriter wraps w.
func NewSyncWriter(w io.Writer) *SyncWriter { return &SyncWriter{w: w} }

// Write writes p in one piece.
func (s *SyncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Init is what the host's initialize request set up.
type Init struct {
	SystemPrompt       string   // replaces the built-in prompt ("": keep it)
	AppendSystemPrompt string   // added after it
	Hooks              []string // hook events the host registered callbacks for (HookMatchers)
	Agents             []string // the names of the custom sub-agents the host defined (AgentDefs)
	SDKMCPServers      []string // the host's in-process MCP servers (served through mcp_message: sdkmcp.go)
	MCPServers         []string // MCP servers sent in initialize instead of --mcp-config (not started here)

	// HookMatchers are the host's hook callbacks by event (HookConfig
	// turns them into hooks that call them).
	HookMatchers map[string][]HookMatcher
	// AgentDefs are the host's custom sub-agents, sorted by name.
	AgentDefs []AgentDefinition
}

// Handlers are what the control requests do; cli wires them to the agent.
// Each may be nil: the request is then answered with an error.
type Handlers struct {
	// Initialize applies the host's setup and returns the response payload.
	Initialize func(Init) (map[string]any, error)
	// Interrupt cancels the running turn (a no-op between turns).
	Interrupt func()
	// SetPermissionMode switches the mode (the SDK's names or Synapse's).
	SetPermissionMode func(mode string) error
	// SetModel switches the model ("" or "default": the session's first).
	SetModel func(model string) error
	// MCPStatus lists the MCP servers (the SDK's McpServerStatus rows).
	MCPStatus func() []MCPStatus
	// SetMCPServers replaces the MCP servers the host added at run time
	// (mcp_set_servers) with servers (name → the SDK's McpServerConfig).
	SetMCPServers func(servers map[string]json.RawMessage) (MCPSetResult, error)
	// CallFor is the tool_use id of the running call of a command.
	CallFor func(command string) string
	// Denied records a call the host refused (the result's permission_denials).
	Denied func(id, command string)
	// Begin, when set, is called before the first line Control writes for
	// the host, except initialize's answer, whose handler calls it itself
	// once the host's setup is applied (system/init then shows the host's
	// agents), and when stdin ends. It must be idempotent.
	Begin func()
}

// Control speaks the Agent SDK's control protocol on a stream-json
// session: it reads stdin (user messages, control requests, the host's
// responses to ours), answers the host's requests through Handlers, and
// is the gate's tool.Asker, whose questions become can_use_tool requests
// the host's canUseTool answers.
type Control struct {
	out  io.Writer // a SyncWriter shared with the event stream
	errw io.Writer
	h    Handlers

	mu      sync.Mutex
	queue   []string      // user messages not yet taken
	more    chan struct{} // signalled when the queue grows or input ends
	done    bool          // stdin ended
	readErr error
	pending map[string]chan map[string]any // our requests awaiting the host
	seq     int
	silent  atomic.Bool // dontAsk: the host is not asked
	inited  atomic.Bool // the host sent initialize
	hookOK  sync.Map    // tool_use ids a PreToolUse hook callback allowed (hooks.go)

	mcpIn mcpReceivers // sessions with the host's in-process MCP servers (sdkmcp.go)
}

// Initialized reports whether the host spoke the control protocol (sent
// initialize): such a host reads each turn's outcome from its result.
func (c *Control) Initialized() bool { return c.inited.Load() }

// SetHandlers replaces the handlers (set before Serve: the agent they
// drive is built after the Control its gate asks through).
func (c *Control) SetHandlers(h Handlers) {
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
}

// handlers is the current Handlers.
func (c *Control) handlers() Handlers {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

// SetAsking says whether questions go to the host (false: the dontAsk
// mode, which refuses what would be asked).
func (c *Control) SetAsking(on bool) { c.silent.Store(!on) }

// NewControl returns a Control writing to out (share it with the
// Stream: NewSyncWriter) and reporting bad input on errw.
func NewControl(out, errw io.Writer, h Handlers) *Control {
	return &Control{out: out, errw: errw, h: h, more: make(chan struct{}, 1), pending: map[string]chan map[string]any{}}
}

// maxLine bounds one stdin line (a prompt with pasted files is large, a
// runaway writer is not served forever).
const maxLine = 16 << 20

// Serve reads stdin until it ends (or fails), then wakes Next and denies
// every question still waiting for the host. Run it in its own goroutine.
func (c *Control) Serve(in io.Reader) {
	r := bufio.NewReaderSize(in, 64*1024)
	var err error
	for n := 1; ; n++ {
		var line []byte
		line, err = readLine(r)
		if len(line) > 0 {
			c.handle(n, line)
		}
		if err != nil {
			break
		}
	}
	c.begin()
	c.mu.Lock()
	c.done = true
	if !errors.Is(err, io.EOF) {
		c.readErr = fmt.Errorf("read stdin: %w", err)
	}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	c.signal()
}

// errLineTooLong: a stdin line past maxLine.
var errLineTooLong = fmt.Errorf("a stdin line is longer than %d bytes", maxLine)

// readLine reads one line without its newline; a line past maxLine is
// skipped whole and reported.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if len(line)+len(chunk) > maxLine {
			for isPrefix && err == nil {
				_, isPrefix, err = r.ReadLine()
			}
			if err != nil {
				return nil, err
			}
			return []byte("\x00" + errLineTooLong.Error()), nil
		}
		line = append(line, chunk...)
		if err != nil || !isPrefix {
			return line, err
		}
	}
}

func (c *Control) signal() {
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// Next returns the next user message's text; false when stdin has ended
// and every message was taken, or ctx is done. err is a read error of stdin.
func (c *Control) Next(ctx context.Context) (string, bool, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			t := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return t, true, nil
		}
		if c.done {
			err := c.readErr
			c.mu.Unlock()
			return "", false, err
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-ctx.Done():
			return "", false, nil
		}
	}
}

// note reports a skipped stdin line on stderr.
func (c *Control) note(n int, format string, a ...any) {
	fmt.Fprintf(c.errw, "synapse: stdin line %d skipped: %s\n", n, textutil.Sanitize(fmt.Sprintf(format, a...)))
}

// envelope is any stdin line.
type envelope struct {
	Type      string          `json:"type"`
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`
	Response  json.RawMessage `json:"response"`
}

// begin calls Handlers.Begin.
func (c *Control) begin() {
	if b := c.handlers().Begin; b != nil {
		b()
	}
}

// isInitialize reports whether a control request's subtype is initialize.
func isInitialize(raw json.RawMessage) bool {
	var r struct {
		Subtype string `json:"subtype"`
	}
	return json.Unmarshal(raw, &r) == nil && r.Subtype == "initialize"
}

func (c *Control) handle(n int, line []byte) {
	var env envelope
	var perr error
	if line[0] != 0 {
		perr = json.Unmarshal(line, &env)
	}
	if env.Type != "control_request" || !isInitialize(env.Request) {
		c.begin() // initialize calls it once the host's setup is applied
	}
	if line[0] == 0 {
		c.note(n, "%s", line[1:])
		return
	}
	if strings.TrimSpace(string(line)) == "" {
		return
	}
	if perr != nil {
		c.note(n, `not a JSON object (%v); send {"type":"user","message":{"role":"user","content":"…"}} or a control_request`, perr)
		return
	}
	switch env.Type {
	case "user":
		text, err := InputText(line)
		if err != nil {
			c.note(n, "%v", err)
			return
		}
		c.mu.Lock()
		c.queue = append(c.queue, text)
		c.mu.Unlock()
		c.signal()
	case "control_request":
		c.request(n, env)
	case "control_response":
		c.response(n, env.Response)
	case "control_cancel_request":
		c.mu.Lock()
		if ch, ok := c.pending[env.RequestID]; ok {
			close(ch)
			delete(c.pending, env.RequestID)
		}
		c.mu.Unlock()
	case "keep_alive", "update_environment_variables":
	default:
		c.note(n, "type %q: only user messages and the control protocol are read", env.Type)
	}
}

// send writes one line.
func (c *Control) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_, _ = c.out.Write(append(b, '\n'))
}

func (c *Control) reply(id string, payload map[string]any, err error) {
	if err != nil {
		c.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": id, "error": err.Error()}})
		return
	}
	if payload == nil {
		payload = map[string]any{}
	}
	c.send(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": payload}})
}

// request answers one of the host's control requests; an unknown subtype
// gets an error response, never silence.
func (c *Control) request(n int, env envelope) {
	var req struct {
		Subtype            string                     `json:"subtype"`
		SystemPrompt       json.RawMessage            `json:"systemPrompt"`
		AppendSystemPrompt string                     `json:"appendSystemPrompt"`
		Hooks              map[string]json.RawMessage `json:"hooks"`
		Agents             map[string]json.RawMessage `json:"agents"`
		SDKMCPServers      []string                   `json:"sdkMcpServers"`
		MCPServers         map[string]json.RawMessage `json:"mcpServers"`
		Mode               string                     `json:"mode"`
		Model              *string                    `json:"model"`
		Servers            map[string]json.RawMessage `json:"servers"`
	}
	if env.RequestID == "" {
		c.note(n, "a control_request without a request_id")
		return
	}
	if err := json.Unmarshal(env.Request, &req); err != nil {
		c.begin()
		c.reply(env.RequestID, nil, fmt.Errorf("malformed control request: %w", err))
		return
	}
	missing := fmt.Errorf("%s is not available in this session", req.Subtype)
	h := c.handlers()
	switch req.Subtype {
	case "initialize":
		if h.Initialize == nil {
			c.begin()
			c.reply(env.RequestID, nil, missing)
			return
		}
		in := Init{AppendSystemPrompt: req.AppendSystemPrompt, SDKMCPServers: req.SDKMCPServers}
		in.SystemPrompt = promptText(req.SystemPrompt)
		for k := range req.Hooks {
			in.Hooks = append(in.Hooks, k)
		}
		in.HookMatchers = parseHookMatchers(req.Hooks)
		defs, err := parseAgents(req.Agents)
		if err != nil {
			c.begin()
			c.reply(env.RequestID, nil, fmt.Errorf("initialize: %w", err))
			return
		}
		in.AgentDefs = defs
		for _, d := range defs {
			in.Agents = append(in.Agents, d.Name)
		}
		for k := range req.MCPServers {
			in.MCPServers = append(in.MCPServers, k)
		}
		resp, err := h.Initialize(in)
		c.begin() // the handler's failure is answered after system/init too
		c.inited.Store(err == nil)
		c.reply(env.RequestID, resp, err)
	case "interrupt":
		if h.Interrupt != nil {
			h.Interrupt()
		}
		c.reply(env.RequestID, map[string]any{"still_queued": []string{}}, nil)
	case "set_permission_mode":
		if h.SetPermissionMode == nil {
			c.reply(env.RequestID, nil, missing)
			return
		}
		c.reply(env.RequestID, nil, h.SetPermissionMode(req.Mode))
	case "set_model":
		if h.SetModel == nil {
			c.reply(env.RequestID, nil, missing)
			return
		}
		m := ""
		if req.Model != nil {
			m = *req.Model
		}
		c.reply(env.RequestID, nil, h.SetModel(m))
	case "mcp_status":
		rows := []MCPStatus{}
		if h.MCPStatus != nil {
			rows = append(rows, h.MCPStatus()...)
		}
		c.reply(env.RequestID, map[string]any{"mcpServers": rows}, nil)
	case "mcp_message":
		c.mcpMessage(env.RequestID, env.Request)
	case "mcp_set_servers":
		if h.SetMCPServers == nil {
			c.reply(env.RequestID, nil, missing)
			return
		}
		// Answered when the servers have connected, off the reading
		// goroutine: the host's in-process servers connect through
		// mcp_message answers that this goroutine reads.
		go func() {
			res, err := h.SetMCPServers(req.Servers)
			if err != nil {
				c.reply(env.RequestID, nil, err)
				return
			}
			c.reply(env.RequestID, res.payload(), nil)
		}()
	default:
		c.reply(env.RequestID, nil, fmt.Errorf("unsupported control request subtype %q: synapse answers initialize, interrupt, set_permission_mode, set_model, mcp_status, mcp_message and mcp_set_servers", req.Subtype))
	}
}

// promptText is initialize's systemPrompt: a string, or parts to join.
func promptText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	if json.Unmarshal(raw, &parts) == nil {
		return strings.Join(parts, "\n\n")
	}
	return ""
}

// response delivers the host's answer to one of our requests.
func (c *Control) response(n int, raw json.RawMessage) {
	var r struct {
		Subtype   string         `json:"subtype"`
		RequestID string         `json:"request_id"`
		Response  map[string]any `json:"response"`
		Error     string         `json:"error"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		c.note(n, "malformed control_response: %v", err)
		return
	}
	c.mu.Lock()
	ch, ok := c.pending[r.RequestID]
	delete(c.pending, r.RequestID)
	c.mu.Unlock()
	if !ok {
		c.note(n, "control_response to %q, which no request of synapse is waiting for", r.RequestID)
		return
	}
	if r.Subtype == "error" {
		fmt.Fprintf(c.errw, "synapse: the host answered control request %s with an error: %s (a question is denied, a hook callback decides nothing)\n", textutil.Sanitize(r.RequestID), textutil.Sanitize(r.Error))
		close(ch)
		return
	}
	ch <- r.Response
}

// ask sends a control request to the host and waits for its answer; nil
// when the host failed, cancelled, went away, or ctx ended first.
func (c *Control) ask(ctx context.Context, req map[string]any) map[string]any {
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return nil
	}
	c.seq++
	id := "synapse-" + strconv.Itoa(c.seq)
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"type": "control_request", "request_id": id, "request": req})
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		c.send(map[string]any{"type": "control_cancel_request", "request_id": id})
		return nil
	}
}

// Ask implements tool.Asker: AskRewrite, where an answer that changes
// the command is a refusal (the callers that cannot run another command).
func (c *Control) Ask(ctx context.Context, q tool.Question) tool.Answer {
	a, in := c.AskRewrite(ctx, q)
	if in != nil {
		return tool.AnswerDeny
	}
	return a
}

var _ tool.Rewriter = (*Control)(nil)

// AskRewrite implements tool.Rewriter: the question goes to the host's
// canUseTool as a can_use_tool request about the Bash call it concerns.
// "allow" runs it once; "allow" with updatedPermissions remembers it (the
// ask mode's "always" for its words, a sandbox grant for the session, or
// permanently when the host saves it to a settings file); "deny" refuses,
// and with interrupt:true also stops the turn. "allow" with an
// updatedInput whose command differs (or that restarts the shell) returns
// that input: the gate has the call run it instead, checked and asked
// about again.
func (c *Control) AskRewrite(ctx context.Context, q tool.Question) (tool.Answer, *tool.Input) {
	if c.silent.Load() {
		return tool.Unanswered, nil
	}
	command := q.Command
	input := map[string]any{"command": command}
	var reason, blocked string
	var suggestions []any
	switch q.Kind {
	case tool.AskGrant:
		blocked = q.Resource
		reason = "the sandbox blocked " + q.Resource
		if q.Reason != "" {
			reason += ": " + q.Reason
		}
		suggestions = []any{map[string]any{"type": "addDirectories", "directories": []string{q.Resource}, "destination": "session"}}
	case tool.AskRun:
		var why []string
		for _, r := range q.Reasons {
			why = append(why, r.Word+" "+r.Why)
		}
		reason = "the command may write outside the scratch list: " + strings.Join(why, "; ")
		if q.Hook != "" {
			reason = "a PreToolUse hook asks for approval: " + q.Hook
		}
		var rules []any
		for _, w := range q.Words {
			rules = append(rules, map[string]any{"toolName": ToolName, "ruleContent": w + ":*"})
		}
		suggestions = []any{map[string]any{"type": "addRules", "rules": rules, "behavior": "allow", "destination": "session"}}
	case tool.AskClone:
		command = "skill:import " + q.URL
		input = map[string]any{"command": command, "url": q.URL}
		reason = "the agent asks to clone " + q.URL + " on the host"
	case tool.AskInstall:
		input["skills"] = q.Skills
		input["source"] = q.Source
		reason = q.Text
	}
	h := c.handlers()
	id := ""
	if h.CallFor != nil {
		call := q.Command
		if q.Original != "" {
			call = q.Original // the host changed the call's command before
		}
		id = h.CallFor(call)
	}
	if q.Kind == tool.AskRun && q.Original == "" && q.Hook == "" && c.hookAllowed(id) {
		return tool.AnswerOnce, nil
	}
	req := map[string]any{"subtype": "can_use_tool", "tool_name": ToolName, "input": input, "tool_use_id": id,
		"decision_reason": reason, "permission_suggestions": suggestions}
	if suggestions == nil {
		req["permission_suggestions"] = []any{}
	}
	if blocked != "" {
		req["blocked_path"] = blocked
	}
	r := c.ask(ctx, req)
	answer, edited := decide(q, command, r)
	if answer == tool.AnswerDeny {
		if h.Denied != nil {
			h.Denied(id, command)
		}
		if stop, _ := r["interrupt"].(bool); stop && h.Interrupt != nil {
			h.Interrupt()
		}
		if msg, _ := r["message"].(string); msg != "" {
			fmt.Fprintf(c.errw, "synapse: the host denied %s: %s\n", textutil.Sanitize(command), textutil.Sanitize(msg))
		}
	}
	return answer, edited
}

// decide maps the host's PermissionResult onto the gate's answer, and an
// updatedInput that changes a command (AskRun, AskGrant) onto the input to
// run instead; a changed command of another question is refused (a
// clone's updatedInput is not a command to run and is ignored).
func decide(q tool.Question, command string, r map[string]any) (tool.Answer, *tool.Input) {
	if r == nil || r["behavior"] != "allow" {
		return tool.AnswerDeny, nil
	}
	if in, ok := r["updatedInput"].(map[string]any); ok && q.Kind != tool.AskClone {
		cmd, hasCmd := in["command"].(string)
		restart, _ := in["restart"].(bool)
		if !hasCmd {
			cmd = command
		}
		if restart || strings.TrimSpace(cmd) != strings.TrimSpace(command) {
			if q.Kind != tool.AskRun && q.Kind != tool.AskGrant {
				return tool.AnswerDeny, nil
			}
			return tool.AnswerOnce, &tool.Input{Command: cmd, Restart: restart}
		}
	}
	updates, _ := r["updatedPermissions"].([]any)
	if len(updates) == 0 {
		return tool.AnswerOnce, nil
	}
	switch q.Kind {
	case tool.AskRun:
		return tool.AnswerAlways, nil
	case tool.AskGrant:
		for _, u := range updates {
			if m, ok := u.(map[string]any); ok {
				switch m["destination"] {
				case "userSettings", "projectSettings", "localSettings":
					return tool.AnswerPermanent, nil
				}
			}
		}
		return tool.AnswerSession, nil
	}
	return tool.AnswerOnce, nil
}
