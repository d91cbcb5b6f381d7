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
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(msg))})))
	}
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
			d := sdk.ToolDiffContent(ch.Path, ch.New)
			if !ch.Created {
				old := ch.Old
				d.Diff.OldText = &old
			}
			content = append(content, d)
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
		raw = map[string]any{"output": res.Output, "isError": res.IsError}
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

// replay sends a loaded conversation to the client: user and agent
// messages, thinking, and each tool call with its result.
func (s *session) replay(history []llm.Message) {
	for _, m := range history {
		switch m.Role {
		case llm.RoleUser:
			for _, img := range m.Images {
				s.send(sdk.UpdateUserMessage(sdk.ImageBlock(base64.StdEncoding.EncodeToString(img.Data), img.MediaType)))
			}
			if m.Text != "" && !strings.HasPrefix(m.Text, agent.StopHookNotePrefix) {
				s.send(sdk.UpdateUserMessageText(typedText(m.Text)))
			}
		case llm.RoleAssistant:
			for _, th := range m.Thinking {
				if th.Text != "" {
					s.send(sdk.UpdateAgentThoughtText(th.Text))
				}
			}
			if m.Text != "" {
				s.send(sdk.UpdateAgentMessageText(m.Text))
			}
			for _, c := range m.ToolCalls {
				var in struct {
					Command string `json:"command"`
				}
				_ = json.Unmarshal(c.Input, &in)
				kind, _ := classify(router.Classify(in.Command), in.Command)
				s.send(sdk.StartToolCall(sdk.ToolCallId(c.ID), title(in.Command), sdk.WithStartKind(kind),
					sdk.WithStartStatus(sdk.ToolCallStatusPending), sdk.WithStartRawInput(map[string]any{"command": in.Command})))
			}
		case llm.RoleTool:
			st := sdk.ToolCallStatusCompleted
			if m.IsError {
				st = sdk.ToolCallStatusFailed
			}
			s.send(sdk.UpdateToolCall(sdk.ToolCallId(m.ToolCallID), sdk.WithUpdateStatus(st),
				// Saved as the command printed it: escapes are removed here as
				// in the live update.
				sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(codeBlock(textutil.Sanitize(m.Text))))})))
		}
	}
	if todos := s.g.Runner.Todos(); todos != nil {
		if items := todos.Items(); len(items) > 0 {
			s.send(plan(items))
		}
	}
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
	return text
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
