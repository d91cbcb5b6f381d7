package app

import (
	"context"

	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/tool"
)

// ModeSwitch carries out a permission-mode switch on the agent's sandbox
// (tool.Permissions.SetSwitch): read-only entering plan mode, writable
// again leaving it.
func (g *Agent) ModeSwitch() func(tool.Mode) error {
	mgr := g.Sandbox
	return func(m tool.Mode) error {
		if m == tool.ModePlan || mgr.ReadOnly() {
			return mgr.SetReadOnly(m == tool.ModePlan)
		}
		return nil
	}
}

// AskImports is the import policy of a front end with a person: a clone
// or an install the model asks for is put to them through the gate
// (tool.AskClone, tool.AskInstall), one question at a time with the rest.
func AskImports(gate *tool.Permissions) skills.ImportPolicy {
	return skills.ImportPolicy{
		ApproveClone: func(ctx context.Context, url string) bool {
			return gate.Confirm(ctx, tool.Question{Kind: tool.AskClone, URL: url})
		},
		ApproveInstall: func(ctx context.Context, req skills.InstallRequest) bool {
			names := make([]string, 0, len(req.Skills))
			for _, sk := range req.Skills {
				names = append(names, sk.Name)
			}
			return gate.Confirm(ctx, tool.Question{Kind: tool.AskInstall, Source: req.Source, Skills: names, Text: req.String()})
		},
	}
}
