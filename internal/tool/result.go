// Package tool is the one tool the model gets: Bash(command, restart). It routes
// each command line to its layer, shapes the result the model sees (failure
// categories, self-repair hints, sandbox-blocked markers, output caps) and
// offers a restricted variant for sub-agents.
package tool

import (
	"bytes"
	"encoding/json"

	"github.com/synapse-agent/synapse/internal/command"
)

// Failure categories reported in Facts.FailureCategory.
const (
	FailureInvalidUsage    = "invalid_usage"
	FailureCommandNotFound = "command_not_found"
	FailureExecution       = "execution_error"
)

// ExtrasTypeSandboxBlocked is Facts.Type for a command the sandbox refused.
const ExtrasTypeSandboxBlocked = "sandbox_blocked"

// Result is what the model sees for one Bash call.
type Result struct {
	Output  string `json:"output"`
	IsError bool   `json:"isError"`
	Message string `json:"message,omitempty"` // short error message for ToolError
	// Facts are what is known about the call beyond its text; JSON calls
	// them "extras".
	Facts Facts `json:"extras,omitzero"`
	// Images go to the model as image blocks where the provider takes them.
	Images []command.Image `json:"images,omitempty"`
	// Change is what an edit or write did to a file, for the person's diff
	// view; the model never sees it.
	Change *command.FileChange `json:"-"`
}

// Facts are the typed facts of one result. Each is set only where it is
// known; the zero value of a field means "not reported", except where a
// pointer says so explicitly (an exit code of 0 is a fact).
type Facts struct {
	// Layer is the router layer that ran the command: "native", "agent" or
	// "extension" (router.Layer.String()).
	Layer string
	// FailureCategory is set on errors: one of the Failure* constants.
	FailureCategory string
	// ExitCode is the command's exit status, when it ran (see Exit).
	ExitCode *int
	// Interrupted: the call was cancelled (Ctrl+C, a timeout of the turn).
	Interrupted bool
	// Type marks a refusal: ExtrasTypeSandboxBlocked or
	// ExtrasTypeCommandBlocked. A sandbox refusal always reports Reason,
	// Resource and Command (even when empty); a command refusal Command and
	// Pattern.
	Type     string
	Reason   string // why the sandbox refused
	Resource string // the exact path or host it refused
	Command  string // the refused command (line, or word for a command refusal)
	Pattern  string // the exclusion rule that refused the command
	// FullOutputPath is where an output longer than the cap was saved;
	// Truncated says the output was cut.
	FullOutputPath string
	Truncated      bool
	// Approval holds the user's answers (Decision.String()), one per
	// resource asked about.
	Approval []string
	// Restarted: the shell was restarted before the command ran.
	Restarted bool
	// BlockedByHook: a PreToolUse hook refused the command; it did not run.
	BlockedByHook bool
	// Status is the call's fate when it has no result of its own
	// ("cancelled": the run's cancel stopped it).
	Status string
}

// Exit returns the exit code and whether one was reported.
func (f Facts) Exit() (code int, ok bool) {
	if f.ExitCode == nil {
		return 0, false
	}
	return *f.ExitCode, true
}

// SandboxBlocked reports whether the sandbox refused the command.
func (f Facts) SandboxBlocked() bool { return f.Type == ExtrasTypeSandboxBlocked }

// IsZero reports whether no fact is set (JSON then omits "extras").
func (f Facts) IsZero() bool { return len(f.fields()) == 0 }

func exitCode(n int) *int { return &n }

// fields are the facts that are set, by their JSON names.
func (f Facts) fields() map[string]any {
	m := map[string]any{}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("layer", f.Layer, f.Layer != "")
	set("failureCategory", f.FailureCategory, f.FailureCategory != "")
	if f.ExitCode != nil {
		m["exitCode"] = *f.ExitCode
	}
	set("interrupted", true, f.Interrupted)
	set("type", f.Type, f.Type != "")
	blocked := f.Type == ExtrasTypeSandboxBlocked
	set("reason", f.Reason, f.Reason != "" || blocked)
	set("resource", f.Resource, f.Resource != "" || blocked)
	set("command", f.Command, f.Command != "" || blocked)
	set("pattern", f.Pattern, f.Pattern != "")
	set("fullOutputPath", f.FullOutputPath, f.FullOutputPath != "")
	set("truncated", true, f.Truncated)
	set("approval", f.Approval, len(f.Approval) > 0)
	set("restarted", true, f.Restarted)
	set("blockedByHook", true, f.BlockedByHook)
	set("status", f.Status, f.Status != "")
	return m
}

// MarshalJSON writes the facts that are set as one object with sorted keys:
// the "extras" shape `exec --json` and stream-json have always printed.
// HTML characters are left as they are; an enclosing encoder escapes them
// or not, as it would any string.
func (f Facts) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f.fields()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads the "extras" object back, so that a result survives a
// JSON round trip with its facts typed (unknown keys are ignored).
func (f *Facts) UnmarshalJSON(data []byte) error {
	var in struct {
		Layer           string   `json:"layer"`
		FailureCategory string   `json:"failureCategory"`
		ExitCode        *int     `json:"exitCode"`
		Interrupted     bool     `json:"interrupted"`
		Type            string   `json:"type"`
		Reason          string   `json:"reason"`
		Resource        string   `json:"resource"`
		Command         string   `json:"command"`
		Pattern         string   `json:"pattern"`
		FullOutputPath  string   `json:"fullOutputPath"`
		Truncated       bool     `json:"truncated"`
		Approval        []string `json:"approval"`
		Restarted       bool     `json:"restarted"`
		BlockedByHook   bool     `json:"blockedByHook"`
		Status          string   `json:"status"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*f = Facts(in)
	return nil
}

// Input is the tool's arguments as the model sends them.
type Input struct {
	Command string `json:"command"`
	Restart bool   `json:"restart,omitempty"`
}
