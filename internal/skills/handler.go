package skills

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Handler runs every `skill:` command line: the agent shell commands
// skill:load|list|info|import|rollback|delete and the extension commands
// skill:<skill>:<script>.
type Handler struct {
	Index *Index
	Store *Store // the user store; nil makes import/rollback/delete unavailable
	// Cwd returns the session's current directory (where scripts run and
	// relative import paths resolve).
	Cwd     func() string
	Home    string // the user's home, for ~ in import paths
	Scripts RunOptions
	Timeout time.Duration // per git clone / script when RunOptions.Timeout is zero
	// Paths applies the sandbox's read policy to skill:import of a local
	// folder: the copy runs in the agent's process, into a store commands
	// read freely, so files the policy keeps from commands are left out.
	// nil allows every path.
	Paths PathChecker
	// Merge merges the skill folder dir into the installed skill target
	// (skill:import --merge; the skill-enhance sub-agent in production) and
	// says what happened; nil makes --merge unavailable.
	Merge func(ctx context.Context, dir, target string) (string, error)
	// Import says whether skill:import may clone a repository on the host
	// and install into the store when the model asks for it. The zero value
	// refuses both.
	Import ImportPolicy
}

// ImportPolicy governs skill:import commands the model runs. A clone is a
// network request from the host (which the sandbox does not cover) to a
// place the model chose; an install writes the user store, which the
// sessions of every project read, so a skill a hostile repository talks
// the model into importing would outlive that repository.
type ImportPolicy struct {
	// ApproveClone is asked before each clone (the REPL's and ACP's prompt;
	// synapse run --allow-clone approves all); nil refuses.
	ApproveClone func(ctx context.Context, url string) bool
	// ApproveInstall is asked before an import changes the store (the
	// REPL's and ACP's prompt; synapse run --allow-skill-import approves
	// all); nil refuses.
	ApproveInstall func(ctx context.Context, req InstallRequest) bool
	// UserTyped: the commands are the user's own (synapse exec): nothing
	// is asked, and clones may use the user's SSH agent, keys and git
	// credential helpers. Otherwise a clone runs with none of them.
	UserTyped bool
}

// InstallRequest is what a skill:import the model ran is about to install,
// put to the user before the store changes.
type InstallRequest struct {
	Source string // as the model wrote it
	Store  string // the user store's folder
	Skills []PlannedSkill
}

// String says what the import would do, for a question to the user.
func (r InstallRequest) String() string {
	var names []string
	for _, s := range r.Skills {
		n := strconv.Quote(s.Name)
		if s.Replaces {
			n += " (replacing the installed one; it is kept as a snapshot)"
		}
		names = append(names, n)
	}
	return fmt.Sprintf("install the skill%s %s from %s into %s, where the sessions of every project find them",
		plural(len(names)), strings.Join(names, ", "), textutil.Sanitize(r.Source), textutil.Sanitize(r.Store))
}

// userTypedKey marks a context whose command the user typed.
type userTypedKey struct{}

// UserTyped marks ctx as carrying a command the user typed themselves (the
// REPL's /skill:… commands): it is treated as ImportPolicy.UserTyped.
func UserTyped(ctx context.Context) context.Context {
	return context.WithValue(ctx, userTypedKey{}, true)
}

func (h *Handler) userTyped(ctx context.Context) bool {
	typed, _ := ctx.Value(userTypedKey{}).(bool)
	return h.Import.UserTyped || typed
}

// noOneToAsk is the refusal of a model's import when nobody can approve
// what it would do.
func noOneToAsk(what, flag, src string) error {
	return fmt.Errorf("skill:import %s would %s; that needs the user's approval, and there is no one to ask here, so nothing was imported. "+
		"The user can allow it with `synapse run %s`, approve it when the REPL asks, or run `synapse exec 'skill:import %s'` themselves. "+
		"A skill needed only in this project can be copied into the project's .synapse/skills/ folder instead",
		src, what, flag, src)
}

// allowClone reports whether url may be cloned now, or why not.
func (h *Handler) allowClone(ctx context.Context, url string) error {
	if h.userTyped(ctx) {
		return nil
	}
	if h.Import.ApproveClone == nil {
		return noOneToAsk("clone a repository on the host", "--allow-clone", url)
	}
	if !h.Import.ApproveClone(ctx, url) {
		return fmt.Errorf("the user did not allow cloning %s on the host; nothing was imported", url)
	}
	return nil
}

