// Package registry is the one table of the Agent Shell's commands: each
// name with the handler family that serves it, its usage line, its one-line
// help and whether it is read-only. The router classifies with it, the agent
// shell dispatches and answers -h with it, command:search lists it, and the
// tool and views compare a route's name against its constants. It is a leaf,
// so that router (which imports nothing else of ours) and tool (which may not
// import agentsh) can use it; internal/archtest fails when a package outside
// internal/agentsh spells one of these names as a string literal.
package registry

// Families: the handler that serves a command. The values are router.Family's.
const (
	FamilyBuiltin = "builtin"        // the agent shell itself (internal/agentsh)
	FamilyTask    = "task:"          // sub-agents (internal/subagent)
	FamilySkill   = "skill:"         // skill management (internal/skills)
	FamilySearch  = "command:search" // capability search (internal/cmdsearch)
)

// Prefixes of the command groups. A name under one that is not in the table
// still goes to the group's handler, which answers with its list.
const (
	JobPrefix   = "job:"
	TaskPrefix  = "task:"
	SkillPrefix = "skill:"
)

// Command names.
const (
	Read      = "read"
	Write     = "write"
	Edit      = "edit"
	Bash      = "bash"
	TodoWrite = "TodoWrite"

	JobStart = JobPrefix + "start"
	JobRead  = JobPrefix + "read"
	JobWait  = JobPrefix + "wait"
	JobList  = JobPrefix + "list"
	JobStop  = JobPrefix + "stop"

	TaskExplore      = TaskPrefix + "explore"
	TaskGeneral      = TaskPrefix + "general"
	TaskSkillSearch  = TaskPrefix + "skill:search"
	TaskSkillEnhance = TaskPrefix + "skill:enhance"

	SkillLoad     = SkillPrefix + "load"
	SkillList     = SkillPrefix + "list"
	SkillInfo     = SkillPrefix + "info"
	SkillImport   = SkillPrefix + "import"
	SkillRollback = SkillPrefix + "rollback"
	SkillDelete   = SkillPrefix + "delete"

	CommandSearch = "command:search"
)

// Command is one Agent Shell command.
type Command struct {
	Name   string
	Family string // one of the Family constants
	// Usage is the one-line usage the agent shell prints for -h and after a
	// usage error (builtins only; the other families' handlers print theirs).
	Usage string
	// Help is one line for command:search; Keywords help it match.
	Help     string
	Keywords []string
	// ReadOnly: the command changes no file and no skill by itself. A
	// shell command it runs (bash, job:start) is held by the sandbox policy,
	// which is read-only in plan mode and for the explore sub-agent.
	ReadOnly bool
}

