package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	sessions "github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// session is one ACP session: an agent and the tool calls it has open.
type session struct {
	srv    *Server
	id     string
	g      *app.Agent
	perm   *tool.Permissions // the permission gate: mode, grants; it asks through the session
	models []modelChoice     // the models the session may switch to (offerModels)

	mu      sync.Mutex
	cancel  context.CancelFunc  // the running prompt's, nil when idle
	idle    chan struct{}       // closed when the running prompt has finished
	calls   map[string]openCall // started, not yet ended, by id
	current string              // the call started last (questions name it when the command does not tell)
	// planPrompted: the last prompt ran in plan mode.
	planPrompted bool
	// commandsKey is the slash commands the client was last told
	// (commandsSent: it was told).
	commandsKey  string
	commandsSent bool

	// liveMu orders a call's live output updates before its final one:
	// a flush holds it while sending, and toolEnd takes the call out under it.
	liveMu sync.Mutex
	live   map[string]*liveCall
}

// start makes the prompt whose run cancel ends the session's running one.
// A prompt still running is cancelled and waited for: the SDK has already
// cancelled its context (a new session/prompt supersedes the running one),
// so refusing the new prompt would lose both. It returns false when ctx
// ends first (a newer prompt superseded this one while it waited).
func (s *session) start(ctx context.Context, cancel context.CancelFunc) bool {
	for {
		s.mu.Lock()
		if s.cancel == nil {
			s.cancel, s.idle = cancel, make(chan struct{})
			s.mu.Unlock()
			return true
		}
		prev, idle := s.cancel, s.idle
		s.mu.Unlock()
		prev()
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}

// finish ends the prompt: a call that got no end (the run was cancelled
// under it) is reported failed, so that every tool call the client saw
// has a final status.
func (s *session) finish(runErr error) {
	s.mu.Lock()
	s.cancel = nil
	if s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
	open := s.calls
	s.calls = map[string]openCall{}
	s.current = ""
	s.mu.Unlock()
	for id := range open {
		msg := "cancelled"
		if runErr != nil && !errors.Is(runErr, agent.ErrInterrupted) {
			msg = runErr.Error()
		}
		if out := s.endLive(id); out != "" {
			msg = out + "\n\n" + msg
		}
		s.send(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(msg))}),
			sdk.WithUpdateRawOutput(rawOutput("", true, runErr == nil || errors.Is(runErr, agent.ErrInterrupted)))))
	}
}

// rawOutput is a call's rawOutput: the output as the model read it, whether
// it failed and, for a call the run's cancel stopped, status "cancelled"
// (the protocol's statuses have no such one: the call is "failed").
func rawOutput(out string, isError, cancelled bool) map[string]any {
	raw := map[string]any{"output": out, "isError": isError}
	if cancelled {
		raw["status"] = agent.CancelledStatus
	}
	return raw
}

// greet tells the client what a session offers beyond its answer: the
// slash commands and the context's usage.
func (s *session) greet() {
	s.sendCommands()
	s.sendUsage()
}

// hasSkill reports whether name is an installed skill.
func (s *session) hasSkill(name string) bool {
	for _, sk := range s.skills() {
		if sk.Name == name {
			return true
		}
	}
	return false
}

// transcript is the saved session as it happened (its messages and what
// was shown besides them); the conversation alone when the file cannot be
// read.
func (s *session) transcript() []sessions.TranscriptEntry {
	tr, err := s.srv.opts.App.SessionStore(func(error) {}).Transcript(s.id)
	if err == nil {
		return tr
	}
	fmt.Fprintln(s.srv.opts.Log, "synapse acp: warning: replay from the conversation only:", err)
	h := s.g.Runner.History()
	tr = make([]sessions.TranscriptEntry, len(h))
	for i := range h {
		tr[i] = sessions.TranscriptEntry{Message: &h[i]}
	}
	return tr
}

func (s *session) cancelRun() {
	s.mu.Lock()
	c := s.cancel
	s.mu.Unlock()
	if c != nil {
		c()
	}
}

func (s *session) close() {
	s.cancelRun()
	if err := s.g.Close(); err != nil {
		fmt.Fprintln(s.srv.opts.Log, "synapse acp: close session:", err)
	}
}

