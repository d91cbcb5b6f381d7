// Package router classifies a Bash-tool command line into the layer that runs
// it: native bash, the built-in Agent Shell, or an extension (MCP tools, skill
// scripts). It is pure: no I/O, no state; the Agent Shell's names come from
// its one table (internal/agentsh/registry), the only package of ours it imports.
package router

import (
	"strings"
	"unicode"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
)

// Layer is the part of Synapse that runs a command.
type Layer int

// Layers.
const (
	// Native commands run in the persistent bash session inside the sandbox.
	Native Layer = iota
	// Agent commands are built in: read, write, edit, bash, TodoWrite,
	// task:<type>, skill:<action>, command:search.
	Agent
	// Extension commands come from outside: mcp:<server>:<tool> and
	// skill:<skill>:<script>.
	Extension
)

func (l Layer) String() string {
	switch l {
	case Native:
		return "native"
	case Agent:
		return "agent"
	case Extension:
		return "extension"
	}
	return "unknown"
}

// Family groups the commands served by one handler. The Bash tool looks its
// handlers up by family.
type Family string

// Families.
const (
	FamilyNative      Family = ""                     // bash in the sandbox
	FamilyBuiltin     Family = registry.FamilyBuiltin // read, write, edit, bash, TodoWrite, job:*
	FamilyTask        Family = registry.FamilyTask    // task:<type> sub-agents
	FamilySkill       Family = registry.FamilySkill   // skill:<action> skill management
	FamilySearch      Family = registry.FamilySearch  // capability search
	FamilyMCP         Family = "mcp:"                 // mcp:<server>:<tool>
	FamilySkillScript Family = "skill:*:*"            // skill:<skill>:<script>
)

// Route is where one command line goes.
type Route struct {
	Layer  Layer
	Family Family
	// Name is the command word: "read", "task:explore", "skill:load",
	// "mcp:srv:tool", "skill:a:b", or for native commands the first
	// whitespace-separated word as written ("ls", "./run.sh").
	Name string
}

// Classify routes one command line. Leading whitespace is ignored; the command
// word ends at the first whitespace. Everything that is not an Agent Shell or
// extension command is native.
func Classify(line string) Route {
	word := FirstWord(line)
	if c, ok := registry.Lookup(word); ok {
		return Route{Layer: Agent, Family: Family(c.Family), Name: word}
	}
	switch {
	case strings.HasPrefix(word, registry.JobPrefix) && len(word) > len(registry.JobPrefix):
		// An unknown job:<action> is served with the builtins, which list theirs.
		return Route{Layer: Agent, Family: FamilyBuiltin, Name: word}
	case strings.HasPrefix(word, registry.TaskPrefix) && len(word) > len(registry.TaskPrefix):
		return Route{Layer: Agent, Family: FamilyTask, Name: word}
	case strings.HasPrefix(word, "mcp:"):
		// mcp: alone lists the configured servers.
		return Route{Layer: Extension, Family: FamilyMCP, Name: word}
	case strings.HasPrefix(word, registry.SkillPrefix) && len(word) > len(registry.SkillPrefix):
		// skill:<action> manages skills; skill:<skill>:<script> runs a script.
		if strings.Count(word, ":") >= 2 {
			return Route{Layer: Extension, Family: FamilySkillScript, Name: word}
		}
		return Route{Layer: Agent, Family: FamilySkill, Name: word}
	}
	return Route{Layer: Native, Family: FamilyNative, Name: word}
}

// FirstWord returns the command word of line: the text after leading
// whitespace up to the next whitespace.
func FirstWord(line string) string {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		return line[:i]
	}
	return line
}

// Rest returns what follows the command word, with the separating whitespace
// removed (trailing whitespace is kept: it may belong to content).
func Rest(line string) string {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	i := strings.IndexFunc(line, unicode.IsSpace)
	if i < 0 {
		return ""
	}
	return strings.TrimLeftFunc(line[i:], unicode.IsSpace)
}