// installRefusal is the refusal of a model's import when nobody can approve it.
func (h *Handler) installRefusal(src string) error {
	return noOneToAsk("install skills into the user store "+h.Store.Dir+", which the sessions of every project use", "--allow-skill-import", src)
}

// approveInstall is Import's approval of what a model's import installs
// (nil for the user's own command: nothing to ask).
func (h *Handler) approveInstall(ctx context.Context, src string) func([]PlannedSkill) error {
	if h.userTyped(ctx) {
		return nil
	}
	return func(plan []PlannedSkill) error {
		req := InstallRequest{Source: src, Store: h.Store.Dir, Skills: plan}
		if h.Import.ApproveInstall == nil {
			return h.installRefusal(src)
		}
		if !h.Import.ApproveInstall(ctx, req) {
			return fmt.Errorf("the user refused to let skill:import %s; nothing was imported", req)
		}
		return nil
	}
}

// PathChecker applies the sandbox policy to a path (the agent's sandbox
// manager implements it).
type PathChecker interface {
	CheckPath(path string, write bool) (blocked bool, reason, resource string)
}

// HostPather maps a path as sandboxed commands see it to the host file it
// is (/tmp is the sandbox's private temp directory); the agent's sandbox
// manager implements it.
type HostPather interface {
	HostPath(path string) string
}

// hostPath maps a local import source through h.Paths when it is a
// HostPather: `skill:import /tmp/x` imports what commands made in /tmp/x,
// never a file of the host's /tmp.
func (h *Handler) hostPath(p string) string {
	if hp, ok := h.Paths.(HostPather); ok {
		return hp.HostPath(p)
	}
	return p
}

// readFilter turns h.Paths into Import's filter (nil without one).
func (h *Handler) readFilter() ReadFilter {
	if h.Paths == nil {
		return nil
	}
	return func(path string) (bool, string) {
		blocked, reason, _ := h.Paths.CheckPath(path, false)
		return !blocked, reason
	}
}

// ManagementCommand describes one skill:<verb> command.
type ManagementCommand struct {
	Name, Args, Summary, Help string
}

const importArgs = "<dir|git-url> [--force] [--continue[=a,b]] [--merge[=src:installed,…]] [--path <subdir>]"

// Commands are the agent shell skill commands, in the order they are
// listed: the registry's skill family (a test ties the two), with their help.
var Commands = []ManagementCommand{
	{registry.SkillLoad, "<name>", "print a skill's SKILL.md so you can follow it",
		"Prints the skill's SKILL.md (frontmatter and instructions) with its folder and script commands.\nRead it fully, then follow its instructions; files it mentions are relative to the folder shown."},
	{registry.SkillList, "", "list installed skills with their descriptions",
		"Lists every skill (user skills, then project skills from .synapse/skills) with version, description and script commands."},
	{registry.SkillInfo, "<name>", "show a skill's description, version, scripts and saved versions",
		"Shows description, version, tags, folder, the skill:<name>:<script> commands with a one-line summary each, and the snapshots that skill:rollback can restore."},
	{registry.SkillImport, importArgs, "install skill folder(s) from a folder or a git repository",
		"Copies the skill folder (the one holding SKILL.md, or every skill folder up to three levels down) into the user skill store.\nA git URL (https://, git@, ssh://, file://) is cloned into a temporary folder first. A source with no SKILL.md has nothing to import (exit 0).\nA skill of the same name is never replaced silently: the import fails and says so. With --force the installed version is snapshotted first (restore it with skill:rollback); or rename the skill you import (its name: in SKILL.md) to keep both.\n" +
			"A new skill similar to an installed one (by name and description) is not installed either; the warning names both:\n" +
			"  --continue=a,b               install skills a and b anyway, as separate skills (bare --continue: every skill of the source)\n" +
			"  --merge=src:installed,…      have the skill-enhance sub-agent merge source skill src into the installed skill named installed (src is not installed)\n" +
			"                               (bare --merge: each similar skill into the one it resembles)\n" +
			"Both take comma-separated lists and may be repeated; a skill may not be in both. --force replaces a skill of the same name and is not held up by a different similar skill.\n" +
			"--path <subdir> imports only from that sub-folder of the source.\nFiles the sandbox keeps from commands (.env, credentials, …) are left out of a folder import, and named."},
	{registry.SkillRollback, "<name> [snapshot]", "list a skill's saved versions, or restore one",
		"Without a snapshot number, lists the saved versions (number, date, reason) and changes nothing.\nWith one, restores it. The current version is saved first, so rolling back never loses a version and another rollback switches back. A deleted skill can be restored this way."},
	{registry.SkillDelete, "<name>", "remove a skill (kept as a snapshot)",
		"Removes the skill from the user store. It is kept as a snapshot and skill:rollback <name> brings it back."},
}

