package tool

import (
	"context"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// readOnlyTeller is a handler that knows which of its command lines only
// read (the MCP handler: tools their server annotates readOnlyHint).
type readOnlyTeller interface {
	ReadOnly(ctx context.Context, line string) bool
}

// writePather is the Agent Shell: the file a write or edit line changes.
type writePather interface {
	WritePath(line string) (path string, viaLink, ok bool)
}

// askReasons is why the ask mode puts cmd to the user before it runs (see
// RunRequest.Reasons); cwd is the shell's directory.
func (b *Bash) askReasons(ctx context.Context, route router.Route, cmd, cwd string) []writecheck.Reason {
	switch route.Family {
	case router.FamilyNative:
		return b.opts.Scratch.Check(cmd, cwd)
	case router.FamilyBuiltin:
		switch route.Name {
		case registry.Bash:
			return b.opts.Scratch.Check(router.Rest(cmd), cwd)
		case registry.Write, registry.Edit:
			wp, ok := b.opts.Agent.(writePather)
			if !ok {
				return []writecheck.Reason{{Word: route.Name, Why: "changes a file"}}
			}
			path, viaLink, ok := wp.WritePath(cmd)
			switch {
			case !ok:
				return nil // it fails before writing anything
			case viaLink:
				return []writecheck.Reason{{Word: route.Name, Why: "writes " + path + " through a symbolic link"}}
			case !b.opts.Scratch.InScratch(path):
				return []writecheck.Reason{{Word: route.Name, Why: "writes " + path + " (outside the scratch list)"}}
			}
		}
		return nil
	case router.FamilyMCP:
		if t, ok := b.opts.Handlers[route.Family].(readOnlyTeller); ok && t.ReadOnly(ctx, cmd) {
			return nil
		}
		return []writecheck.Reason{{Word: route.Name, Why: "is an MCP tool its server does not declare read-only (readOnlyHint)"}}
	case router.FamilySkillScript:
		return []writecheck.Reason{{Word: route.Name, Why: "runs a skill script, which may change files"}}
	}
	if PlanRefuses(route) {
		why := "changes the skills directory"
		if route.Family == router.FamilyTask {
			why = "starts a sub-agent whose own shell writes without asking"
		}
		return []writecheck.Reason{{Word: route.Name, Why: why}}
	}
	return nil
}
