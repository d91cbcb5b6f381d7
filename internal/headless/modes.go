package headless

import (
	"fmt"

	"github.com/synapse-agent/synapse/internal/tool"
)

// Mode is a permission mode as a host names it: the Agent SDK's camelCase
// names (default, acceptEdits, plan, bypassPermissions, dontAsk, auto)
// beside Synapse's own (default, accept-edits, plan, ask).
type Mode struct {
	Mode tool.Mode // the gate's mode
	// Ask: questions go to the host (its canUseTool); false for dontAsk,
	// which refuses what would be asked.
	Ask  bool
	Note string // how the name was read, when it is not one of ours
}

// ParseMode reads a host's mode name. hostAsks says the host answers
// questions (--permission-prompt-tool stdio): then the SDK's "default" —
// Claude Code's "prompts for dangerous operations" — is the ask mode, whose
// questions (commands that may write outside the scratch list) go to the
// host's canUseTool; without a host to ask it is Synapse's default.
func ParseMode(name string, hostAsks bool) (Mode, error) {
	switch name {
	case "default", "":
		if hostAsks {
			return Mode{Mode: tool.ModeAsk, Ask: true}, nil
		}
		return Mode{Mode: tool.ModeDefault}, nil
	case "acceptEdits":
		return Mode{Mode: tool.ModeAcceptEdits, Ask: hostAsks}, nil
	case "bypassPermissions":
		return Mode{Mode: tool.ModeAcceptEdits, Ask: hostAsks,
			Note: "bypassPermissions runs as accept-edits: the sandbox stays on, and grants inside the project are given without asking"}, nil
	case "dontAsk":
		return Mode{Mode: tool.ModeDefault,
			Note: "dontAsk runs as default with no one asked: what would be asked is refused"}, nil
	case "auto":
		return Mode{Mode: tool.ModeDefault, Ask: hostAsks, Note: "auto runs as default: there is no classifier here"}, nil
	}
	m, err := tool.ParseMode(name)
	if err != nil {
		return Mode{}, fmt.Errorf("%w, or the Agent SDK's default, acceptEdits, plan, bypassPermissions, dontAsk, auto", err)
	}
	return Mode{Mode: m, Ask: hostAsks}, nil
}

// SDKName is the Agent SDK's name of a mode (system/init's permissionMode):
// the ask mode is the SDK's default, as ParseMode reads it.
func SDKName(m tool.Mode) string {
	switch m {
	case tool.ModeAcceptEdits:
		return "acceptEdits"
	case tool.ModePlan:
		return "plan"
	}
	return "default"
}