// Valid lists the valid skill commands, for unknown-command errors.
func Valid() string {
	var b strings.Builder
	for _, c := range Commands {
		fmt.Fprintf(&b, "  %-48s %s\n", strings.TrimSpace(c.Name+" "+c.Args), c.Summary)
	}
	fmt.Fprintf(&b, "  %-48s %s\n", "skill:<skill>:<script> [args…]", "run a script shipped in a skill (--help shows its usage)")
	return b.String()
}

// Run implements command.Handler.
func (h *Handler) Run(ctx context.Context, line string) command.Result {
	head, rest := splitHead(line)
	if !strings.HasPrefix(head, "skill:") {
		return command.Fail(fmt.Sprintf("not a skill command: %q\nValid commands:\n%s", head, Valid()))
	}
	args, err := cmdline.SplitArgs(rest)
	if err != nil {
		return command.Fail(err.Error())
	}
	name := strings.TrimPrefix(head, "skill:")
	if skill, script, ok := strings.Cut(name, ":"); ok {
		return h.runScript(ctx, skill, script, args)
	}
	for _, c := range Commands {
		if c.Name == head {
			if len(args) == 1 && args[0] == "-h" {
				return command.OK(fmt.Sprintf("Usage: %s %s\n", c.Name, c.Args))
			}
			if len(args) == 1 && args[0] == "--help" {
				return command.OK(fmt.Sprintf("Usage: %s %s\n\n%s — %s.\n\n%s\n", c.Name, c.Args, c.Name, c.Summary, c.Help))
			}
		}
	}
	switch head {
	case registry.SkillLoad:
		return h.load(args)
	case registry.SkillList:
		return h.list(args)
	case registry.SkillInfo:
		return h.info(args)
	case registry.SkillImport:
		return h.importCmd(ctx, args)
	case registry.SkillRollback:
		return h.rollback(args)
	case registry.SkillDelete:
		return h.delete(args)
	}
	msg := fmt.Sprintf("Unknown skill command %q. Valid commands:\n%s", head, Valid())
	if s, ok := h.Index.Get(name); ok {
		msg += fmt.Sprintf("\n%q is a skill: load it with `skill:load %s`", s.Name, s.Name)
		if cmds := s.ScriptCommands(); len(cmds) > 0 {
			msg += " or run one of its scripts: " + strings.Join(cmds, ", ")
		}
		msg += "\n"
	}
	return command.Fail(msg)
}

// splitHead separates the command word from its arguments at the first whitespace.
func splitHead(line string) (head, rest string) {
	line = strings.TrimSpace(line)
	if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
		return line[:i], line[i+1:]
	}
	return line, ""
}

func oneName(cmd string, args []string) (string, *command.Result) {
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		r := command.Usage(fmt.Sprintf("Usage: %s <name>\nRun skill:list to see the installed skills.", cmd))
		return "", &r
	}
	return args[0], nil
}

func (h *Handler) mustGet(name string) (*Skill, *command.Result) {
	if s, ok := h.Index.Get(name); ok {
		return s, nil
	}
	var names []string
	for _, s := range h.Index.Skills() {
		names = append(names, s.Name)
	}
	msg := fmt.Sprintf("Unknown skill %q.", name)
	if len(names) > 0 {
		msg += " Installed skills: " + strings.Join(names, ", ") + "."
	} else {
		msg += " No skills are installed; add one with skill:import <dir|git-url>."
	}
	r := command.Fail(msg)
	return nil, &r
}