func (s *session) send(u sdk.SessionUpdate) {
	err := s.srv.conn.SessionUpdate(s.srv.ctx, sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
	if err != nil && s.srv.ctx.Err() == nil {
		fmt.Fprintln(s.srv.opts.Log, "synapse acp: send update:", err)
	}
}

// event turns one agent event into session updates. Events arrive one at a
// time (the runner serialises them).
func (s *session) event(e agent.Event) {
	switch e.Kind {
	case agent.TextDelta:
		if e.Text != "" {
			s.send(sdk.UpdateAgentMessageText(e.Text))
		}
	case agent.ThinkingDelta:
		if e.Text != "" {
			s.send(sdk.UpdateAgentThoughtText(e.Text))
		}
	case agent.ToolStart:
		s.toolStart(e.CallID, e.Command, e.Route)
	case agent.ToolOutput:
		s.toolOutput(e.CallID, e.Text)
	case agent.ToolEnd:
		s.toolEnd(e.CallID, e.Result)
	case agent.TodoChange:
		s.send(plan(e.Todos))
	case agent.TaskToolStart:
		// A sub-agent's command shows inside its task call.
		s.send(sdk.UpdateToolCall(sdk.ToolCallId(e.TaskID), sdk.WithUpdateContent([]sdk.ToolCallContent{
			sdk.ToolContent(sdk.TextBlock("sub-agent runs: " + e.Command))})))
	case agent.Warning:
		if e.Err != nil {
			fmt.Fprintln(s.srv.opts.Log, "synapse acp: warning:", e.Err)
		}
	}
}

// openCall is a tool call started and not yet ended.
type openCall struct {
	command string
	route   router.Route
}

func (s *session) toolStart(id, command string, route router.Route) {
	if route.Name == "" { // an event made without its route (tests)
		route = router.Classify(command)
	}
	kind, path := classify(route, command)
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
		sdk.WithStartRawInput(map[string]any{"command": command})}
	if path != "" {
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: s.abs(path)}}))
	}
	s.mu.Lock()
	s.calls[id] = openCall{command, route}
	s.current = id
	s.mu.Unlock()
	s.send(sdk.StartToolCall(sdk.ToolCallId(id), title(command), opts...))
}

// toolOutput streams a running command's output into its call: the tail
// at once when the last update is liveInterval old, else by a timer then.
func (s *session) toolOutput(id, chunk string) {
	if chunk == "" {
		return
	}
	s.mu.Lock()
	_, open := s.calls[id]
	s.mu.Unlock()
	if !open {
		return
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	lc := s.live[id]
	if lc == nil {
		lc = &liveCall{}
		s.live[id] = lc
	}
	lc.tail.add(chunk)
	wait := liveInterval - time.Since(lc.sent)
	if wait <= 0 {
		s.flushLive(id, lc)
		return
	}
	if lc.timer == nil {
		lc.timer = time.AfterFunc(wait, func() {
			s.liveMu.Lock()
			defer s.liveMu.Unlock()
			if s.live[id] == lc { // not ended meanwhile
				s.flushLive(id, lc)
			}
		})
	}
}

// flushLive sends a call's output so far; liveMu is held.
func (s *session) flushLive(id string, lc *liveCall) {
	if lc.timer != nil {
		lc.timer.Stop()
		lc.timer = nil
	}
	lc.sent = time.Now()
	s.send(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(lc.tail.block()))})))
}

// endLive stops a call's live output (no update of it follows) and
// returns what was shown of it (a code block, "" when nothing was).
func (s *session) endLive(id string) string {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	lc := s.live[id]
	if lc == nil {
		return ""
	}
	delete(s.live, id)
	if lc.timer != nil {
		lc.timer.Stop()
	}
	return lc.tail.block()
}

func (s *session) toolEnd(id string, res *tool.Result) {
	s.mu.Lock()
	delete(s.calls, id)
	if s.current == id {
		s.current = ""
	}
	s.mu.Unlock()
	shown := s.endLive(id)
	status := sdk.ToolCallStatusCompleted
	var content []sdk.ToolCallContent
	var raw any
	if res != nil {
		if res.IsError || res.Facts.SandboxBlocked() {
			status = sdk.ToolCallStatusFailed
		}
		// write and edit report the file before and after (bounded); the
		// diff comes from there, not from reading the workspace again.
		if ch := res.Change; ch != nil && status == sdk.ToolCallStatusCompleted {
			content = append(content, diffContent(ch.Path, ch.Old, ch.New, ch.Created))
		}
		var out string
		switch {
		case strings.TrimSpace(res.Output) != "":
			out = codeBlock(textutil.Sanitize(strings.Trim(res.Output, "\n")))
		case res.Message != "":
			// A cancelled command has no result output: what it printed
			// stays, with why it ended.
			out = strings.TrimSpace(shown + "\n\n" + textutil.Sanitize(res.Message))
		}
		if out != "" {
			content = append(content, sdk.ToolContent(sdk.TextBlock(out)))
		}
		raw = rawOutput(res.Output, res.IsError, res.Facts.Status == agent.CancelledStatus)
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if len(content) > 0 {
		opts = append(opts, sdk.WithUpdateContent(content))
	}
	if raw != nil {
		opts = append(opts, sdk.WithUpdateRawOutput(raw))
	}
	s.send(sdk.UpdateToolCall(sdk.ToolCallId(id), opts...))
}

// abs resolves a command's path against the agent shell's directory.
func (s *session) abs(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.g.Sandbox.Cwd(), p)
	}
	return filepath.Clean(p)
}

