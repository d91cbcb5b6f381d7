package tool

import (
	"fmt"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/router"
)

// Rule is one tool pattern of Claude Code's --allowedTools or
// --disallowedTools, mapped onto Synapse's commands: its one tool is Bash,
// so "Bash" is every command and "Bash(git diff:*)" the command lines
// that start with those words; Claude Code's other tools name the command
// layers that do their job (Read, Write and Edit the Agent Shell's file
// commands, Task the sub-agents, TodoWrite the todo list,
// mcp__server[__tool] the MCP extension commands, Glob, Grep and LS the
// native find, grep and ls).
type Rule struct {
	Spec  string // as given
	match func(route router.Route, line string) bool
}

// Matches reports whether the command line falls under the rule.
func (r Rule) Matches(line string) bool {
	line = strings.TrimSpace(line)
	return r.match(router.Classify(line), line)
}

// ParseRules reads a flag's tool patterns (comma- or space-separated, as
// Claude Code takes them; a space inside parentheses belongs to the
// pattern). Patterns with no meaning here are returned apart, with why.
func ParseRules(specs []string) (rules []Rule, ignored []string) {
	for _, s := range specs {
		for _, p := range splitPatterns(s) {
			r, err := ParseRule(p)
			if err != nil {
				ignored = append(ignored, err.Error())
				continue
			}
			rules = append(rules, r)
		}
	}
	return rules, ignored
}

// splitPatterns splits "Bash(git log:*),Read Write" at commas and spaces
// outside parentheses.
func splitPatterns(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ',' || c == ' ') && depth == 0:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}

// ParseRule maps one Claude Code tool pattern onto commands.
func ParseRule(spec string) (Rule, error) {
	name, arg, hasArg := strings.Cut(spec, "(")
	if hasArg {
		if !strings.HasSuffix(arg, ")") {
			return Rule{}, fmt.Errorf("%s: unbalanced parentheses", spec)
		}
		arg = strings.TrimSuffix(arg, ")")
	}
	r := Rule{Spec: spec}
	family := func(f router.Family, names ...string) func(router.Route, string) bool {
		return func(rt router.Route, _ string) bool {
			if rt.Family != f {
				return false
			}
			if len(names) == 0 {
				return true
			}
			for _, n := range names {
				if rt.Name == n {
					return true
				}
			}
			return false
		}
	}
	native := func(word string) func(router.Route, string) bool {
		return func(rt router.Route, _ string) bool { return rt.Family == router.FamilyNative && rt.Name == word }
	}
	if hasArg && name != "Bash" {
		return Rule{}, fmt.Errorf("%s: only Bash(…) takes a pattern here; use %s for the whole tool", spec, name)
	}
	switch {
	case name == "Bash" && !hasArg:
		r.match = func(router.Route, string) bool { return true }
	case name == "Bash":
		prefix, isPrefix := strings.CutSuffix(arg, ":*")
		if !isPrefix {
			prefix, isPrefix = strings.CutSuffix(arg, " *")
		}
		prefix = strings.TrimSpace(prefix)
		if prefix == "" {
			return Rule{}, fmt.Errorf("%s: an empty command pattern", spec)
		}
		r.match = func(_ router.Route, line string) bool {
			if !isPrefix {
				return line == prefix
			}
			rest, ok := strings.CutPrefix(line, prefix)
			return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
		}
	case name == "Read":
		r.match = family(router.FamilyBuiltin, registry.Read)
	case name == "Write":
		r.match = family(router.FamilyBuiltin, registry.Write)
	case name == "Edit" || name == "MultiEdit":
		r.match = family(router.FamilyBuiltin, registry.Edit)
	case name == registry.TodoWrite: // Claude Code's tool has our command's name
		r.match = family(router.FamilyBuiltin, registry.TodoWrite)
	case name == "Task" || name == "Agent":
		r.match = family(router.FamilyTask)
	case name == "Glob":
		r.match = native("find")
	case name == "Grep":
		r.match = native("grep")
	case name == "LS":
		r.match = native("ls")
	case strings.HasPrefix(name, "mcp__"):
		server, tl, _ := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
		if server == "" {
			return Rule{}, fmt.Errorf("%s: no server named", spec)
		}
		want := "mcp:" + server + ":" + tl
		r.match = func(rt router.Route, _ string) bool {
			if rt.Family != router.FamilyMCP {
				return false
			}
			if tl == "" {
				return strings.HasPrefix(rt.Name, "mcp:"+server+":")
			}
			return rt.Name == want
		}
	default:
		return Rule{}, fmt.Errorf("%s: no such tool here (Synapse's one tool is Bash)", spec)
	}
	return r, nil
}

// SetRules sets the host's pre-approved and refused commands
// (--allowedTools, --disallowedTools): a refused command is never run, in
// any mode; an allowed one runs without a question in the ask mode (plan
// mode still refuses what it refuses, the sandbox still holds).
func (p *Permissions) SetRules(allow, deny []Rule) {
	p.mu.Lock()
	p.allow, p.deny = allow, deny
	p.mu.Unlock()
}

// ruled is the rule of list that covers line ("" when none).
func (p *Permissions) ruled(deny bool, line string) string {
	p.mu.Lock()
	list := p.allow
	if deny {
		list = p.deny
	}
	p.mu.Unlock()
	for _, r := range list {
		if r.Matches(line) {
			return r.Spec
		}
	}
	return ""
}

// DisallowedNote is what the model is told when the host's
// --disallowedTools refuses a command.
func DisallowedNote(spec string) string {
	return "Refused without running it: the host disallows " + spec + " (--disallowedTools). Do something else, or finish and say what you would run."
}
