package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/cmdsearch"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/mcp"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// PolicySource is the sandbox that extension processes (skill scripts, stdio
// MCP servers) run under: the same policy and environment as native
// commands. The agent's *sandbox.Manager implements it.
type PolicySource interface {
	Enabled() bool
	// ActivePolicy is the policy native commands run under now; an
	// extension's directory is where it starts, never an extra writable root.
	ActivePolicy() sandbox.Policy
	// Env is the commands' environment, without the agent's credentials.
	Env() []string
	// WrapArgv wraps argv under a policy with the shell's backend
	// (bubblewrap or Landlock); it refuses when no sandbox can run.
	WrapArgv(p sandbox.Policy, argv []string, opts sandbox.WrapOptions) ([]string, error)
}

// ExtensionOptions tune Extensions.
type ExtensionOptions struct {
	// Sandbox supplies the policy and the directory skill scripts run in
	// (the agent shell's current one): the agent's manager. Nil loads
	// sandbox.json into a manager of its own (no shell is started).
	Sandbox AgentSandbox
	// StartTimeout bounds MCP start-up (default mcp.DefaultStartTimeout).
	StartTimeout time.Duration
	// DeferMCP connects no MCP server now: StartMCP does, or an mcp: call
	// connects its own server (synapse exec starts them only when a command
	// needs the tool list).
	DeferMCP bool
	// Env is the base environment of scripts and servers (nil: the
	// sandbox's Env(), which lacks the agent's provider credentials).
	Env []string
	// ClientVersion is sent to MCP servers (the synapse version).
	ClientVersion string
	// OutputDir receives the binary data MCP servers send (blob resources,
	// audio), saved as files the model reads: the agent's scratch
	// directory, visible in its sandbox ("" means the system temp dir).
	OutputDir string
	// ExtraMCP are servers beyond the configuration files (an editor's,
	// passed over ACP); they replace a configured server of the same name.
	ExtraMCP []mcp.ServerConfig
	// Import governs the model's skill:import: clones of git URLs and
	// installs into the user store (zero: both refused; see
	// skills.ImportPolicy).
	Import skills.ImportPolicy
}

// Extensions are the skill, MCP and command:search handlers of one session.
type Extensions struct {
	Index  *skills.Index
	Skills *skills.Handler
	MCP    *mcp.Manager
	Tools  *mcp.Handler
	Search *cmdsearch.Handler

	cwd    func() string // the agent shell's current directory
	policy PolicySource
	own    *sandbox.Manager // the manager made here when none was given; Close shuts it down
	env    []string

	mu sync.Mutex // guards the start-up report below

	started       bool
	mcpSummary    string   // "MCP: loaded N tools from M servers", once started
	mcpProblems   []string // broken configuration files, then failed servers
	skillProblems []string
	pending       []mcp.PendingFile // project MCP files not approved
}

// ProjectMCP is what the project's unapproved MCP files would define.
func (a *App) ProjectMCP(cwd string) []mcp.PendingFile {
	_, _, pending := a.loadMCP(cwd, mcp.ConfigFiles(a.Config.MCPServersPath(), cwd))
	return pending
}

// ApproveProjectMCP records the user's approval of p for the project cwd.
func (a *App) ApproveProjectMCP(cwd string, p mcp.PendingFile) error {
	return a.MCPApprovals().Approve(cwd, p, time.Now())
}

// MCPApprovals is the record of approved project MCP files.
func (a *App) MCPApprovals() mcp.Approvals {
	return mcp.Approvals{Path: a.Config.MCPApprovalsPath()}
}

