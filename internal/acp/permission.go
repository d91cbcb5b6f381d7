package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/skills"
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

// The session answers the tool's questions (tool.Approver, tool.Gate,
// tool.DenyNoter) by the permission mode, asking the client where a
// person must decide.
var (
	_ tool.Approver  = (*session)(nil)
	_ tool.Gate      = (*session)(nil)
	_ tool.DenyNoter = (*session)(nil)
)

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

// Approve implements tool.Approver: the sandbox's grant prompt, answered
// by the mode (plan refuses, accept-edits allows inside the project) or
// asked as session/request_permission about the call that was blocked.
func (s *session) Approve(ctx context.Context, req tool.ApprovalRequest) tool.Decision {
	mode := s.permissionMode()
	switch {
	case mode == tool.ModePlan:
		return tool.Deny // DenyNote tells the model why
	case req.Refusal != "":
		return tool.Deny // nothing to choose: the tool tells the model why
	case mode == tool.ModeAcceptEdits && tool.InProject(req.Resource, s.project):
		return tool.Once
	}
	text := fmt.Sprintf("The sandbox blocked `%s`: it needs %s.", title(req.Command), req.Resource)
	if req.Reason != "" {
		text += " " + req.Reason
	}
	answer := s.ask(ctx, s.callFor(req.Command), fmt.Sprintf("Allow access to %s?", req.Resource), text,
		map[string]any{"command": req.Command, "resource": req.Resource, "reason": req.Reason},
		[]sdk.ToolCallLocation{{Path: req.Resource}},
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow for this session", OptionId: optSession},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow permanently (sandbox.json)", OptionId: optPermanent},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
	switch answer {
	case optOnce:
		return tool.Once
	case optSession:
		return tool.Session
	case optPermanent:
		return tool.Permanent
	}
	return tool.Deny
}

// DenyNote implements tool.DenyNoter: plan mode's refusals tell the model
// to plan rather than to ask again.
func (s *session) DenyNote(tool.ApprovalRequest) string {
	if s.permissionMode() == tool.ModePlan {
		return tool.PlanModeNote
	}
	return ""
}

// askDenied is what the model is told when the person declines a command
// in the ask mode.
const askDenied = "The user declined to run this command (permission mode ask). Ask them or do something else."

// BeforeRun implements tool.Gate: plan mode refuses what its read-only
// sandbox cannot hold; the ask mode asks before whatever may write outside
// the scratch list (tool.RunRequest.Reasons): once, always for the words
// that asked (this session), or deny. A command runs without asking when
// all its asking words were allowed always.
func (s *session) BeforeRun(ctx context.Context, req tool.RunRequest) (bool, string) {
	mode := s.permissionMode()
	if mode == tool.ModePlan && tool.PlanRefuses(req.Route) {
		return false, tool.PlanModeNote
	}
	if mode != tool.ModeAsk {
		return true, ""
	}
	reasons := req.Reasons()
	if len(reasons) == 0 {
		return true, ""
	}
	words := tool.AskWords(reasons)
	s.mu.Lock()
	allowed := true
	for _, w := range words {
		allowed = allowed && s.always[w]
	}
	s.mu.Unlock()
	if allowed {
		return true, ""
	}
	why := make([]string, 0, len(reasons))
	for _, r := range reasons {
		why = append(why, "- `"+r.Word+"` "+r.Why)
	}
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "`" + w + "`"
	}
	cmd := req.Command
	answer := s.ask(ctx, s.callFor(cmd), "Run "+title(cmd)+"?",
		textutil.Sanitize("The permission mode is ask: this command may write outside the scratch list.\n"+strings.Join(why, "\n")+"\n\n"+cmd),
		map[string]any{"command": cmd, "words": words}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Run once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindAllowAlways, Name: "Always run " + strings.Join(quoted, ", ") + " in this session", OptionId: optAlways},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
	switch answer {
	case optOnce:
		return true, ""
	case optAlways:
		s.mu.Lock()
		if s.always == nil {
			s.always = map[string]bool{}
		}
		for _, w := range words {
			s.always[w] = true
		}
		s.mu.Unlock()
		return true, ""
	}
	return false, askDenied
}

// confirmClone asks the client before a clone the model asked for
// (skill:import of a git URL). The clone itself runs without the user's SSH
// agent, keys or git credential helpers, as in the REPL.
func (s *session) confirmClone(ctx context.Context, url string) bool {
	url = textutil.Sanitize(url)
	answer := s.ask(ctx, s.importCall(url), "Clone "+url+"?",
		"The agent asks to clone "+url+" on this machine (skill:import), without your SSH agent, keys or git credentials.",
		map[string]any{"url": url}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
	return answer == optOnce
}

// confirmInstall asks the client before a skill:import the model ran
// changes the user skill store, which the sessions of every project read.
func (s *session) confirmInstall(ctx context.Context, req skills.InstallRequest) bool {
	var names []string
	for _, sk := range req.Skills {
		names = append(names, sk.Name)
	}
	answer := s.ask(ctx, s.importCall(filepath.Base(req.Source)), "Install skill "+strings.Join(names, ", ")+"?",
		"The agent asks to "+req.String()+" (skill:import).",
		map[string]any{"source": textutil.Sanitize(req.Source), "skills": names}, nil,
		[]sdk.PermissionOption{
			{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once", OptionId: optOnce},
			{Kind: sdk.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: optDeny},
		})
	return answer == optOnce
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
func (s *session) permissionMode() tool.Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == "" {
		return tool.ModeDefault
	}
	return s.mode
}

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

// setMode switches the permission mode: the sandbox first (plan makes it
// read-only), then the answers.
func (s *session) setMode(m tool.Mode) error {
	s.modeMu.Lock()
	defer s.modeMu.Unlock()
	old := s.permissionMode()
	if m == old {
		return nil
	}
	if m == tool.ModePlan || old == tool.ModePlan {
		if err := s.g.Sandbox.SetReadOnly(m == tool.ModePlan); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	return nil
}

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
