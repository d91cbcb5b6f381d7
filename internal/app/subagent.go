package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/cmdsearch"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/evolve"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/todo"
)

// SubagentSetup is what the task:<type> handler of one parent agent needs.
type SubagentSetup struct {
	// Provider answers the sub-agents' requests (the parent's provider).
	Provider llm.Provider
	// Providers, when set, gives the provider of each sub-agent's model
	// (a model of the other provider than Provider's runs on that one).
	Providers *modelProviders
	// Model is the default model until the handler is bound to its parent
	// (afterwards the parent's current model is used).
	Model string
	// Cwd is where sub-agents start (the parent's working directory).
	Cwd string
	// Handlers are the parent tool's extension handlers (skill:, command:search,
	// mcp:, skill scripts). Each sub-agent gets those its kind allows; never
	// a task:* handler.
	Handlers map[router.Family]command.Handler
	// Skills is the session's skill index (Extensions.Index), which
	// task:skill:search searches and checks its answers against; nil means
	// no skills are installed.
	Skills *skills.Index
	// Start starts each sub-agent's shell; nil uses the default starter.
	Start sandbox.StartSession
	// SkillsDir is the skills directory a skill:enhance sub-agent may write
	// ("" : the user store; auto-enhance gives it a scratch copy).
	SkillsDir string
	// OutputDir receives cut outputs and long answers: the parent's private
	// scratch directory (empty: the temp dir).
	OutputDir string
	// IDPrefix starts the task ids of this handler (see subagent.Options).
	IDPrefix string
	// Hooks are the parent's; sub-agents run their tool hooks only.
	Hooks *hooks.Set
	// PrivateTmp is the parent's private temp directory, which a writable
	// sub-agent mounts as its /tmp too (what the parent left in /tmp is
	// there for it); "" gives each sub-agent its own.
	PrivateTmp string
	// Custom holds the session's custom sub-agent types (nil: none).
	Custom *subagent.Custom
	// Sandbox is the parent's manager: where it found the platform
	// sandbox working, its sub-agents take its backend without probing
	// again (five parallel tasks each paid a bwrap launch for it).
	Sandbox *sandbox.Manager
}

func (a *App) skillsDir(s SubagentSetup) string { return cmp.Or(s.SkillsDir, a.Config.SkillsDir) }

// NewTaskHandler builds the task:<type> handler for one parent agent. Put it
// in the parent Bash tool's Handlers under router.FamilyTask; sub-agent
// events and usage reach whichever runner calls it (through the call's
// agent.CallTrace), so it needs no link back to the parent:
//
//	h := a.NewTaskHandler(app.SubagentSetup{Provider: p, Model: m, Cwd: cwd, Handlers: ext.Handlers(), Skills: ext.Index})
//	handlers[router.FamilyTask] = h
func (a *App) NewTaskHandler(s SubagentSetup) *subagent.Handler {
	index, exists := skillIndex(s.Skills)
	var providerFor func(string) (llm.Provider, error)
	if s.Providers != nil {
		providerFor = s.Providers.For
	}
	return subagent.New(subagent.Options{
		Provider:    s.Provider,
		ProviderFor: providerFor,
		Model:       s.Model,
		Workspace:   a.subagentWorkspace(s),
		SkillIndex:  index,
		SkillExists: exists,
		SkillsDir:   a.skillsDir(s),
		IDPrefix:    s.IDPrefix,
		Hooks:       subagentHooks(s.Hooks),
		Cwd:         s.Cwd,
		Timeout:     a.Config.TaskTimeout,
		OutputCap:   a.Config.OutputCap,
		Context:     a.contextSettings(),
		OutputDir:   s.OutputDir,
		Custom:      s.Custom,
	})
}

// customAgentEntries lists the session's custom sub-agent types for
// command:search, as the registry lists the built-in ones.
func customAgentEntries(c *subagent.Custom) cmdsearch.Source {
	return func() []cmdsearch.Entry {
		var out []cmdsearch.Entry
		for _, k := range c.Defined() {
			out = append(out, cmdsearch.Entry{Command: registry.TaskPrefix + k.Name, Type: cmdsearch.Agent,
				Description: k.Summary, Keywords: []string{"subagent", "agent", "custom"}})
		}
		return out
	}
}

// subagentHooks is the tool-only view of the parent's hooks (nil: none; a
// typed nil would not compare equal to nil inside the agent).
func subagentHooks(h *hooks.Set) agent.Hooks {
	if h == nil {
		return nil
	}
	return h.ForSubagents()
}

