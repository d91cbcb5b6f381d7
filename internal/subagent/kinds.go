package subagent

import (
	"embed"
	"fmt"
	"runtime"
	"strings"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
)

//go:embed prompts/*.md
var promptFS embed.FS

// Kind is one sub-agent type: what it is for, the system prompt it gets and
// the permissions it runs under.
type Kind struct {
	// Name is the part after "task:" ("explore", "skill:search").
	Name string
	// Summary is the one-line description used in help texts.
	Summary string
	// Exclude lists the command patterns the sub-agent's restricted Bash
	// tool refuses (tool.NewRestricted syntax: "task:" is a prefix, "edit"
	// an exact command word).
	Exclude []string
	// ReadOnly asks for a shell under a sandbox without a writable
	// workspace (only a private, empty /tmp inside the sandbox is writable).
	ReadOnly bool
	// NoTools runs one model request without any tool (skill:search).
	NoTools bool
	// WritesSkills asks for the skills directory to be writable.
	WritesSkills bool
	// Model, when set, is the model the type runs on unless the task's
	// --model says otherwise (a custom type's definition).
	Model string

	promptFile string
	custom     string // a custom type's system prompt (NewCustomKind)
}

// Kind names.
const (
	Explore      = "explore"
	General      = "general"
	SkillSearch  = "skill:search"
	SkillEnhance = "skill:enhance"
)

// noNesting is in every kind's exclusion list: a sub-agent never starts
// another one, whatever the model writes.
const noNesting = registry.TaskPrefix

// kinds are the sub-agent types, in the order help lists them.
var kinds = []Kind{
	{
		Name:       Explore,
		Summary:    "read-only exploration of the code at the paths named in the prompt; returns findings with file:line references",
		Exclude:    append(writers(), noNesting, "mcp:"),
		ReadOnly:   true,
		promptFile: "explore.md",
	},
	{
		Name:       General,
		Summary:    "research and multi-step work in its own shell (may read, run and change files)",
		Exclude:    []string{noNesting},
		promptFile: "general.md",
	},
	{
		Name:       SkillSearch,
		Summary:    `finds installed skills that fit the prompt; returns JSON {"matched_skills":[{"name","description"}]} (no tools)`,
		NoTools:    true,
		promptFile: "skill-search.md",
	},
	{
		Name:         SkillEnhance,
		Summary:      "creates or improves a skill (SKILL.md and scripts) in the skills directory",
		Exclude:      []string{noNesting},
		WritesSkills: true,
		promptFile:   "skill-enhance.md",
	},
}

// writers are the Agent Shell commands the registry does not mark read-only,
// but sub-agents (excluded as a group): a read-only sub-agent refuses them.
func writers() []string {
	var out []string
	for _, c := range registry.All() {
		if !c.ReadOnly && c.Family != registry.FamilyTask {
			out = append(out, c.Name)
		}
	}
	return out
}

// Kinds returns the sub-agent types.
func Kinds() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		k.Exclude = append([]string(nil), k.Exclude...)
		out[i] = k
	}
	return out
}

// LookupKind finds a type by name.
func LookupKind(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// kindNames lists the valid commands of ks ("task:explore, task:general, …").
func kindNames(ks []Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = registry.TaskPrefix + k.Name
	}
	return strings.Join(names, ", ")
}

// Custom reports whether the kind was defined at run time (NewCustomKind).
func (k Kind) Custom() bool { return k.custom != "" }

// Prompt is the kind's system prompt: a custom type's own, or the
// built-in type's embedded Markdown prompt.
func (k Kind) Prompt() string {
	if k.custom != "" {
		return k.custom
	}
	data, err := promptFS.ReadFile("prompts/" + k.promptFile)
	if err != nil {
		// The files are compiled in; a missing one is a build mistake that tests catch.
		return ""
	}
	return strings.TrimSpace(string(data))
}

// systemPrompt is the kind's prompt followed by the environment it runs in.
func (k Kind) systemPrompt(cwd, skillsDir string) string {
	var b strings.Builder
	b.WriteString(k.Prompt())
	b.WriteString("\n\n# Environment\n\n")
	if cwd != "" {
		fmt.Fprintf(&b, "- Working directory: %s\n", cwd)
	}
	if k.WritesSkills && skillsDir != "" {
		fmt.Fprintf(&b, "- Skills directory (writable): %s\n", skillsDir)
	}
	fmt.Fprintf(&b, "- Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	return b.String()
}