// classify names a command's kind for the client's icon and, for file
// commands, the path it works on (as the agent shell reads it). The kind
// comes from the route the tool event carries; native commands are known by
// their program's name.
func classify(route router.Route, command string) (sdk.ToolKind, string) {
	switch route.Family {
	case router.FamilyNative:
		switch route.Name {
		case "grep", "rg", "find":
			return sdk.ToolKindSearch, ""
		case "curl", "wget":
			return sdk.ToolKindFetch, ""
		case "rm":
			return sdk.ToolKindDelete, ""
		case "mv":
			return sdk.ToolKindMove, ""
		}
		return sdk.ToolKindExecute, ""
	case router.FamilyTask:
		return sdk.ToolKindThink, ""
	case router.FamilySearch:
		return sdk.ToolKindSearch, ""
	case router.FamilyBuiltin:
		switch route.Name {
		case registry.Read:
			path, _ := agentsh.FileArg(command)
			return sdk.ToolKindRead, path
		case registry.Write, registry.Edit:
			path, _ := agentsh.FileArg(command)
			return sdk.ToolKindEdit, path
		case registry.TodoWrite:
			return sdk.ToolKindThink, ""
		}
		return sdk.ToolKindExecute, ""
	}
	return sdk.ToolKindOther, "" // skill management, MCP tools, skill scripts
}

// title is the command's first line, bounded.
func title(command string) string {
	t := strings.TrimSpace(command)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[:i] + " …"
	}
	return textutil.Truncate(t, 120)
}

func plan(items []todo.Item) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(items))
	for _, it := range items {
		st := sdk.PlanEntryStatusPending
		switch it.Status {
		case todo.InProgress:
			st = sdk.PlanEntryStatusInProgress
		case todo.Completed:
			st = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: it.Content, Priority: sdk.PlanEntryPriorityMedium, Status: st})
	}
	return sdk.UpdatePlan(entries...)
}

// replay sends a loaded session to the client as it happened: user and
// agent messages, thinking, each tool call with its result (a write's or
// edit's diff as the live run sent it), the calls of a step the user
// cancelled, and the todo list.
func (s *session) replay(tr []sessions.TranscriptEntry) {
	changes := map[string]sessions.FileChange{}
	for _, e := range tr {
		if e.Shown != nil {
			for _, c := range e.Shown.Changes {
				changes[c.CallID] = c
			}
		}
	}
	for _, e := range tr {
		switch {
		case e.Message != nil:
			s.replayMessage(*e.Message, changes)
		case e.Shown.Dropped != nil:
			s.replayDropped(*e.Shown.Dropped)
		}
	}
	if todos := s.g.Runner.Todos(); todos != nil {
		if items := todos.Items(); len(items) > 0 {
			s.send(plan(items))
		}
	}
}

func (s *session) replayMessage(m llm.Message, changes map[string]sessions.FileChange) {
	switch m.Role {
	case llm.RoleUser:
		for _, img := range m.Images {
			s.send(sdk.UpdateUserMessage(sdk.ImageBlock(base64.StdEncoding.EncodeToString(img.Data), img.MediaType)))
		}
		// Notes of the agent's own (a stop hook's objection, why the
		// previous request has no answer) are not the person's words.
		if m.Text != "" && !strings.HasPrefix(m.Text, agent.StopHookNotePrefix) && !agent.IsUnfinishedNote(m.Text) {
			s.send(sdk.UpdateUserMessageText(typedText(m.Text)))
		}
	case llm.RoleAssistant:
		s.replayAssistant(m)
	case llm.RoleTool:
		var ch *sessions.FileChange
		if c, ok := changes[m.ToolCallID]; ok {
			ch = &c
		}
		s.replayResult(m.ToolCallID, m.Text, m.IsError, ch)
	}
}

// replayAssistant sends an assistant message: its thinking, its text and
// the start of each of its calls.
func (s *session) replayAssistant(m llm.Message) {
	for _, th := range m.Thinking {
		if th.Text != "" {
			s.send(sdk.UpdateAgentThoughtText(th.Text))
		}
	}
	if m.Text != "" {
		s.send(sdk.UpdateAgentMessageText(m.Text))
	}
	for _, c := range m.ToolCalls {
		s.replayStart(c)
	}
}

