package tool

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
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
	// ModeAsk: as default, and whatever may write outside the scratch list
	// is put to the user first: a write/edit, a native command (see
	// writecheck), an MCP tool not declared read-only, a skill script, a
	// sub-agent with its own writable shell.
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
// above it holding .git, else cwd itself (fsutil.ProjectRoot). accept-edits
// grants within it (a command run in a subdirectory may write elsewhere in
// the repository).
func ProjectRoot(cwd string) string { return fsutil.ProjectRoot(cwd) }

// PlanPrompt wraps a prompt given in plan mode, so that the model knows to
// answer with a plan; UnwrapPlanPrompt gives the user's text back.
func PlanPrompt(input string) string { return planPrefix + input }

// UnwrapPlanPrompt returns the user's text of a PlanPrompt (others unchanged).
func UnwrapPlanPrompt(text string) string { return strings.TrimPrefix(text, planPrefix) }

const planPrefix = "[Plan mode: the workspace is read-only. Investigate, then answer with a plan for the user to approve; do not try to change anything.]\n\n"

// Gate is an Approver asked before a command runs (plan and ask modes);
// a refusal's note is what the model is told.
type Gate interface {
	BeforeRun(ctx context.Context, req RunRequest) (ok bool, note string)
}

// RunRequest is a command about to run, as a Gate sees it.
type RunRequest struct {
	Route   router.Route
	Command string
	// Asks, when set, says why the ask mode would put the command to the
	// user (AskReasons); it does the work when called, since only the ask
	// mode needs it.
	Asks func() []writecheck.Reason
	// Rewrite, when set, takes a changed command the person answered with.
	Rewrite *Rewrite
}

// Reasons is why the ask mode puts the command to the user: one entry per
// part that may write outside the scratch list, with the word "always for
// this command" remembers. None: it runs without asking.
func (r RunRequest) Reasons() []writecheck.Reason {
	if r.Asks == nil {
		return nil
	}
	return r.Asks()
}

// AskWords are the distinct words of reasons, in order: what "always"
// remembers, and what must all be remembered for a command to run without
// asking.
func AskWords(reasons []writecheck.Reason) []string {
	var out []string
	for _, r := range reasons {
		if !slices.Contains(out, r.Word) {
			out = append(out, r.Word)
		}
	}
	return out
}

// AskModeNote tells the model why synapse run refused a command in the ask
// mode, and what it can do instead.
func AskModeNote(reasons []writecheck.Reason) string {
	var why []string
	for _, r := range reasons {
		why = append(why, "`"+r.Word+"` "+r.Why)
	}
	return "Refused without running it: the permission mode is ask, and no one is here to approve a command that may write outside the scratch list (" +
		strings.Join(why, "; ") + "). Write only under the scratch paths (/tmp is one), or finish with what you would run so that the user can run it or choose another --permission-mode."
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
	case router.FamilyTask, router.FamilySkill:
		// Those the registry marks read-only run; an unknown task is
		// refused, an unknown skill action only prints the list.
		c, known := registry.Lookup(route.Name)
		if known {
			return !c.ReadOnly
		}
		return route.Family == router.FamilyTask
	}
	return false
}