// subagentWorkspace builds each sub-agent's own shell (a sandbox manager of
// its own, so parallel tasks never share cd or export), Agent Shell, todo
// list and Bash tool. The tool has no task:* handler: a sub-agent cannot
// start another even if a command slipped past the restricted tool's check.
func (a *App) subagentWorkspace(s SubagentSetup) subagent.WorkspaceFunc {
	probe := &probeCache{}
	probe.seed(s.Sandbox)
	return func(ctx context.Context, k subagent.Kind) (subagent.Workspace, error) {
		mgr, err := a.subagentSandbox(s, k, probe)
		if err != nil {
			return subagent.Workspace{}, err
		}
		if k.ReadOnly {
			// A read-only sandbox replaces the host temp dir with a private
			// /tmp; keep the saved outputs of cut commands readable there
			// (read-only), since the notice tells the agent to grep or tail them.
			if dir := s.OutputDir; dir != "" {
				if err := mgr.AddRuntimeWhitelist(dir); err != nil {
					_ = mgr.Shutdown()
					return subagent.Workspace{}, fmt.Errorf("show saved outputs to the sub-agent: %w", err)
				}
			}
		}
		if k.WritesSkills {
			dir := a.skillsDir(s)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return subagent.Workspace{}, fmt.Errorf("create the skills directory %s: %w", dir, err)
			}
			if err := mgr.AddRuntimeWhitelist(dir); err != nil {
				return subagent.Workspace{}, fmt.Errorf("allow writing the skills directory: %w", err)
			}
		}
		todos := &todo.Store{}
		t, err := a.NewTool(ctx, ToolSetup{
			Cwd:       s.Cwd,
			Exec:      mgr,
			Paths:     mgr, // a read-only kind's policy refuses writes outside the temp directory
			Todos:     todos,
			Handlers:  subagentHandlers(s.Handlers, k),
			OutputDir: s.OutputDir,
		})
		if err != nil {
			_ = mgr.Shutdown()
			return subagent.Workspace{}, err
		}
		return subagent.Workspace{Tool: t, Todos: todos, Close: func() error {
			return errors.Join(t.Close(), mgr.Shutdown())
		}}, nil
	}
}

// subagentSandbox is a fresh sandbox manager for one sub-agent. A read-only
// kind's sandbox is always on, whatever sandbox.json says: being read-only is
// a permission rule, not a preference, so where the OS sandbox cannot run its
// native commands are refused (file reads with `read` still work).
func (a *App) subagentSandbox(s SubagentSetup, k subagent.Kind, probe *probeCache) (*sandbox.Manager, error) {
	start := s.Start
	if start == nil {
		start = startShell
	}
	opts := sandbox.ManagerOptions{
		ConfigPath:     a.Config.SandboxPath(),
		Cwd:            s.Cwd,
		Env:            os.Environ(),
		HideEnv:        a.hiddenEnv(),
		Home:           a.Config.UserHome,
		CommandTimeout: a.Config.CommandTimeout,
		ReadOnly:       k.ReadOnly,
		StartSession:   start,
		PrivateTmp:     s.PrivateTmp,
		Launcher:       launcher(),
		SubAgent:       true,
	}
	if s.OutputDir != "" {
		opts.Visible = []string{s.OutputDir} // the cut outputs it is told to read
	}
	if k.ReadOnly {
		cfg, _, err := sandbox.LoadConfig(a.Config.SandboxPath())
		if err != nil {
			return nil, err
		}
		cfg.Enabled = true
		opts.Config = cfg
	}
	opts.Probe, opts.Backend = probe.cached()
	m, err := sandbox.NewManager(opts)
	if err != nil {
		return nil, err
	}
	if !k.ReadOnly {
		probe.learn(m)
	}
	return m, nil
}

// probeCache remembers whether the platform sandbox works, and which
// backend, so that each sub-agent does not pay for another probe run of
// bwrap (about 10 ms) or of the Landlock launcher.
type probeCache struct {
	mu      sync.Mutex
	known   bool
	err     error
	backend string
}

// cached is the probe and backend to use: nil and "" (the real probes)
// until a result is known.
func (p *probeCache) cached() (func(context.Context) error, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.known {
		return nil, ""
	}
	err := p.err
	return func(context.Context) error { return err }, p.backend
}

// learn records what a manager built with the real probe decided.
// seed takes the backend of a manager that found the platform sandbox
// working; one that is off (sandbox.json) or failing closed says nothing
// about what a read-only sub-agent, whose sandbox is always on, would find.
func (p *probeCache) seed(m *sandbox.Manager) {
	if m == nil || m.Backend() == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known, p.backend = true, m.Backend()
}