func (s *session) replayStart(c llm.ToolCall) {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(c.Input, &in)
	kind, path := classify(router.Classify(in.Command), in.Command)
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartRawInput(map[string]any{"command": in.Command})}
	if path != "" {
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: s.abs(path)}}))
	}
	s.send(sdk.StartToolCall(sdk.ToolCallId(c.ID), title(in.Command), opts...))
}

// replayResult ends a replayed call as the live run did: its diff, then
// its output.
func (s *session) replayResult(id, text string, isError bool, ch *sessions.FileChange) {
	st := sdk.ToolCallStatusCompleted
	if isError {
		st = sdk.ToolCallStatusFailed
	}
	var content []sdk.ToolCallContent
	if ch != nil && !isError {
		content = append(content, diffContent(ch.Path, ch.Old, ch.New, ch.Created))
	}
	// Saved as the command printed it: escapes are removed here as in the
	// live update.
	content = append(content, sdk.ToolContent(sdk.TextBlock(codeBlock(textutil.Sanitize(strings.Trim(text, "\n"))))))
	s.send(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(st), sdk.WithUpdateContent(content),
		sdk.WithUpdateRawOutput(rawOutput(text, isError, false))))
}

// replayDropped sends a step the user's cancel dropped from the
// conversation as the live run showed it: its text, and each call that
// started, finished or cancelled (failed, with what it printed and why it
// ended); calls that never started were never shown.
func (s *session) replayDropped(d sessions.DroppedStep) {
	m := d.Message
	m.ToolCalls = nil
	s.replayAssistant(m)
	state := map[string]sessions.DroppedCall{}
	for _, c := range d.Calls {
		state[c.ID] = c
	}
	for _, c := range d.Message.ToolCalls {
		dc, ok := state[c.ID]
		if !ok || dc.State == sessions.CallNotStarted {
			continue
		}
		s.replayStart(c)
		if dc.State == sessions.CallFinished {
			s.replayResult(c.ID, dc.Output, dc.IsError, dc.Change)
			continue
		}
		// The live run showed the output's tail, then why it ended.
		msg := agent.CancelledMessage
		var t tail
		t.add(dc.Output)
		if shown := t.block(); shown != "" {
			msg = shown + "\n\n" + msg
		}
		s.send(sdk.UpdateToolCall(sdk.ToolCallId(c.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(msg))}),
			sdk.WithUpdateRawOutput(rawOutput(dc.Output, true, true))))
	}
}

// diffContent is a write's or edit's change as diff content: the file
// before (none when it was created) and after.
func diffContent(path, old, new string, created bool) sdk.ToolCallContent {
	d := sdk.ToolDiffContent(path, new)
	if !created {
		d.Diff.OldText = &old
	}
	return d
}

// readFile is a linked file's text as the agent's own `read` shows it
// (line numbers, bounded): the sandbox policy decides what may be read.
func (s *session) readFile(ctx context.Context, path string) (string, error) {
	res := s.g.Tool.Agent.Run(ctx, fmt.Sprintf("read %s --limit %d", cmdline.Quote(path), fileLines))
	switch {
	case res.Blocked:
		return "", fmt.Errorf("the sandbox does not allow reading it (%s)", res.BlockedReason)
	case res.ExitCode != 0:
		return "", errors.New(strings.TrimSpace(textutil.Sanitize(res.Stderr + res.Stdout)))
	}
	return res.Stdout, nil
}

// modeNotePrefix starts the note a prompt after plan mode begins with.
const modeNotePrefix = "[The permission mode is now "

// typedText is a saved prompt as the person sent it: without the plan-mode
// wrapping, the mode note, the skill-search instruction and hook context.
func typedText(text string) string {
	text = tool.UnwrapPlanPrompt(agent.TypedPrompt(text))
	if strings.HasPrefix(text, modeNotePrefix) {
		if _, rest, ok := strings.Cut(text, "]\n\n"); ok {
			text = rest
		}
	}
	return unwrapSkillPrompt(text)
}

// modeNote is, when the previous prompt ran in plan mode and this one
// runs in m, another, a note for the model that the workspace is writable
// again (its history says otherwise).
func (s *session) modeNote(m tool.Mode) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	note := ""
	if s.planPrompted && m != tool.ModePlan {
		note = fmt.Sprintf(modeNotePrefix+"%s: plan mode has ended and the workspace is writable again.]\n\n", m)
	}
	s.planPrompted = m == tool.ModePlan
	return note
}
