package subagent

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Definition is a sub-agent type defined at run time by the Agent SDK host
// (its AgentDefinition): the fields Synapse can honour.
type Definition struct {
	Description string
	Prompt      string
	// Tools are the Claude tool names the agent may use (nil: all its
	// parent's); DisallowedTools are taken away.
	Tools           []string
	DisallowedTools []string
	// Model is the model id to run it on ("": the parent's). The caller
	// resolves the SDK's aliases ("sonnet", "inherit") first.
	Model string
}

// DefinitionError is a definition NewCustomKind refused: the agent's name
// and the field at fault, so that the host can fix its options.
type DefinitionError struct {
	Agent, Field, Problem string
}

func (e *DefinitionError) Error() string {
	return fmt.Sprintf("agent %q: %s %s", e.Agent, e.Field, e.Problem)
}

// validCustomName reports whether a custom type may be called name: one
// command word after "task:" (1-64 ASCII letters, digits, '_' or '-', the
// first a letter or digit), without the ":" the skill:* types use, so that
// it never shadows more than a type of the same name.
func validCustomName(name string) bool { return textutil.IsName(name, "_-") }

// Claude Code's tool names, by what they need here (its TodoWrite is
// spelled like the Agent Shell command). Reading tools are what
// a read-only sub-agent (task:explore's sandbox) still has; any writing
// tool needs a writable shell, which then holds every native command.
var (
	readingTools = []string{"Read", "Glob", "Grep", "LS", "NotebookRead", registry.TodoWrite, "WebFetch", "WebSearch", "Task", "Agent"}
	writingTools = []string{"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "BashOutput", "KillShell", "KillBash"}
)

// NewCustomKind makes a sub-agent type of a host's definition. Its tools
// map onto what a kind can express: only reading tools (Read, Glob, Grep,
// …) give a read-only kind like explore; a writing tool (Bash, Edit,
// Write) or no list at all gives a kind like general. MCP tools
// (mcp__server…) are kept only when the list names one. disallowedTools
// takes away write and edit (Edit, Write), every native command's write
// access (Bash: the kind becomes read-only) or the MCP tools (mcp__…).
// notes say what could not be honoured.
func NewCustomKind(name string, d Definition) (k Kind, notes []string, err error) {
	switch {
	case !validCustomName(name):
		return Kind{}, nil, &DefinitionError{name, "name", "must be 1-64 letters, digits, '-' or '_' (it becomes the command task:<name>)"}
	case strings.TrimSpace(d.Description) == "":
		return Kind{}, nil, &DefinitionError{name, "description", "is missing"}
	case strings.TrimSpace(d.Prompt) == "":
		return Kind{}, nil, &DefinitionError{name, "prompt", "is missing"}
	}
	k = Kind{Name: name, Summary: oneLine(d.Description), Model: strings.TrimSpace(d.Model), custom: strings.TrimSpace(d.Prompt)}
	k.Exclude = []string{noNesting}
	mcpAllowed, mcpNamed := true, false
	var unknown []string
	if d.Tools != nil {
		writes := false
		mcpAllowed = false
		for _, t := range d.Tools {
			switch {
			case slices.Contains(writingTools, t):
				writes = true
			case strings.HasPrefix(t, "mcp__"):
				mcpAllowed, mcpNamed = true, true
			case !slices.Contains(readingTools, t):
				unknown = append(unknown, t)
			}
		}
		if !writes {
			k.ReadOnly = true
		}
	}
	for _, t := range d.DisallowedTools {
		switch {
		case t == "Bash":
			k.ReadOnly = true
		case t == "Edit" || t == "Write" || t == "MultiEdit":
			k.Exclude = append(k.Exclude, writers()...)
		case strings.HasPrefix(t, "mcp__"):
			mcpAllowed = false
		case t == "Task" || t == "Agent":
			// Sub-agents never start sub-agents anyway.
		case !slices.Contains(readingTools, t) && !slices.Contains(writingTools, t):
			unknown = append(unknown, t)
		default:
			notes = append(notes, fmt.Sprintf("agent %s: disallowing %s cannot be expressed (the sub-agent keeps it)", name, t))
		}
	}
	if k.ReadOnly {
		k.Exclude = append(k.Exclude, writers()...)
		if mcpAllowed && mcpNamed {
			notes = append(notes, fmt.Sprintf("agent %s: a read-only sub-agent gets no MCP tools (they run outside its sandbox)", name))
		}
		mcpAllowed = false
	}
	if !mcpAllowed {
		k.Exclude = append(k.Exclude, "mcp:")
	}
	slices.Sort(k.Exclude)
	k.Exclude = slices.Compact(k.Exclude)
	if len(unknown) > 0 {
		notes = append(notes, fmt.Sprintf("agent %s: tools %s mean nothing here; ignored", name, strings.Join(unknown, ", ")))
	}
	return k, notes, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Custom holds one session's custom sub-agent types beside the built-in
// ones: a value the session owns (no global state), shared by its task
// handler and its command lists. A custom type named like a built-in one
// replaces it for the session, as Claude Code lets an SDK-defined agent
// replace a built-in agent of the same name. The zero value and nil hold
// none. Safe for concurrent use.
type Custom struct {
	mu    sync.RWMutex
	kinds []Kind
}

// Set replaces the custom types.
func (c *Custom) Set(ks []Kind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kinds = slices.Clone(ks)
}

// Defined returns the custom types, in the order set.
func (c *Custom) Defined() []Kind {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.kinds)
}

// All returns the session's types: the built-in ones (each replaced by a
// custom one of its name), then the other custom ones.
func (c *Custom) All() []Kind {
	defined := c.Defined()
	out := Kinds()
	for _, d := range defined {
		if i := slices.IndexFunc(out, func(k Kind) bool { return k.Name == d.Name }); i >= 0 {
			out[i] = d
			continue
		}
		out = append(out, d)
	}
	return out
}

// Parse reads a task command line against the session's types.
func (c *Custom) Parse(line string) (Request, error) { return parseIn(line, c.All()) }