// loadMCP reads the user's and the project's MCP files: a project file only
// in a content the user approved for cwd, expanding only the variables
// settings.json "shareEnv" lists. Unapproved files come back pending, each
// with a problem line saying how to approve it.
func (a *App) loadMCP(cwd string, files []string) (map[string]mcp.ServerConfig, []string, []mcp.PendingFile) {
	var share []string
	var problems []string
	if s, err := a.Settings(); err != nil {
		problems = append(problems, fmt.Sprintf("MCP config: project files expand no variables: %v", err))
	} else {
		share = s.ShareEnv
	}
	approvals := a.MCPApprovals()
	servers, probs, pending := mcp.Load(files[0], files[1:], a.Config.Getenv, mcp.ProjectOptions{
		Share:    share,
		Approved: func(f string, content []byte) bool { return approvals.Approved(cwd, f, content) },
	})
	problems = append(problems, probs...)
	for _, p := range pending {
		var names []string
		for _, s := range p.Servers {
			names = append(names, s.Name)
		}
		problems = append(problems, fmt.Sprintf("MCP servers %s in %s were not started: this project file is not approved (it changed, or is new); review and approve it with `synapse mcp approve` in %s",
			strings.Join(names, ", "), p.File, cwd))
	}
	return servers, problems, pending
}

// Extensions loads skills ($SYNAPSE_HOME/skills and cwd/.synapse/skills) and
// MCP configuration ($SYNAPSE_HOME/mcp/mcp_servers.json, cwd/.mcp.json,
// cwd/mcp_servers.json), starts the MCP servers concurrently (bounded by
// StartTimeout) and returns the handlers. Close stops the servers.
func (a *App) Extensions(ctx context.Context, cwd string, opts ExtensionOptions) (*Extensions, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("cannot find the working directory: %w", err)
		}
		cwd = wd
	}
	sb := opts.Sandbox
	var own *sandbox.Manager
	if sb == nil {
		mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd})
		if err != nil {
			return nil, fmt.Errorf("extensions: %w", err)
		}
		sb, own = mgr, mgr
	}
	e := &Extensions{policy: sb, cwd: sb.Cwd, own: own}
	env := opts.Env
	if env == nil {
		env = e.policy.Env()
	}
	e.env = env

	e.Index = skills.NewIndex(skills.DefaultRoots(a.Config.SkillsDir, cwd)...)
	e.Skills = &skills.Handler{
		Index:   e.Index,
		Store:   &skills.Store{Dir: a.Config.SkillsDir, MaxVersions: a.Config.SkillMaxVersions},
		Cwd:     e.sessionCwd,
		Home:    a.Config.UserHome,
		Timeout: a.Config.CommandTimeout,
		Scripts: skills.RunOptions{Wrap: e.wrapScript, Env: env, After: e.settle},
		Paths:   e,
		Import:  opts.Import,
	}

	// The project's MCP files are used once the user approved their content
	// for this project, expand only the variables the user shares, and
	// cannot grant the network (see mcp.Load).
	files := mcp.ConfigFiles(a.Config.MCPServersPath(), cwd)
	servers, problems, pending := a.loadMCP(cwd, files)
	e.pending = pending
	problems = append(problems, refuseOutsideCwd(servers, files[1:], cwd)...)
	for _, c := range opts.ExtraMCP {
		if servers == nil {
			servers = map[string]mcp.ServerConfig{}
		}
		servers[c.Name] = c
	}
	e.MCP = mcp.NewManager(servers, mcp.Options{
		Wrap:          e.wrapServer,
		Env:           env,
		Cwd:           cwd,
		StartTimeout:  cmp.Or(a.Config.MCPStartTimeout, opts.StartTimeout),
		ClientName:    "synapse",
		ClientVersion: opts.ClientVersion,
	})
	e.Tools = &mcp.Handler{M: e.MCP, Timeout: a.Config.CommandTimeout, OutputDir: opts.OutputDir}
	e.Search = &cmdsearch.Handler{Sources: []cmdsearch.Source{e.skillEntries, e.toolEntries}}

	for _, p := range problems {
		e.mcpProblems = append(e.mcpProblems, textutil.Sanitize(p))
	}
	for _, p := range e.Index.Problems() {
		e.skillProblems = append(e.skillProblems, textutil.Sanitize("skills: "+textutil.FirstLine(p)))
	}
	if !opts.DeferMCP {
		e.StartMCP(ctx)
	}
	return e, nil
}

