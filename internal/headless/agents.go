package headless

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// AgentDefinition is one of initialize's agents (the SDK's AgentDefinition):
// the fields Synapse reads. The others (mcpServers, skills, maxTurns, …)
// are named in Ignored.
type AgentDefinition struct {
	Name            string   `json:"-"`
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	Tools           []string `json:"tools"`
	DisallowedTools []string `json:"disallowedTools"`
	Model           string   `json:"model"`
	// Ignored are the definition's other fields, which mean nothing here.
	Ignored []string `json:"-"`
}

// agentFields are the AgentDefinition fields AgentDefinition reads.
var agentFields = []string{"description", "prompt", "tools", "disallowedTools", "model"}

// parseAgents reads initialize's agents (name → AgentDefinition), sorted
// by name. A definition that is not an object, or whose field has the
// wrong JSON type, is an error naming the agent and the field: the host's
// initialize fails with it instead of the agent silently missing.
func parseAgents(raw map[string]json.RawMessage) ([]AgentDefinition, error) {
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []AgentDefinition
	for _, n := range names {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw[n], &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("agent %q: the definition must be an object with description and prompt", n)
		}
		d := AgentDefinition{Name: n}
		if err := json.Unmarshal(raw[n], &d); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return nil, fmt.Errorf("agent %q: %s must be %s, not a JSON %s", n, typ.Field, jsonKind(typ.Field), typ.Value)
			}
			return nil, fmt.Errorf("agent %q: %w", n, err)
		}
		for f := range fields {
			if !slices.Contains(agentFields, f) {
				d.Ignored = append(d.Ignored, f)
			}
		}
		slices.Sort(d.Ignored)
		out = append(out, d)
	}
	return out, nil
}

func jsonKind(field string) string {
	if field == "tools" || field == "disallowedTools" || strings.HasPrefix(field, "tools.") || strings.HasPrefix(field, "disallowedTools.") {
		return "a list of tool names"
	}
	return "a string"
}

// modelAliases are the SDK's model aliases, as the model ids Synapse's
// pricing and providers know.
var modelAliases = map[string]string{
	"sonnet": "claude-sonnet-4-5",
	"opus":   "claude-opus-4-5",
	"haiku":  "claude-haiku-4-5",
}

// AgentModel is the model id an agent definition's model names: "" for
// none or "inherit" (the parent's model), an alias's model id, or the
// id as given.
func AgentModel(m string) string {
	m = strings.TrimSpace(m)
	if m == "" || m == "inherit" {
		return ""
	}
	if id, ok := modelAliases[m]; ok {
		return id
	}
	return m
}