func (p *probeCache) learn(m *sandbox.Manager) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return
	}
	p.known = true
	p.backend = m.Backend()
	if !m.Enabled() || p.backend == "" {
		p.err = errors.New("the platform sandbox did not work on an earlier attempt in this process; run `synapse sandbox status` for details")
	}
}

// subagentHandlers picks the parent's handlers a kind may use. Read-only
// kinds keep only skill management and command:search (whose writing
// actions their restricted tool refuses); MCP tools and skill scripts run
// code outside the sub-agent's sandbox, so they are left out.
func subagentHandlers(parent map[router.Family]command.Handler, k subagent.Kind) map[router.Family]command.Handler {
	out := map[router.Family]command.Handler{}
	for fam, h := range parent {
		switch {
		case fam == router.FamilyTask, h == nil:
		case k.ReadOnly && fam != router.FamilySkill && fam != router.FamilySearch:
		default:
			out[fam] = h
		}
	}
	return out
}

// skillIndex adapts the session's skill index for skill:search.
func skillIndex(ix *skills.Index) (text func() string, exists func(string) bool) {
	text = func() string {
		if ix == nil || len(ix.Skills()) == 0 {
			return "" // nothing to search: skill:search answers without a request
		}
		return ix.Describe()
	}
	exists = func(name string) bool {
		if ix == nil {
			return false
		}
		_, ok := ix.Get(name)
		return ok
	}
	return text, exists
}

// enhanceRunner runs the skill:enhance sub-agent for auto-enhance, writing
// into the scratch skills directory it is given (the hook commits from
// there through the store); it reports to the runner whose stop hook calls
// it (the context's agent.CallTrace).
func (a *App) enhanceRunner(s SubagentSetup) evolve.RunFunc {
	return func(ctx context.Context, dir, prompt string) (string, error) {
		k, _ := subagent.LookupKind(subagent.SkillEnhance)
		res := a.enhanceTask(s, dir)(ctx, subagent.Request{Kind: k, Prompt: prompt, Description: "skill auto-enhance"})
		if res.ExitCode != 0 {
			return res.Stdout, errors.New(strings.TrimSpace(res.Stderr))
		}
		return res.Stdout, nil
	}
}

// enhanceTask runs one skill:enhance request whose writable skills
// directory is dir, on a handler of its own (it reports to the runner of
// ctx, as every task does).
func (a *App) enhanceTask(s SubagentSetup, dir string) func(context.Context, subagent.Request) command.Result {
	return func(ctx context.Context, req subagent.Request) command.Result {
		s := s
		s.SkillsDir, s.IDPrefix = dir, "enhance-"
		return a.NewTaskHandler(s).Execute(ctx, req)
	}
}

// storeTasks is the parent's task:* handler. task:skill:enhance runs on a
// scratch copy of the skill store, and what it changed is installed through
// the store (the current version snapshotted first): no sandbox ever gets
// the store itself writable.
type storeTasks struct {
	*subagent.Handler
	store      *skills.Store
	invalidate func()
	run        func(dir string) func(context.Context, subagent.Request) command.Result
}

// Run implements command.Handler.
func (t *storeTasks) Run(ctx context.Context, line string) command.Result {
	req, err := t.Parse(line)
	if err != nil || req.Help || req.Kind.Name != subagent.SkillEnhance || ctx.Err() != nil || t.store == nil {
		return t.Handler.Run(ctx, line)
	}
	stage, err := evolve.NewStage(t.store)
	if err != nil {
		return command.Fail("Task failed: cannot create a scratch folder for the skills: " + err.Error())
	}
	defer os.RemoveAll(stage)
	if err := evolve.StageStore(t.store, stage); err != nil {
		return command.Fail("Task failed: cannot copy the skill store for the sub-agent: " + err.Error())
	}
	res := t.run(stage)(ctx, req)
	if res.ExitCode != 0 || ctx.Err() != nil {
		return res
	}
	lines := evolve.CommitChanged(t.store, stage, registry.TaskSkillEnhance)
	if t.invalidate != nil {
		t.invalidate()
	}
	if len(lines) == 0 {
		lines = []string{"[Skill] No skill was changed."}
	}
	res.Stdout = strings.TrimRight(res.Stdout, "\n") + "\n\n" + strings.Join(lines, "\n") + "\n"
	return res
}