// StartMCP connects every configured MCP server concurrently, bounded by
// the start timeout (a slower server keeps connecting in the background and
// its tools appear once it answers). Only the first call does anything.
func (e *Extensions) StartMCP(ctx context.Context) {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return
	}
	e.started = true
	e.mu.Unlock()
	rep := e.MCP.Start(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.mcpSummary = fmt.Sprintf("MCP: loaded %d tools from %d servers", rep.Tools, rep.Servers)
	// A failure line quotes the server's own words (its stderr, its error).
	for _, f := range rep.Failures {
		e.mcpProblems = append(e.mcpProblems, textutil.Sanitize(f))
	}
}

// Report is the start-up report, one line per fact: the MCP tool count
// (once started), then each broken MCP file or server and each skill that
// did not load.
func (e *Extensions) Report() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	if e.mcpSummary != "" {
		out = append(out, e.mcpSummary)
	}
	out = append(out, e.mcpProblems...)
	return append(out, e.skillProblems...)
}

// Notices is the report as a user should see it at start-up: the tool count
// only when some MCP server is configured, and every problem.
func (e *Extensions) Notices() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	if e.mcpSummary != "" && len(e.MCP.Names()) > 0 {
		out = append(out, e.mcpSummary)
	}
	out = append(out, e.mcpProblems...)
	return append(out, e.skillProblems...)
}

// MCPProblems are the broken MCP configuration files and servers.
func (e *Extensions) MCPProblems() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.mcpProblems...)
}

// Handlers maps the router's families to the extension handlers, ready for
// ToolSetup.Handlers (the task:* handler is added by the agent builders).
func (e *Extensions) Handlers() map[router.Family]command.Handler {
	return map[router.Family]command.Handler{
		router.FamilySkill:       e.Skills,
		router.FamilySkillScript: e.Skills,
		router.FamilyMCP:         e.Tools,
		router.FamilySearch:      e.Search,
	}
}

// AgentSandbox is what extensions need from an agent's sandbox manager:
// skill scripts run in its shell's current directory under its policy
// (runtime whitelist included).
type AgentSandbox interface {
	PolicySource
	Cwd() string
}

// Close stops the MCP servers, then shuts down the sandbox manager made
// for them (removing its private temp directory) when none was given.
func (e *Extensions) Close() error {
	err := e.MCP.Close()
	if e.own != nil {
		err = errors.Join(err, e.own.Shutdown())
	}
	return err
}

func (e *Extensions) sessionCwd() string { return e.cwd() }

func (e *Extensions) currentPolicy() PolicySource { return e.policy }

// CheckPath applies the session sandbox's policy to a path the agent reads
// or writes on the model's behalf (skill:import copies a folder); a policy
// source that cannot check paths allows everything, as the sandbox off does.
func (e *Extensions) CheckPath(path string, write bool) (blocked bool, reason, resource string) {
	if c, ok := e.currentPolicy().(skills.PathChecker); ok {
		return c.CheckPath(path, write)
	}
	return false, "", ""
}

// HostPath maps a path as commands see it to the host file (the session
// sandbox's private /tmp), for a policy source that knows one.
func (e *Extensions) HostPath(path string) string {
	if hp, ok := e.currentPolicy().(interface{ HostPath(string) string }); ok {
		return hp.HostPath(path)
	}
	return path
}

// watcher is the sandbox's side of the checks for what an extension
// process writes (*sandbox.Manager): Watch takes the start-up scan before
// the first one runs, SettleForModel runs the checks after a script.
type watcher interface {
	Watch(ctx context.Context) error
	SettleForModel() []string
}

// watch makes sure the sandbox's checks exist before an extension process
// runs: otherwise a repository a project skill's script creates as the
// session's first command would be part of their baseline, never checked.
func (e *Extensions) watch() error {
	if w, ok := e.currentPolicy().(watcher); ok {
		return w.Watch(context.Background())
	}
	return nil
}

// settle runs the sandbox's checks after a skill script.
func (e *Extensions) settle() []string {
	if w, ok := e.currentPolicy().(watcher); ok {
		return w.SettleForModel()
	}
	return nil
}

