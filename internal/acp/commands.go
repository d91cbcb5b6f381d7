package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// The client's slash commands (available_commands_update) are of two kinds,
// both derived, never listed here:
//
//   - the Agent Shell's commands of the extension managers a person may run
//     themselves (registry families skill: and command:search), as the REPL's
//     /skill:<command>: `/skill:list`, `/skill:info pdf`, `/command:search git`
//     run the command at once, without the model, and show its output;
//   - each installed skill: `/pdf fill the form` asks the model to load the
//     skill and follow it for the rest of the line.

// userFamilies are the registry families whose commands a person may run as
// slash commands.
var userFamilies = []string{registry.FamilySkill, registry.FamilySearch}

// availableCommands is the session's slash commands: the user-runnable
// Agent Shell commands in registry order, then the skills by name.
func (s *session) availableCommands() []sdk.AvailableCommand {
	out := []sdk.AvailableCommand{}
	for _, c := range registry.All() {
		if !slices.Contains(userFamilies, c.Family) {
			continue
		}
		out = append(out, sdk.AvailableCommand{Name: c.Name, Description: c.Help,
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "arguments (-h for help)"}}})
	}
	for _, sk := range s.skills() {
		desc := textutil.OneLine(textutil.Sanitize(sk.Description), 200)
		if desc == "" {
			desc = sk.Name
		}
		out = append(out, sdk.AvailableCommand{Name: sk.Name, Description: "Skill: " + desc,
			Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "what to do with it"}}})
	}
	return out
}

// skills are the installed skills the model may load, by name.
func (s *session) skills() []*skills.Skill {
	ext := s.g.Extensions
	if ext == nil || ext.Index == nil {
		return nil
	}
	all := ext.Index.Skills()
	slices.SortFunc(all, func(a, b *skills.Skill) int { return strings.Compare(a.Name, b.Name) })
	return all
}

// sendCommands tells the client the slash commands when they differ from
// what it was last told (a skill installed or removed during a turn).
func (s *session) sendCommands() {
	cmds := s.availableCommands()
	key := make([]string, 0, len(cmds))
	for _, c := range cmds {
		key = append(key, c.Name+"\x00"+c.Description)
	}
	k := strings.Join(key, "\x01")
	s.mu.Lock()
	same := s.commandsSent && s.commandsKey == k
	s.commandsSent, s.commandsKey = true, k
	s.mu.Unlock()
	if same {
		return
	}
	s.send(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

// sendUsage tells the client the context's size against the model's window
// and the session's cost so far (when the model has a price).
func (s *session) sendUsage() {
	st := s.g.Runner.ContextStats()
	u := &sdk.SessionUsageUpdate{Used: max(st.Used, 0), Size: max(st.Window, 0)}
	if su := s.g.Runner.SessionUsage(); su != nil && su.Priced {
		u.Cost = &sdk.Cost{Amount: su.CostUSD, Currency: "USD"}
	}
	s.send(sdk.SessionUpdate{UsageUpdate: u})
}

// slashCommand splits a prompt of the form /name rest into the command's
// name and the rest; ok is false when text is no slash command.
func slashCommand(text string) (name, rest string, ok bool) {
	t := strings.TrimLeft(text, " \t\n")
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	t = t[1:]
	end := strings.IndexAny(t, " \t\n")
	if end < 0 {
		end = len(t)
	}
	if end == 0 {
		return "", "", false
	}
	return t[:end], strings.TrimLeft(t[end:], " \t"), true
}

// userCommand is the family of a registry command a person may run as a
// slash command ("" when name is none).
func userCommand(name string) router.Family {
	c, ok := registry.Lookup(name)
	if !ok || !slices.Contains(userFamilies, c.Family) {
		return ""
	}
	return router.Family(c.Family)
}

// runUserCommand runs an Agent Shell command the person typed (as the
// REPL's /skill:<command>: a typed command asks no permission) and shows
// its output as the agent's message; the model is not asked.
func (s *session) runUserCommand(ctx context.Context, family router.Family, line string) {
	h := s.g.Extensions.Handlers()[family]
	if h == nil {
		s.send(sdk.UpdateAgentMessageText(fmt.Sprintf("%s is not available in this session.", textutil.FirstLine(line))))
		return
	}
	res := h.Run(skills.UserTyped(ctx), line)
	var parts []string
	if out := strings.TrimRight(textutil.Sanitize(res.Stdout), "\n"); out != "" {
		parts = append(parts, codeBlock(out))
	}
	msg := strings.TrimSpace(textutil.Sanitize(res.Stderr))
	if msg == "" && res.ExitCode != 0 {
		msg = fmt.Sprintf("%s failed (exit %d)", textutil.FirstLine(line), res.ExitCode)
	}
	if msg != "" {
		parts = append(parts, codeBlock(msg))
	}
	if len(parts) == 0 {
		parts = append(parts, "(no output)")
	}
	s.send(sdk.UpdateAgentMessageText(strings.Join(parts, "\n\n")))
}

// skillPromptLead starts the prompt a skill's slash command becomes; the
// replay shows it as the person typed it (typedText).
const skillPromptLead = "[The user invoked the skill "

// skillPrompt is the prompt for /name rest, name an installed skill: the
// model loads the skill and follows it.
func skillPrompt(name, rest string) string {
	return fmt.Sprintf("%s%q with a slash command: load it with `%s %s` and follow its instructions for the request below.]\n\n%s",
		skillPromptLead, name, registry.SkillLoad, name, rest)
}

// unwrapSkillPrompt is a skill prompt as the person typed it (/name rest);
// other text is returned as it is.
func unwrapSkillPrompt(text string) string {
	rest, ok := strings.CutPrefix(text, skillPromptLead)
	if !ok {
		return text
	}
	var name string
	if _, err := fmt.Sscanf(rest, "%q", &name); err != nil {
		return text
	}
	_, body, ok := strings.Cut(rest, "]\n\n")
	if !ok {
		return text
	}
	return strings.TrimSpace("/" + name + " " + body)
}
