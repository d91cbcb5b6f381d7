package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Permission options offered to the client.
const (
	optOnce      = "allow_once"
	optSession   = "allow_session"
	optPermanent = "allow_permanent"
	optAlways    = "allow_always" // ask mode: this command word, for the session
	optDeny      = "deny"
)

// The session is the tool.Asker of its agent's permission gate
// (tool.Permissions), which decides by the mode and puts the rest to the
// client, one question at a time, as session/request_permission.
var _ tool.Asker = (*session)(nil)

// callFor is the open call running cmd (the question is about it), else
// the call started last.
func (s *session) callFor(cmd string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, c := range s.calls {
		if c.command == cmd {
			return id
		}
	}
	return s.current
}

// ask puts a question about a tool call to the client; the option chosen,
// "" when the client cancelled or failed.
func (s *session) ask(ctx context.Context, callID, title, text string, raw map[string]any, locations []sdk.ToolCallLocation, opts []sdk.PermissionOption) string {
	resp, err := s.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(s.id),
		ToolCall: sdk.ToolCallUpdate{
			ToolCallId: sdk.ToolCallId(callID),
			Title:      &title,
			Status:     sdk.Ptr(sdk.ToolCallStatusPending),
			Locations:  locations,
			RawInput:   raw,
			Content:    []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))},
		},
		Options: opts,
	})
	if err != nil || resp.Outcome.Selected == nil {
		return ""
	}
	return string(resp.Outcome.Selected.OptionId)
}

// Ask implements tool.Asker: the question as session/request_permission
// about the call it concerns; a client that cancels or fails denies.
func (s *session) Ask(ctx context.Context, q tool.Question) tool.Answer {
	var answer string
	switch q.Kind {
	case tool.AskGrant:
		answer = s.askGrant(ctx, q)
	case tool.AskRun:
		answer = s.askRun(ctx, q)
	case tool.AskClone:
		answer = s.confirmClone(ctx, q.URL)
	case tool.AskInstall:
		answer = s.confirmInstall(ctx, q)
	}
	switch answer {
	case optOnce:
		return tool.AnswerOnce
	case optSession:
		return tool.AnswerSession
	case optPermanent:
		return tool.AnswerPermanent
	case optAlways:
		return tool.AnswerAlways
	}
	return tool.AnswerDeny
}

// askGrant is the sandbox's grant prompt about the call that was blocked.
func (s *session) askGrant(ctx context.Context, q tool.Question) string {
	text := fmt.Sprintf("The sandbox blocked `%s`: it needs %s.", title(q.Command), q.Resource)
	if q.Reason != "" {
		text += " " + q.Reason
	}
	return s.ask(ctx, s.callFor(q.Command), fmt.Sprintf("Allow access to %s?", q.Resource), text,
		map[string]any{"command": q.Command, "resource": q.Resource, "reason": q.Reason},
		[]sdk.ToolCallLocation{{Path: q.Resource}},
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow for this session", OptionId: optSession},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow permanently (sandbox.json)", OptionId: optPermanent},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
}

// askRun is the ask mode's question before a command that may write
// outside the scratch list: once, always for the words that asked (this
// session), or deny.
func (s *session) askRun(ctx context.Context, q tool.Question) string {
	why := make([]string, 0, len(q.Reasons))
	for _, r := range q.Reasons {
		why = append(why, "- `"+r.Word+"` "+r.Why)
	}
	quoted := make([]string, len(q.Words))
	for i, w := range q.Words {
		quoted[i] = "`" + w + "`"
	}
	cmd := q.Command
	return s.ask(ctx, s.callFor(cmd), "Run "+title(cmd)+"?",
		textutil.Sanitize("The permission mode is ask: this command may write outside the scratch list.\n"+strings.Join(why, "\n")+"\n\n"+cmd),
		map[string]any{"command": cmd, "words": q.Words}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Run once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always run " + strings.Join(quoted, ", ") + " in this session", OptionId: optAlways},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
}

// confirmClone asks the client before a clone the model asked for
// (skill:import of a git URL). The clone itself runs without the user's SSH
// agent, keys or git credential helpers, as in the REPL.
func (s *session) confirmClone(ctx context.Context, url string) string {
	url = textutil.Sanitize(url)
	return s.ask(ctx, s.importCall(url), "Clone "+url+"?",
		"The agent asks to clone "+url+" on this machine (skill:import), without your SSH agent, keys or git credentials.",
		map[string]any{"url": url}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
}

// confirmInstall asks the client before a skill:import the model ran
// changes the user skill store, which the sessions of every project read.
func (s *session) confirmInstall(ctx context.Context, q tool.Question) string {
	return s.ask(ctx, s.importCall(filepath.Base(q.Source)), "Install skill "+strings.Join(q.Skills, ", ")+"?",
		"The agent asks to "+q.Text+" (skill:import).",
		map[string]any{"source": textutil.Sanitize(q.Source), "skills": q.Skills}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
}

// importCall is the skill:import call naming src, or the current call.
func (s *session) importCall(src string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.current
	for cid, c := range s.calls {
		if c.route.Name == registry.SkillImport && strings.Contains(c.command, src) {
			id = cid
		}
	}
	return id
}

// permissionMode is the session's mode.
func (s *session) permissionMode() tool.Mode { return s.perm.Mode() }

// modeState is the modes advertised to the client, with the current one.
func (s *session) modeState() *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.permissionMode())}
	for _, m := range tool.Modes {
		d := modeDescription(m)
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: modeName(m), Description: &d})
	}
	return st
}

// modeConfigID is the permission mode as a session config option (the
// newer form of modes; clients that know it prefer it).
const modeConfigID = "mode"

// configOptions are the session's config options: the permission mode
// and the model.
func (s *session) configOptions() []sdk.SessionConfigOption {
	var opts sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range tool.Modes {
		d := modeDescription(m)
		opts = append(opts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m), Name: modeName(m), Description: &d})
	}
	o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(s.permissionMode()), sdk.SessionConfigSelectOptions{Ungrouped: &opts})
	o.Select.Id = modeConfigID
	o.Select.Name = "Permission mode"
	o.Select.Category = sdk.Ptr(sdk.SessionConfigOptionCategoryMode)
	return []sdk.SessionConfigOption{o, s.modelOption()}
}

// switchMode is set_mode and set_config_option of the mode: the switch,
// then the client is told in both forms (it may show either).
func (s *session) switchMode(m tool.Mode) error {
	if m == s.permissionMode() {
		return nil
	}
	if err := s.setMode(m); err != nil {
		return err
	}
	s.send(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(m), SessionUpdate: "current_mode_update"}})
	s.send(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(), SessionUpdate: "config_option_update"}})
	return nil
}

// setMode switches the permission mode (the gate carries it out: the
// sandbox first, plan makes it read-only, then its answers).
func (s *session) setMode(m tool.Mode) error { return s.perm.SetMode(m) }

func modeName(m tool.Mode) string {
	switch m {
	case tool.ModeAcceptEdits:
		return "Accept edits"
	case tool.ModePlan:
		return "Plan"
	case tool.ModeAsk:
		return "Ask"
	}
	return "Default"
}

func modeDescription(m tool.Mode) string {
	switch m {
	case tool.ModePlan:
		return "Read-only: the agent investigates and proposes a plan; switch to another mode to carry it out"
	case tool.ModeAcceptEdits:
		return "Sandbox grants inside the project are given without asking"
	case tool.ModeAsk:
		return "Every write, edit and command that may write outside the scratch list (the session's /tmp) asks first"
	}
	return "Sandboxed; you are asked only when a command needs access outside the sandbox"
}
