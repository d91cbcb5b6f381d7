package tool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// legacyResult is Result as it was before its facts were typed: the JSON
// that `exec --json` and stream-json print must not move.
type legacyResult struct {
	Output  string          `json:"output"`
	IsError bool            `json:"isError"`
	Message string          `json:"message,omitempty"`
	Extras  map[string]any  `json:"extras,omitempty"`
	Images  []command.Image `json:"images,omitempty"`
}

func TestFactsJSONKeepsTheExtrasShape(t *testing.T) {
	tests := []struct {
		name  string
		facts Facts
		old   map[string]any
	}{
		{"none", Facts{}, nil},
		{"success", Facts{Layer: "native", ExitCode: exitCode(0)}, map[string]any{"layer": "native", "exitCode": 0}},
		{"failure", Facts{Layer: "native", ExitCode: exitCode(2), FailureCategory: FailureExecution},
			map[string]any{"layer": "native", "exitCode": 2, "failureCategory": "execution_error"}},
		{"interrupted", Facts{Layer: "agent", ExitCode: exitCode(command.Interrupted), FailureCategory: FailureExecution, Interrupted: true},
			map[string]any{"layer": "agent", "exitCode": 130, "failureCategory": "execution_error", "interrupted": true}},
		{"sandbox blocked, empty reason", Facts{Layer: "native", Type: ExtrasTypeSandboxBlocked, Command: "cat a && echo <b>", ExitCode: exitCode(1)},
			map[string]any{"layer": "native", "type": "sandbox_blocked", "reason": "", "resource": "", "command": "cat a && echo <b>", "exitCode": 1}},
		{"sandbox blocked, approved", Facts{Layer: "native", Type: ExtrasTypeSandboxBlocked, Reason: "not writable", Resource: "/etc/x",
			Command: "touch /etc/x", ExitCode: exitCode(1), Approval: []string{"deny"}},
			map[string]any{"layer": "native", "type": "sandbox_blocked", "reason": "not writable", "resource": "/etc/x",
				"command": "touch /etc/x", "exitCode": 1, "approval": []string{"deny"}}},
		{"command blocked", Facts{Type: ExtrasTypeCommandBlocked, Command: "rm", Pattern: "rm"},
			map[string]any{"type": "command_blocked", "command": "rm", "pattern": "rm"}},
		{"truncated", Facts{Layer: "native", ExitCode: exitCode(0), Truncated: true, FullOutputPath: "/tmp/o.txt"},
			map[string]any{"layer": "native", "exitCode": 0, "truncated": true, "fullOutputPath": "/tmp/o.txt"}},
		{"restarted", Facts{Restarted: true}, map[string]any{"restarted": true}},
		{"invalid usage", Facts{FailureCategory: FailureInvalidUsage}, map[string]any{"failureCategory": "invalid_usage"}},
		{"cancelled", Facts{Status: "cancelled"}, map[string]any{"status": "cancelled"}},
		{"hook", Facts{FailureCategory: FailureExecution, BlockedByHook: true}, map[string]any{"failureCategory": "execution_error", "blockedByHook": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Result{Output: "out <&>", IsError: true, Message: "m", Facts: tt.facts}
			old := legacyResult{Output: r.Output, IsError: true, Message: "m", Extras: tt.old}
			for _, escape := range []bool{true, false} {
				got, want := encode(t, r, escape), encode(t, old, escape)
				if got != want {
					t.Errorf("escapeHTML=%v:\n got %s\nwant %s", escape, got, want)
				}
			}
		})
	}
}

func encode(t *testing.T, v any, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A result read back from JSON keeps its facts typed: an exit code is still
// an int after the round trip (a map[string]any made it a float64).
func TestFactsRoundTrip(t *testing.T) {
	in := Result{Output: "x", IsError: true, Facts: Facts{Layer: "native", ExitCode: exitCode(3), FailureCategory: FailureExecution,
		Type: ExtrasTypeSandboxBlocked, Resource: "/etc/x", Approval: []string{"allow once"}, Interrupted: true}}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Result
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
	if c, ok := out.Facts.Exit(); !ok || c != 3 {
		t.Errorf("Exit() = %d, %v; want 3, true", c, ok)
	}
	if err := json.Unmarshal([]byte(`{"output":"x","extras":{"exitCode":"three"}}`), &out); err == nil {
		t.Error("a malformed exit code was accepted")
	}
}
