// Package tool is the one tool the model gets: Bash(command, restart). It routes
// each command line to its layer, shapes the result the model sees (failure
// categories, self-repair hints, sandbox-blocked markers, output caps) and
// offers a restricted variant for sub-agents.
package tool

import "github.com/synapse-agent/synapse/internal/command"

// Failure categories reported in Result.Extras["failureCategory"].
const (
	FailureInvalidUsage    = "invalid_usage"
	FailureCommandNotFound = "command_not_found"
	FailureExecution       = "execution_error"
)

// ExtrasTypeSandboxBlocked is Result.Extras["type"] for a command the sandbox refused.
const ExtrasTypeSandboxBlocked = "sandbox_blocked"

// Result is what the model sees for one Bash call.
type Result struct {
	Output  string         `json:"output"`
	IsError bool           `json:"isError"`
	Message string         `json:"message,omitempty"` // short error message for ToolError
	Extras  map[string]any `json:"extras,omitempty"`
	// Images go to the model as image blocks where the provider takes them.
	Images []command.Image `json:"images,omitempty"`
	// Change is what an edit or write did to a file, for the person's diff
	// view; the model never sees it.
	Change *command.FileChange `json:"-"`
}

// Input is the tool's arguments as the model sends them.
type Input struct {
	Command string `json:"command"`
	Restart bool   `json:"restart,omitempty"`
}