var commands = []Command{
	{Read, FamilyBuiltin, "Usage: read <file_path> [--offset N] [--limit N]",
		"Read a file with line numbers (cat -n style); --offset and --limit page through long files.",
		[]string{"file", "cat", "view", "open", "show", "lines"}, true},
	{Write, FamilyBuiltin, "Usage: write <file_path> <content>  (or: write <file_path> <<'EOF' ... EOF)",
		"Create or overwrite a file with the given content.",
		[]string{"file", "create", "save", "new"}, false},
	{Edit, FamilyBuiltin, "Usage: edit <file_path> <old_text> <new_text> [--all]",
		"Replace an exact piece of text in a file.",
		[]string{"file", "replace", "modify", "change", "patch"}, false},
	{Bash, FamilyBuiltin, "Usage: bash <command>",
		"Run a command explicitly in the persistent shell (same cwd and environment as native commands).",
		[]string{"shell", "run", "execute", "command", "native"}, true},
	{TodoWrite, FamilyBuiltin, `Usage: TodoWrite '{"todos":[{"content":"...","activeForm":"...","status":"pending|in_progress|completed"}]}'`,
		"Replace the task list with a JSON list of todos (pending, in_progress, completed).",
		[]string{"todo", "plan", "tasks", "progress", "checklist"}, true},
	{TaskExplore, FamilyTask, "",
		"Start a read-only sub-agent that explores the code base and reports back.",
		[]string{"subagent", "agent", "search", "investigate", "code", "read-only"}, true},
	{TaskGeneral, FamilyTask, "",
		"Start a general-purpose sub-agent for a self-contained multi-step task.",
		[]string{"subagent", "agent", "delegate", "parallel"}, false},
	{TaskSkillSearch, FamilyTask, "",
		"Ask a sub-agent which installed skills fit a request; answers with skill names as JSON.",
		[]string{"subagent", "skill", "find", "match"}, true},
	{TaskSkillEnhance, FamilyTask, "",
		"Start a sub-agent that creates or improves a skill from what this session learnt (SKILL.md and scripts; the store keeps a snapshot).",
		[]string{"subagent", "skill", "create", "improve", "learn", "enhance", "write"}, false},
	{SkillLoad, FamilySkill, "",
		"Print a skill's SKILL.md so you can follow its instructions.",
		[]string{"skill", "instructions", "open"}, true},
	{SkillList, FamilySkill, "",
		"List installed skills with their descriptions.",
		[]string{"skill", "installed", "available"}, true},
	{SkillInfo, FamilySkill, "",
		"Show a skill's description, version, scripts and saved versions.",
		[]string{"skill", "details", "version", "scripts"}, true},
	{SkillImport, FamilySkill, "",
		"Install skill folders from a directory or a git URL (conflicts reported; --force snapshots first).",
		[]string{"skill", "install", "add", "git", "clone"}, false},
	{SkillRollback, FamilySkill, "",
		"Restore a previous snapshot of a skill.",
		[]string{"skill", "undo", "restore", "version", "revert"}, false},
	{SkillDelete, FamilySkill, "",
		"Remove a skill (kept as a snapshot, restorable with skill:rollback).",
		[]string{"skill", "remove", "uninstall"}, false},
	{JobStart, FamilyBuiltin, "Usage: job:start <command>",
		"Run a command in the background (dev server, --watch, long build); returns a job id at once.",
		[]string{"background", "server", "daemon", "watch", "long", "async", "job"}, true},
	{JobRead, FamilyBuiltin, "Usage: job:read <id>",
		"Show a background job's new output (what it printed since you last looked).",
		[]string{"background", "job", "output", "log", "tail"}, true},
	{JobWait, FamilyBuiltin, "Usage: job:wait <id> [--for REGEX] [--timeout 30s]",
		"Wait until a background job prints a line matching a pattern, ends, or a timeout passes.",
		[]string{"background", "job", "wait", "until", "ready", "pattern"}, true},
	{JobList, FamilyBuiltin, "Usage: job:list",
		"List the session's background jobs and their state.",
		[]string{"background", "jobs", "list", "running"}, true},
	{JobStop, FamilyBuiltin, "Usage: job:stop <id>",
		"Stop a background job with its whole process tree.",
		[]string{"background", "job", "kill", "stop", "terminate"}, true},
	{CommandSearch, FamilySearch, "",
		"Search all commands (agent shell, skills, MCP tools) by keyword.",
		[]string{"find", "help", "discover", "commands", "tools"}, true},
}

// All returns every command, in the order command:search lists them.
func All() []Command {
	out := make([]Command, len(commands))
	copy(out, commands)
	return out
}

// Lookup returns the command named name.
func Lookup(name string) (Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Names returns the names of the commands of family, in table order.
func Names(family string) []string {
	var out []string
	for _, c := range commands {
		if c.Family == family {
			out = append(out, c.Name)
		}
	}
	return out
}

// Summary is the list of Agent Shell commands for a hint: the exact-word
// builtins, then one form per group ("job:<action>", "task:<type>",
// "skill:<action>"), then command:search.
func Summary() string {
	s := ""
	for _, c := range commands {
		if c.Family == FamilyBuiltin && !hasGroup(c.Name) {
			s += c.Name + ", "
		}
	}
	return s + JobPrefix + "<action>, " + TaskPrefix + "<type>, " + SkillPrefix + "<action>, " + CommandSearch
}

func hasGroup(name string) bool {
	for _, p := range []string{JobPrefix, TaskPrefix, SkillPrefix} {
		if len(name) > len(p) && name[:len(p)] == p {
			return true
		}
	}
	return false
}