// wrapScript runs a skill script under exactly the session's active policy:
// cwd (the agent shell's directory) is where it starts, not a writable root.
func (e *Extensions) wrapScript(argv []string, cwd, skillDir string) ([]string, error) {
	ps := e.currentPolicy()
	if !ps.Enabled() {
		return argv, nil
	}
	if err := e.watch(); err != nil {
		return nil, err
	}
	return ps.WrapArgv(ps.ActivePolicy(), argv, sandbox.WrapOptions{Cwd: cwd, Env: e.env, Visible: []string{skillDir}})
}

// wrapServer runs a stdio MCP server under exactly the session's active
// policy (its cwd is only where it starts), with the network only when its entry has "sandbox": {"network": true}.
func (e *Extensions) wrapServer(argv []string, cwd string, network bool) ([]string, error) {
	ps := e.currentPolicy()
	if !ps.Enabled() {
		return argv, nil
	}
	if err := e.watch(); err != nil {
		return nil, err
	}
	p := ps.ActivePolicy()
	p.AllowNetwork = network
	var visible []string
	if filepath.IsAbs(argv[0]) {
		visible = append(visible, filepath.Dir(argv[0])) // a server installed under /tmp stays visible
	}
	return ps.WrapArgv(p, argv, sandbox.WrapOptions{Cwd: cwd, Env: e.env, Visible: visible})
}

// skillEntries lists every skill (run as skill:load <name>) and every script
// for command:search.
func (e *Extensions) skillEntries() []cmdsearch.Entry {
	var out []cmdsearch.Entry
	for _, s := range e.Index.Skills() {
		kw := append([]string{s.Name}, s.Tags...)
		out = append(out, cmdsearch.Entry{Command: "skill:load " + s.Name, Type: cmdsearch.Skill, Description: s.Description, Keywords: kw})
		for _, sc := range s.Scripts {
			desc := textutil.OneLine(sc.Doc(), 0)
			if desc == "" {
				desc = fmt.Sprintf("Script %s of skill %s.", sc.Name, s.Name)
			}
			out = append(out, cmdsearch.Entry{Command: "skill:" + s.Name + ":" + sc.Name, Type: cmdsearch.Skill,
				Description: desc, Keywords: append(kw, textutil.OneLine(s.Description, 0))})
		}
	}
	return out
}

// toolEntries lists the tools of the connected MCP servers, their resource
// commands and their prompts.
func (e *Extensions) toolEntries() []cmdsearch.Entry {
	var out []cmdsearch.Entry
	for _, t := range e.MCP.Tools() {
		out = append(out, cmdsearch.Entry{Command: t.Command(), Type: cmdsearch.MCP, Description: t.Description, Keywords: []string{t.Server}})
	}
	for _, c := range e.MCP.ExtraCommands() {
		out = append(out, cmdsearch.Entry{Command: c.Command, Type: cmdsearch.MCP, Description: c.Description, Keywords: c.Keywords})
	}
	return out
}

// refuseOutsideCwd drops the stdio servers of project files whose "cwd"
// leads outside the project (symlinks resolved), and says why. The
// project's files come with whatever was cloned and the agent's commands
// can write them; the user's own file may start a server anywhere.
func refuseOutsideCwd(servers map[string]mcp.ServerConfig, projectFiles []string, project string) []string {
	root := project
	if r, err := filepath.EvalSymlinks(project); err == nil {
		root = r
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		c := servers[name]
		if c.Kind() != mcp.KindStdio || c.Cwd == "" || !slices.Contains(projectFiles, c.File) {
			continue
		}
		dir := c.Cwd
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(project, dir)
		}
		dir = filepath.Clean(dir)
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			dir = r
		}
		if dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)) {
			continue
		}
		delete(servers, name)
		problems = append(problems, fmt.Sprintf("MCP server %q in %s: \"cwd\" %q is outside the project (%s), so the server was not started; "+
			"a project file may only start servers inside the project: remove \"cwd\" or point it inside, or define the server in your own mcp_servers.json", name, c.File, c.Cwd, project))
	}
	return problems
}