func (h *Handler) load(args []string) command.Result {
	name, bad := oneName(registry.SkillLoad, args)
	if bad != nil {
		return *bad
	}
	s, bad := h.mustGet(name)
	if bad != nil {
		return *bad
	}
	data, err := readSkillFile(s.Dir)
	if err != nil {
		return command.Fail(err.Error())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill: %s", s.Name)
	if s.Version != "" {
		fmt.Fprintf(&b, " (version %s)", s.Version)
	}
	fmt.Fprintf(&b, "\nFolder: %s (paths in the instructions are relative to it)\n", s.Dir)
	if cmds := s.ScriptCommands(); len(cmds) > 0 {
		fmt.Fprintf(&b, "Script commands (run them directly; --help shows usage): %s\n", strings.Join(cmds, ", "))
	}
	b.WriteString("\n")
	b.WriteString(data)
	if !strings.HasSuffix(data, "\n") {
		b.WriteString("\n")
	}
	return command.OK(b.String())
}

func (h *Handler) list(args []string) command.Result {
	if len(args) > 0 {
		return command.Usage("Usage: skill:list")
	}
	list := h.Index.Skills()
	var b strings.Builder
	if len(list) == 0 {
		b.WriteString("No skills are installed.")
		if h.Store != nil {
			fmt.Fprintf(&b, " Put skill folders in %s or run skill:import <dir|git-url>.", h.Store.Dir)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "%d skill(s):\n", len(list))
		for _, s := range list {
			b.WriteString(s.Name)
			if s.Version != "" {
				fmt.Fprintf(&b, " (%s)", s.Version)
			}
			if s.Source == SourceProject {
				b.WriteString(" [project]")
			} else if n := h.versionCount(s.Name); n > 0 {
				fmt.Fprintf(&b, " [%d saved version%s]", n, plural(n))
			}
			if d := textutil.OneLine(s.Description, 160); d != "" {
				b.WriteString(" — " + d) // no dangling dash for a skill without one
			}
			b.WriteString("\n")
			if cmds := s.ScriptCommands(); len(cmds) > 0 {
				fmt.Fprintf(&b, "  scripts: %s\n", strings.Join(cmds, ", "))
			}
		}
		b.WriteString("Load one with skill:load <name>.\n")
	}
	for _, p := range h.Index.Problems() {
		fmt.Fprintf(&b, "warning: %s\n", p)
	}
	return command.OK(b.String())
}

func (h *Handler) info(args []string) command.Result {
	name, bad := oneName(registry.SkillInfo, args)
	if bad != nil {
		return *bad
	}
	s, bad := h.mustGet(name)
	if bad != nil {
		return *bad
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Name: %s\n", s.Name)
	fmt.Fprintf(&b, "Description: %s\n", strings.TrimSpace(s.Description))
	fmt.Fprintf(&b, "Version: %s\n", orNone(s.Version))
	if len(s.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", strings.Join(s.Tags, ", "))
	}
	if s.License != "" {
		fmt.Fprintf(&b, "License: %s\n", s.License)
	}
	fmt.Fprintf(&b, "Source: %s (%s)\n", s.Source, s.Dir)
	if len(s.Scripts) == 0 {
		b.WriteString("Scripts: none\n")
	} else {
		b.WriteString("Scripts:\n")
		for _, sc := range s.Scripts {
			sum := textutil.OneLine(sc.Doc(), 100)
			if sum == "" {
				sum = "(no description; --help shows a generic usage)"
			}
			fmt.Fprintf(&b, "  skill:%s:%s  %s\n", s.Name, sc.Name, sum)
		}
	}
	if s.HasReferences {
		b.WriteString("References: references/\n")
	}
	if s.HasAssets {
		b.WriteString("Assets: assets/\n")
	}
	if h.Store != nil && s.Source == SourceUser {
		created, updated := h.Store.Times(s.Dir, s.Name)
		fmt.Fprintf(&b, "Created: %s\nUpdated: %s\n", stamp(created), stamp(updated))
		b.WriteString(h.versionList(s.Name))
	}
	return command.OK(b.String())
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// versionCount is how many snapshots of name the store keeps (0 without a store).
func (h *Handler) versionCount(name string) int {
	if h.Store == nil {
		return 0
	}
	vs, _ := h.Store.Versions(name)
	return len(vs)
}

// versionList is the "Snapshots" block of skill:info and skill:rollback <name>.
func (h *Handler) versionList(name string) string {
	vs, err := h.Store.Versions(name)
	switch {
	case err != nil:
		return fmt.Sprintf("Snapshots: unreadable (%v)\n", err)
	case len(vs) == 0:
		return "Snapshots: none\n"
	}
	cur, hasCur := h.Store.CurrentSnapshot(name, vs)
	var b strings.Builder
	fmt.Fprintf(&b, "Snapshots (%d, oldest first; restore one with skill:rollback %s <number>):\n", len(vs), name)
	for _, v := range vs {
		mark := ""
		if hasCur && v.Number == cur.Number {
			mark = "  (installed)"
		}
		fmt.Fprintf(&b, "  %d  version %s  %s  %s%s\n", v.Number, orNone(v.Version), stamp(v.Created), v.Reason, mark)
	}
	return b.String()
}

func (h *Handler) cwd() string {
	if h.Cwd != nil {
		return h.Cwd()
	}
	return "."
}

func (h *Handler) importCmd(ctx context.Context, args []string) command.Result {
	usage := "Usage: skill:import " + importArgs
	if h.Store == nil {
		return command.Fail("skill:import is not available: no user skill store is configured")
	}
	var src, sub string
	var sim similarPlan
	force := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--force" || a == "-f":
			force = true
		case a == "--merge" || a == "--continue" || strings.HasPrefix(a, "--merge=") || strings.HasPrefix(a, "--continue="):
			if err := sim.add(a); err != nil {
				return command.Usage(err.Error() + "\n" + usage)
			}
		case a == "--path":
			if i+1 >= len(args) {
				return command.Usage("--path needs a value\n" + usage)
			}
			i++
			sub = args[i]
		case strings.HasPrefix(a, "--path="):
			sub = strings.TrimPrefix(a, "--path=")
		case strings.HasPrefix(a, "-"):
			return command.Usage(fmt.Sprintf("unknown option %s\n%s", a, usage))
		case src != "":
			return command.Usage("only one source can be imported at a time\n" + usage)
		default:
			src = a
		}
	}
	if src == "" {
		return command.Usage(usage)
	}
	if err := sim.validate(); err != nil {
		return command.Usage(err.Error() + "\n" + usage)
	}
	named := src // as the model wrote it, for messages: /tmp/x, not the host's private temp path
	if !IsGitURL(src) {
		if src == "~" || strings.HasPrefix(src, "~/") {
			src = filepath.Join(h.Home, strings.TrimPrefix(src, "~"))
		}
		if !filepath.IsAbs(src) {
			src = filepath.Join(h.cwd(), src)
		}
		named = filepath.Clean(src)
		src = h.hostPath(named)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	if !h.userTyped(ctx) && h.Import.ApproveInstall == nil {
		// Refused before any clone: nobody could approve the install.
		return command.Fail(h.installRefusal(named).Error())
	}
	if IsGitURL(src) {
		if err := h.allowClone(ctx, src); err != nil {
			return command.Fail(err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seen := map[string]bool{}
	results, err := h.Store.Import(ctx, src, sub, ImportOptions{Force: force, Allow: h.readFilter(), Check: h.similarCheck(ctx, &sim, seen),
		UserCredentials: h.userTyped(ctx), Approve: h.approveInstall(ctx, named)})
	h.Index.Invalidate()
	if len(seen) > 0 {
		err = errors.Join(err, sim.unused(seen, named))
	}
	var b strings.Builder
	for _, r := range results {
		if r.Handled {
			b.WriteString(r.Note + "\n")
			continue
		}
		if r.Note != "" {
			b.WriteString(r.Note + "\n")
		}
		s, _ := Load(r.Dir, SourceUser)
		fmt.Fprintf(&b, "Imported skill %q", r.Name)
		if s != nil && s.Version != "" {
			fmt.Fprintf(&b, " (version %s)", s.Version)
		}
		fmt.Fprintf(&b, " into %s.\n", r.Dir)
		if r.Replaced != nil {
			fmt.Fprintf(&b, "  The previous version is kept as snapshot %d; `skill:rollback %s %d` restores it.\n", r.Replaced.Number, r.Name, r.Replaced.Number)
		}
		if s != nil && len(s.Scripts) > 0 {
			fmt.Fprintf(&b, "  Scripts: %s\n", strings.Join(s.ScriptCommands(), ", "))
		}
		if len(r.Skipped) > 0 {
			fmt.Fprintf(&b, "  Skipped (symlinks or special files): %s\n", strings.Join(r.Skipped, ", "))
		}
		if len(r.Withheld) > 0 {
			fmt.Fprintf(&b, "  Left out (the sandbox policy keeps them from commands): %s\n", strings.Join(r.Withheld, ", "))
		}
	}
	var nothing *NothingToImportError
	if errors.As(err, &nothing) {
		return command.OK(strings.ReplaceAll(err.Error(), src, named) + "\n")
	}
	res := command.OK(b.String())
	if err != nil {
		res.ExitCode = 1
		res.Stderr = strings.ReplaceAll(err.Error(), src, named)
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			res.ExitCode = command.Interrupted
		}
	}
	return res
}

func (h *Handler) userOnly(name string) *command.Result {
	if h.Store == nil {
		r := command.Fail("no user skill store is configured")
		return &r
	}
	if isDir(h.Store.skillDir(name)) {
		return nil // in the store, even if a project skill of that name shadows it
	}
	if s, ok := h.Index.Get(name); ok && s.Source != SourceUser {
		r := command.Fail(fmt.Sprintf("skill %q is a project skill in %s; skill:rollback and skill:delete manage only %s. Change it in the project instead.", name, s.Dir, h.Store.Dir))
		return &r
	}
	return nil
}

func (h *Handler) rollback(args []string) command.Result {
	usage := "Usage: skill:rollback <name> [snapshot]\nskill:rollback <name> lists the snapshots."
	if len(args) < 1 || len(args) > 2 || strings.HasPrefix(args[0], "-") {
		return command.Usage(usage)
	}
	name := args[0]
	if err := checkName(name); err != nil {
		return command.Fail(err.Error())
	}
	if bad := h.userOnly(name); bad != nil {
		return *bad
	}
	if len(args) == 1 {
		// Restoring is a choice among versions: show them, change nothing.
		list := h.versionList(name)
		if !isDir(h.Store.skillDir(name)) {
			list = fmt.Sprintf("Skill %q is not installed.\n", name) + list
		}
		return command.OK(list)
	}
	number, err := strconv.Atoi(strings.TrimPrefix(strings.ToLower(args[1]), "v"))
	if err != nil || number <= 0 {
		number = 0
		vs, _ := h.Store.Versions(name)
		for _, v := range vs { // accept the frontmatter version too (the newest snapshot of it)
			if v.Version == args[1] {
				number = v.Number
			}
		}
		if number <= 0 {
			return command.Usage(fmt.Sprintf("snapshot %q is not a snapshot number or a known version of %s\n%s", args[1], name, usage))
		}
	}
	restored, saved, err := h.Store.Rollback(name, number)
	h.Index.Invalidate()
	if err != nil {
		return command.Fail(err.Error())
	}
	msg := fmt.Sprintf("Rolled back skill %q to snapshot %d", name, restored.Number)
	if restored.Version != "" {
		msg += fmt.Sprintf(" (version %s)", restored.Version)
	}
	msg += ".\n"
	if saved != nil {
		msg += fmt.Sprintf("The replaced version is kept as snapshot %d; `skill:rollback %s %d` switches back.\n", saved.Number, name, saved.Number)
	}
	return command.OK(msg)
}

func (h *Handler) delete(args []string) command.Result {
	name, bad := oneName(registry.SkillDelete, args)
	if bad != nil {
		return *bad
	}
	if bad := h.userOnly(name); bad != nil {
		return *bad
	}
	snap, err := h.Store.Delete(name)
	h.Index.Invalidate()
	if err != nil {
		return command.Fail(err.Error())
	}
	return command.OK(fmt.Sprintf("Deleted skill %q. It is kept as snapshot %d; `skill:rollback %s %d` restores it.\n", name, snap.Number, name, snap.Number))
}

func (h *Handler) runScript(ctx context.Context, skillName, scriptName string, args []string) command.Result {
	s, bad := h.mustGet(skillName)
	if bad != nil {
		return *bad
	}
	sc, ok := s.Script(scriptName)
	if !ok {
		if len(s.Scripts) == 0 {
			return command.Fail(fmt.Sprintf("Skill %q has no scripts. Load its instructions with skill:load %s.", s.Name, s.Name))
		}
		return command.Fail(fmt.Sprintf("Skill %q has no script %q. Its script commands: %s", s.Name, scriptName, strings.Join(s.ScriptCommands(), ", ")))
	}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		return command.OK(ScriptHelp(s, sc))
	}
	opts := h.Scripts
	if opts.Timeout == 0 {
		opts.Timeout = h.Timeout
	}
	return sc.Run(ctx, s.Dir, args, h.cwd(), opts)
}

// ScriptHelp is the -h/--help text of a script command: its docstring or
// header comment, or a generic usage when it has none.
func ScriptHelp(s *Skill, sc Script) string {
	cmd := "skill:" + s.Name + ":" + sc.Name
	rel, _ := filepath.Rel(s.Dir, sc.Path)
	how := "run directly"
	if in, err := sc.Interpreter(); err == nil && len(in) > 0 {
		how = "run with " + strings.Join(in, " ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s [args…]\n", cmd)
	fmt.Fprintf(&b, "Script %s of skill %q (%s) in the current directory; arguments are passed unchanged.\n\n", rel, s.Name, how)
	if doc := sc.Doc(); doc != "" {
		b.WriteString(doc)
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "The script has no docstring or header comment. Read %s or skill:load %s for how to use it.\n", sc.Path, s.Name)
	}
	return b.String()
}

func readSkillFile(dir string) (string, error) {
	data, err := readFileLimited(filepath.Join(dir, SkillFile), 1<<20)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", filepath.Join(dir, SkillFile), err)
	}
	return data, nil
}

// SimilarError is an import refused because a similar skill is installed.
type SimilarError struct {
	Name, Existing string
}

func (e *SimilarError) Error() string {
	return fmt.Sprintf("skill %q looks like the installed skill %q (similar name and description); %q was not installed. "+
		"Use --merge=%s:%s to have the skill-enhance sub-agent merge it into %q, or --continue=%s to install it as a separate skill",
		e.Name, e.Existing, e.Name, e.Name, e.Existing, e.Existing, e.Name)
}

// similarPlan is what skill:import's --continue and --merge ask for
// skills similar to installed ones: for the skills they name, or (bare)
// for every skill of the source.
type similarPlan struct {
	continueAll, mergeAll bool
	cont                  map[string]bool   // --continue=a,b
	merge                 map[string]string // --merge=src:installed
}

// add takes one --continue or --merge argument.
func (p *similarPlan) add(arg string) error {
	flag, list, hasValue := strings.Cut(arg, "=")
	if !hasValue {
		if flag == "--merge" {
			p.mergeAll = true
		} else {
			p.continueAll = true
		}
		return nil
	}
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if flag == "--continue" {
			if !ValidName(item) {
				return fmt.Errorf("%s: %q is not a skill name; list the source skills to install anyway, as in --continue=a,b", arg, item)
			}
			if p.cont == nil {
				p.cont = map[string]bool{}
			}
			p.cont[item] = true
			continue
		}
		from, into, ok := strings.Cut(item, ":")
		if !ok || !ValidName(from) || !ValidName(into) {
			return fmt.Errorf("%s: %q is not source:installed; name the source skill and the installed skill to merge it into, as in --merge=csv-summary:csv-report", arg, item)
		}
		if prev, dup := p.merge[from]; dup && prev != into {
			return fmt.Errorf("--merge names two skills to merge %q into (%s and %s): pick one", from, prev, into)
		}
		if p.merge == nil {
			p.merge = map[string]string{}
		}
		p.merge[from] = into
	}
	return nil
}

// validate refuses contradictory requests.
func (p *similarPlan) validate() error {
	if p.continueAll && p.mergeAll {
		return errors.New("bare --merge and --continue exclude each other: name the skills, as in --continue=a --merge=b:installed")
	}
	for name := range p.cont {
		if into, ok := p.merge[name]; ok {
			return fmt.Errorf("skill %q is both in --continue and in --merge=%s:%s: pick one", name, name, into)
		}
	}
	return nil
}

// unused names the skills --continue= and --merge= list that the source
// does not have (a typo would otherwise go unnoticed).
func (p *similarPlan) unused(seen map[string]bool, src string) error {
	var missing []string
	for name := range p.cont {
		if !seen[name] {
			missing = append(missing, "--continue="+name)
		}
	}
	for from, into := range p.merge {
		if !seen[from] {
			missing = append(missing, "--merge="+from+":"+into)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	var have []string
	for name := range seen {
		have = append(have, name)
	}
	slices.Sort(have)
	return fmt.Errorf("%s: %s has no such skill (its skills: %s); check the name: in its SKILL.md",
		strings.Join(missing, ", "), textutil.Sanitize(src), strings.Join(have, ", "))
}

// similarCheck is the import check for skills similar to installed ones;
// seen collects the names of the source's skills.
func (h *Handler) similarCheck(ctx context.Context, p *similarPlan, seen map[string]bool) ImportCheck {
	return func(in *Skill, dir string) (bool, string, error) {
		seen[in.Name] = true
		if into, ok := p.merge[in.Name]; ok {
			target, ok := h.Index.Get(into)
			if !ok {
				return true, "", fmt.Errorf("cannot merge %q into %q: no skill %q is installed; skill:list shows the installed skills", in.Name, into, into)
			}
			return h.mergeInto(ctx, in, dir, target)
		}
		if isDir(h.Store.skillDir(in.Name)) {
			// Not a new name: the import replaces that skill (--force) or
			// is refused as a conflict; a different skill being similar
			// is beside the point.
			return false, "", nil
		}
		var sim *Skill
		for _, s := range h.Index.Skills() {
			// A bundled skill is never merged into: a public skill like it
			// (anthropics/skills' skill-creator) is a separate skill.
			if s.Name != in.Name && !Reserved(s.Name) && Similar(in, s) {
				sim = s
				break
			}
		}
		switch {
		case sim == nil:
			return false, "", nil
		case p.cont[in.Name] || p.continueAll:
			return false, fmt.Sprintf("Note: %q is similar to the installed %q; installed anyway (--continue).", in.Name, sim.Name), nil
		case p.mergeAll:
			return h.mergeInto(ctx, in, dir, sim)
		}
		return true, "", &SimilarError{Name: in.Name, Existing: sim.Name}
	}
}

// mergeInto has the skill-enhance sub-agent merge the staged skill in
// (folder dir) into the installed skill target.
func (h *Handler) mergeInto(ctx context.Context, in *Skill, dir string, target *Skill) (bool, string, error) {
	switch {
	case Reserved(target.Name):
		return true, "", fmt.Errorf("cannot merge %q into %q: %q is bundled with Synapse, and no import changes it; use --continue=%s to install it as a separate skill", in.Name, target.Name, target.Name, in.Name)
	case target.Source != SourceUser:
		return true, "", fmt.Errorf("cannot merge %q into %q: %q is a project skill, which skill:import does not change", in.Name, target.Name, target.Name)
	case h.Merge == nil:
		return true, "", fmt.Errorf("cannot merge %q into %q here: merging needs the skill-enhance sub-agent (a model); use --continue=%s to install it as a separate skill", in.Name, target.Name, in.Name)
	}
	note, err := h.Merge(ctx, dir, target.Name)
	if err != nil {
		return true, "", fmt.Errorf("merge %q into %q: %w", in.Name, target.Name, err)
	}
	return true, note, nil
}

// Similar reports whether two skills look like the same skill under
// different names: one name contains the other, or at least two keywords
// of name and description are shared and they make half of the shorter
// skill's keywords.
func Similar(a, b *Skill) bool {
	an, bn := strings.ToLower(a.Name), strings.ToLower(b.Name)
	if len(an) >= 4 && len(bn) >= 4 && (strings.Contains(an, bn) || strings.Contains(bn, an)) {
		return true
	}
	wa, wb := similarityWords(a), similarityWords(b)
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return inter >= 2 && inter*2 >= min(len(wa), len(wb))
}

// weakWords say nothing about what a skill is for.
var weakWords = map[string]bool{"from": true, "into": true, "use": true, "when": true, "skill": true, "this": true,
	"that": true, "are": true, "any": true, "all": true, "how": true, "not": true, "its": true, "your": true, "asked": true}

func similarityWords(s *Skill) map[string]bool {
	out := map[string]bool{}
	text := strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(s.Name) + " " + s.Description
	for _, w := range Keywords(strings.NewReplacer("-", " ", "_", " ").Replace(text)) {
		w = strings.TrimSuffix(w, "s") // files ~ file
		if len(w) > 2 && !weakWords[w] {
			out[w] = true
		}
	}
	return out
}
