package tool

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/router"
)

// Mode is the main agent's permission mode. The sandbox is on in every
// mode; a mode changes what it allows and who is asked.
type Mode string

// Modes, in the order Shift+Tab cycles through them.
const (
	// ModeDefault: sandboxed; the user is asked only about escapes.
	ModeDefault Mode = "default"
	// ModeAcceptEdits: as default, and grants inside the project are given
	// without asking.
	ModeAcceptEdits Mode = "accept-edits"
	// ModePlan: read-only (the explore sub-agent's sandbox); writes are
	// refused and the model proposes a plan for the user to approve.
	ModePlan Mode = "plan"
	// ModeAsk: as default, and every write/edit and every native command
	// that may write (not a known read-only one) is put to the user first.
	ModeAsk Mode = "ask"
)

// Modes lists the modes in cycling order.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeAsk}

// ParseMode reads a --permission-mode value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	var names []string
	for _, m := range Modes {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown permission mode %q: use one of %s", s, strings.Join(names, ", "))
}

// Next is the mode after m in the cycle.
func (m Mode) Next() Mode {
	for i, x := range Modes {
		if x == m {
			return Modes[(i+1)%len(Modes)]
		}
	}
	return ModeDefault
}

// PlanModeNote is what the model is told when plan mode refuses a change.
const PlanModeNote = "You are in plan mode: the workspace is read-only and nothing may be changed. " +
	"Keep investigating with read-only commands, then present your plan as your answer; " +
	"the user approves it to switch to the default mode, and you carry it out then."

// DenyNoter is an Approver that explains its denials to the model (a
// permission mode that refuses without asking). The note replaces the
// plain "the user denied access".
type DenyNoter interface {
	DenyNote(req ApprovalRequest) string
}

// InProject reports whether path is inside the project directory and
// outside its git metadata (hooks and config run code: never granted
// without asking).
func InProject(path, project string) bool {
	if project == "" || path == "" {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(project), filepath.Clean(path))
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	return first != ".git"
}

// ProjectRoot is the project cwd belongs to: the nearest directory at or
// above it holding .git, else cwd itself. accept-edits grants within it
// (a command run in a subdirectory may write elsewhere in the repository).
func ProjectRoot(cwd string) string {
	for dir := filepath.Clean(cwd); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Clean(cwd)
		}
		dir = parent
	}
}

// PlanPrompt wraps a prompt given in plan mode, so that the model knows to
// answer with a plan; UnwrapPlanPrompt gives the user's text back.
func PlanPrompt(input string) string { return planPrefix + input }

// UnwrapPlanPrompt returns the user's text of a PlanPrompt (others unchanged).
func UnwrapPlanPrompt(text string) string { return strings.TrimPrefix(text, planPrefix) }

const planPrefix = "[Plan mode: the workspace is read-only. Investigate, then answer with a plan for the user to approve; do not try to change anything.]\n\n"

// ModeApprover answers without a person (synapse run): plan mode refuses
// with PlanModeNote, accept-edits grants once inside Project, anything
// else is denied.
type ModeApprover struct {
	Mode    Mode
	Project string
}

// Approve implements Approver.
func (a ModeApprover) Approve(_ context.Context, req ApprovalRequest) Decision {
	if a.Mode == ModeAcceptEdits && req.Refusal == "" && InProject(req.Resource, a.Project) {
		return Once
	}
	return Deny
}

// DenyNote implements DenyNoter.
func (a ModeApprover) DenyNote(ApprovalRequest) string {
	if a.Mode == ModePlan {
		return PlanModeNote
	}
	return ""
}

// Gate is an Approver asked before a command runs (the ask mode); a
// refusal's note is what the model is told.
type Gate interface {
	BeforeRun(ctx context.Context, route router.Route, cmd string) (ok bool, note string)
}

// readOnlyWords are native commands that only read (with no redirection):
// the ask mode runs them without asking. /tmp is the session's private
// scratch space, but a command's targets are not known before it runs, so
// anything else asks.
var readOnlyWords = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "grep": true, "rg": true, "find": true, "wc": true,
	"pwd": true, "echo": true, "printf": true, "which": true, "file": true, "stat": true, "du": true, "df": true,
	"tree": true, "sort": true, "uniq": true, "cut": true, "tr": true, "diff": true, "cmp": true, "basename": true,
	"dirname": true, "realpath": true, "readlink": true, "date": true, "env": true, "true": true, "false": true,
	"test": true, "[": true, "cd": true, "less": true, "more": true, "jq": true, "awk": true,
}

// readOnlyGit are git subcommands that change nothing.
var readOnlyGit = map[string]bool{"status": true, "diff": true, "log": true, "show": true, "blame": true, "grep": true, "rev-parse": true, "ls-files": true}

// NeedsAsk reports whether the ask mode puts cmd to the user first: a
// write or edit, or a native command that is not plainly read-only (a
// redirection, or a command word not known to only read).
func NeedsAsk(route router.Route, cmd string) bool {
	switch route.Family {
	case router.FamilyBuiltin:
		return route.Name == "write" || route.Name == "edit"
	case router.FamilyNative:
	default:
		return false
	}
	if strings.ContainsAny(cmd, ">`") || strings.Contains(cmd, "$(") {
		return true // redirections and command substitutions
	}
	f := func(r rune) bool { return r == ';' || r == '|' || r == '&' || r == '\n' || r == '(' || r == ')' }
	for _, part := range strings.FieldsFunc(cmd, f) {
		words := strings.Fields(part)
		if len(words) == 0 {
			continue
		}
		w := words[0]
		if w == "git" && len(words) > 1 && readOnlyGit[words[1]] {
			continue
		}
		if !readOnlyWords[w] {
			return true
		}
	}
	return false
}

// PlanRefuses reports whether plan mode refuses a command before it runs:
// what the read-only sandbox cannot hold, as for the explore sub-agent
// (sub-agents other than explore and skill search run with their own
// writable shell, MCP tools and skill scripts run outside the sandbox,
// skill import/rollback/delete change the skills directory).
func PlanRefuses(route router.Route) bool {
	switch route.Family {
	case router.FamilyMCP, router.FamilySkillScript:
		return true
	case router.FamilyTask:
		return route.Name != "task:explore" && route.Name != "task:skill:search"
	case router.FamilySkill:
		switch route.Name {
		case "skill:import", "skill:rollback", "skill:delete":
			return true
		}
	}
	return false
}

// CommandWord is what "always for this command" remembers: the first word.
func CommandWord(cmd string) string {
	if f := strings.Fields(cmd); len(f) > 0 {
		return f[0]
	}
	return ""
}

// BeforeRun implements Gate: without a person, the ask mode refuses what
// it would have asked about.
func (a ModeApprover) BeforeRun(_ context.Context, route router.Route, cmd string) (bool, string) {
	if a.Mode == ModePlan && PlanRefuses(route) {
		return false, PlanModeNote
	}
	if a.Mode == ModeAsk && NeedsAsk(route, cmd) {
		return false, "Refused: the permission mode is ask and there is no one to ask here; this command may change files."
	}
	return true, ""
}
