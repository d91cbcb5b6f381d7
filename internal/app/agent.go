package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/evolve"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/jobs"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// SessionStore is the sessions directory of this configuration.
func (a *App) SessionStore(warn func(error)) *session.Store {
	s := session.NewStore(a.Config.SessionsDir, a.pricing(warn), warn)
	s.MaxRounds = a.Config.MaxRoundsKept
	return s
}

// pricing is the built-in price list with $SYNAPSE_HOME/pricing.json's
// entries over it; a broken file is a warning and the built-in prices, never
// a failure to start.
func (a *App) pricing(warn func(error)) session.Pricing {
	p, err := session.LoadPricing(a.Config.PricingPath())
	if err != nil {
		if warn != nil {
			warn(fmt.Errorf("built-in prices are used: %w", err))
		}
		return session.DefaultPricing()
	}
	return session.DefaultPricing().WithOverrides(p)
}

// AgentOptions returns agent options filled from the configuration: limits,
// the sessions directory (when persist) and pricing. The caller sets the
// provider, model, tool, todo store, cwd and event sink.
func (a *App) AgentOptions(persist bool, warn func(error)) agent.Options {
	o := agent.Options{
		MaxTurns:               a.Config.MaxToolIterations,
		MaxConsecutiveFailures: a.Config.MaxConsecutiveFailures,
		MaxParallelTasks:       a.Config.MaxParallelTasks,
		Context:                a.contextSettings(),
		CompactModel:           a.Config.CompactModel,
	}
	if persist {
		o.MaxSessions = a.Config.MaxSessions
		o.SessionsDir = a.Config.SessionsDir
		o.Pricing = a.pricing(warn)
	}
	return o
}

// contextSettings are the configured context window and thresholds (zero
// fields follow the model's window).
func (a *App) contextSettings() contextmgr.Settings {
	return contextmgr.Settings{Window: a.Config.ContextWindow, OffloadAt: a.Config.OffloadThreshold, CompactAt: a.Config.CompactThreshold}
}

// AgentSetup is what one top-level agent is built from: synapse run and the
// REPL, or, with NoModel, the model-less workspace of synapse exec.
type AgentSetup struct {
	Provider, Model string // --provider, --model ("" defers to env and settings)
	// NoModel builds no provider, runner nor task:* handler (synapse exec
	// runs commands without a model, so it needs no key).
	NoModel bool
	// Cwd is the agent's working directory (default: the process's).
	Cwd string
	// Persist keeps the conversation in the sessions directory.
	Persist  bool
	ResumeID string // id, unique prefix or "latest"
	// Fork continues ResumeID in a new session with a copy of its history.
	Fork bool
	// AllowPaths are extra writable paths for the sandbox (--allow-path).
	AllowPaths []string
	OnEvent    func(agent.Event)
	// Warn receives non-fatal problems found while running (a broken
	// pricing file). Start-up notices are on the Agent (Notices).
	Warn func(error)
	// Approver is asked about sandbox-blocked commands (nil: refused as blocked).
	Approver tool.Approver
	// DisableSkillSearchInstruction leaves the user's text unwrapped even
	// when settings.json asks for the instruction.
	DisableSkillSearchInstruction bool
	// Extensions tunes skills and MCP (start-up timeout, deferred start);
	// Sandbox and Env are the agent's own and need not be set.
	Extensions ExtensionOptions
	// MaxTurns, when > 0, replaces the configured model turns per run
	// (synapse --max-turns).
	MaxTurns int
	// SystemPrompt, when set, replaces the built-in system prompt;
	// AppendSystemPrompt is added after whichever prompt is used
	// (--system-prompt, --append-system-prompt).
	SystemPrompt, AppendSystemPrompt string
}

// scratchMaxAge is when a scratch directory left by an agent that did not
// close (a crash, a kill) is removed by the next agent.
const scratchMaxAge = 24 * time.Hour

// Agent is one top-level agent and everything it owns. Close it once.
type Agent struct {
	// Runner is the agent loop (nil with NoModel).
	Runner *agent.Runner
	// Model is the model the runner starts with.
	Model string
	// Sandbox runs native commands, skill scripts and stdio MCP servers
	// under one policy; the REPL's /sandbox, banner and `!` read it.
	Sandbox *sandbox.Manager
	// Extensions serve skill:, skill scripts, mcp: and command:search.
	Extensions *Extensions
	// Tool is the agent's Bash tool.
	Tool *Tool
	// Jobs are the agent's background jobs (job:*, the REPL's Ctrl+B and
	// /jobs); stopped with their process trees when the agent closes.
	Jobs *jobs.Table
	// Hooks are the runner's stop hooks and the user's command hooks (nil
	// with NoModel).
	Hooks *hooks.Set
	// Agents are the session's custom sub-agent types (the Agent SDK
	// host's agents): task:<name> runs them, command:search lists them.
	Agents *subagent.Custom

	// autoEnhance is whether skill auto-enhance runs after a turn
	// (settings.json skillEnhance.autoEnhance; /skill enhance switches it).
	autoEnhance  atomic.Bool
	settingsPath string

	// notices are start-up problems of the agent's own settings (hooks,
	// skillEnhance), shown with the others.
	notices []string

	providers *modelProviders
	closers   []func() error
	// settingsWarnings: environment settings that fell back to defaults.
	settingsWarnings []string
}

// SettingsWarnings name environment settings that were unusable and fell
// back to their defaults (shown once at start-up).
func (g *Agent) SettingsWarnings() []string { return g.settingsWarnings }

// SwitchModel makes model the runner's model for the next requests, with
// the provider it implies (gpt-4o after a start on Anthropic runs on the
// OpenAI provider); when that provider is not configured nothing changes
// and the error says what to set.
func (g *Agent) SwitchModel(model string) error {
	model = strings.TrimSpace(model)
	if g.Runner == nil || g.providers == nil {
		return errors.New("this agent has no model to switch")
	}
	if model == "" {
		return errors.New("no model given: use /model <name>")
	}
	p, err := g.providers.For(model)
	if err != nil {
		return err
	}
	g.Runner.SetModelProvider(model, p)
	return nil
}

// ModelProvider names the provider SwitchModel(model) would send model's
// requests to (anthropic, openai), or returns the error it would refuse
// model with; "" names the start-up provider. An editor's model list
// offers only the models a switch accepts.
func (g *Agent) ModelProvider(model string) (string, error) {
	if g.Runner == nil || g.providers == nil {
		return "", errors.New("this agent has no model to switch")
	}
	if _, err := g.providers.For(model); err != nil {
		return "", err
	}
	return g.providers.name(model), nil
}

// Notices are the start-up facts a user should see: sandbox.json warnings,
// then the extensions' report (MCP tool count when servers are configured,
// each broken server, file or skill).
func (g *Agent) Notices() []string {
	var out []string
	for _, w := range g.settingsWarnings {
		out = append(out, "warning: "+w)
	}
	for _, w := range g.Sandbox.Warnings() {
		out = append(out, "warning: "+w)
	}
	out = append(out, g.notices...)
	return append(out, g.Extensions.Notices()...)
}

// AutoEnhance reports whether skill auto-enhance is on.
func (g *Agent) AutoEnhance() bool { return g.autoEnhance.Load() }

// SetAutoEnhance switches skill auto-enhance for this agent and persists
// it in settings.json (skillEnhance.autoEnhance).
func (g *Agent) SetAutoEnhance(on bool) error {
	if g.settingsPath == "" {
		return errors.New("this agent has no model, so no auto-enhance")
	}
	if err := config.SetAutoEnhance(g.settingsPath, on); err != nil {
		return fmt.Errorf("save skillEnhance.autoEnhance in %s: %w", g.settingsPath, err)
	}
	g.autoEnhance.Store(on)
	return nil
}

// SettingsNotices are the problems found in the agent's own settings.json
// entries (hooks, skillEnhance), one line each.
func (g *Agent) SettingsNotices() []string { return append([]string(nil), g.notices...) }

// Close flushes the session, stops the MCP servers and the shell, in the
// reverse order of their building. It is safe to call more than once.
func (g *Agent) Close() error {
	var errs []error
	for i := len(g.closers) - 1; i >= 0; i-- {
		errs = append(errs, g.closers[i]())
	}
	g.closers = nil
	return errors.Join(errs...)
}

// NewAgent builds a top-level agent, the one path for synapse run, the REPL
// and synapse exec: provider (a missing key or a broken settings.json fails
// here, before anything starts), the sandbox manager, the extensions bound
// to it (skill scripts run in its shell's directory under its grants; the
// MCP servers start, bounded by their timeout), the Bash tool with the
// task:* sub-agent handler, and the runner.
func (a *App) NewAgent(ctx context.Context, s AgentSetup) (_ *Agent, err error) {
	warn := s.Warn
	if warn == nil {
		warn = func(error) {}
	}
	cwd := s.Cwd
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("cannot find the working directory: %w", err)
		}
	}
	var (
		settings config.Settings
		choice   providerChoice
		provider llm.Provider
		model    string
	)
	if !s.NoModel {
		if settings, err = a.Settings(); err != nil {
			return nil, err
		}
		if choice, err = a.resolveProvider(ProviderSelection{Provider: s.Provider, Model: s.Model}); err != nil {
			return nil, err
		}
		if provider, err = choice.build(); err != nil {
			return nil, err
		}
		model = choice.Model
	}

	g := &Agent{Model: model, settingsWarnings: a.Config.Warnings}
	defer func() {
		if err != nil {
			_ = g.Close()
		}
	}()
	// Our own temp files (cut outputs, long sub-agent answers) go to a
	// private directory made for this agent, removed when it closes; those
	// of agents that crashed are removed once a day old.
	fsutil.RemoveStale("", scratchMaxAge, time.Now())
	scratch, err := fsutil.NewScratch("")
	if err != nil {
		return nil, err
	}
	g.closers = append(g.closers, scratch.Remove)
	if g.Sandbox, err = a.agentSandbox(cwd, s.AllowPaths, []string{scratch.Dir()}); err != nil {
		return nil, err
	}
	g.closers = append(g.closers, g.Sandbox.Shutdown)
	g.Jobs = a.newJobs(g.Sandbox, scratch.Dir())
	g.closers = append(g.closers, g.Jobs.Close) // before the shell goes: jobs end with their trees
	if log := a.debugLog(); log != nil {
		log.Info("sandbox", "cwd", cwd, "status", g.Sandbox.Status().String(), "warnings", strings.Join(g.Sandbox.Warnings(), "; "))
	}

	// A crashed or killed enhance run leaves its hidden stage in the store.
	skillStore := &skills.Store{Dir: a.Config.SkillsDir, MaxVersions: a.Config.SkillMaxVersions}
	if _, err := evolve.RemoveStaleStages(skillStore, a.Config.SkillSubagentTimeout, time.Now()); err != nil {
		g.notices = append(g.notices, fmt.Sprintf("warning: skills: removing a stale enhance folder failed: %v", err))
	}
	if !s.NoModel {
		// A first run writes settings.json with the defaults, so the user
		// sees what there is to change; an existing file is never touched.
		if _, err := config.WriteDefaultSettings(a.Config.SettingsPath()); err != nil {
			g.notices = append(g.notices, "warning: "+err.Error())
		}
		// The meta-skills the enhance sub-agent follows, installed on first
		// run (before the index is built, so this session sees them).
		did, err := evolve.InstallBundled(skillStore)
		for _, d := range did {
			g.notices = append(g.notices, "skills: "+d)
		}
		if err != nil {
			g.notices = append(g.notices, fmt.Sprintf("warning: skills: installing the bundled meta-skills failed: %v", err))
		}
	}

	eo := s.Extensions
	eo.Sandbox = g.Sandbox
	if eo.Env == nil {
		eo.Env = g.Sandbox.Env()
	}
	if eo.OutputDir == "" {
		eo.OutputDir = scratch.Dir()
	}
	if g.Extensions, err = a.Extensions(ctx, cwd, eo); err != nil {
		return nil, err
	}
	g.closers = append(g.closers, g.Extensions.Close)

	handlers := g.Extensions.Handlers()
	if provider != nil {
		// User hooks come from $SYNAPSE_HOME/settings.json only: no project
		// file is read for them, and sandboxed commands cannot reach that
		// file. Sub-agents run the tool hooks too (see hooks.ForSubagents).
		hookCfg, hookWarns := hooks.ParseConfig(settings.Hooks)
		for _, w := range hookWarns {
			g.notices = append(g.notices, "warning: "+w)
		}
		sessions := &session.Store{Dir: a.Config.SessionsDir}
		g.Hooks = hooks.NewSet(&hooks.Runner{Config: hookCfg, Env: g.Sandbox.Env(), Transcript: sessions.HistoryFile,
			Settle: func() { g.Sandbox.Settle() }})

		g.providers = a.newModelProviders(choice, provider)
		g.Agents = &subagent.Custom{}
		if g.Extensions.Search != nil {
			g.Extensions.Search.Sources = append(g.Extensions.Search.Sources, customAgentEntries(g.Agents))
		}
		setup := SubagentSetup{Provider: provider, Providers: g.providers, Model: model, Cwd: cwd,
			Handlers: g.Extensions.Handlers(), Skills: g.Extensions.Index, OutputDir: scratch.Dir(), Hooks: g.Hooks, PrivateTmp: g.Sandbox.PrivateTmp(),
			Custom: g.Agents, Sandbox: g.Sandbox}
		handlers[router.FamilyTask] = &storeTasks{Handler: a.NewTaskHandler(setup), store: g.Extensions.Skills.Store,
			invalidate: g.Extensions.Index.Invalidate,
			run: func(dir string) func(context.Context, subagent.Request) command.Result {
				return a.enhanceTask(setup, dir)
			}}
	}
	todos := &todo.Store{}
	askScratch, scratchWarns := a.askScratch(settings, g.Sandbox)
	for _, w := range scratchWarns {
		g.notices = append(g.notices, "warning: "+w)
	}
	if g.Tool, err = a.NewTool(ctx, ToolSetup{Cwd: cwd, Exec: g.Sandbox, Todos: todos, Handlers: handlers, Approver: s.Approver, OutputDir: scratch.Dir(), Scratch: askScratch, Jobs: g.Jobs}); err != nil {
		return nil, err
	}
	g.closers = append(g.closers, g.Tool.Close)
	if provider == nil {
		return g, nil
	}

	se, seWarns := settings.SkillEnhanceConfig()
	for _, w := range seWarns {
		g.notices = append(g.notices, "warning: "+w)
	}
	g.autoEnhance.Store(se.AutoEnhance)
	g.settingsPath = a.Config.SettingsPath()
	enh := &evolve.Enhancer{
		Store: g.Extensions.Skills.Store,
		Run: a.enhanceRunner(SubagentSetup{Provider: provider, Providers: g.providers, Model: model, Cwd: cwd,
			Handlers: g.Extensions.Handlers(), Skills: g.Extensions.Index, OutputDir: scratch.Dir(), Hooks: g.Hooks}),
		Enabled:    g.autoEnhance.Load,
		Profile:    se.TriggerProfile,
		Timeout:    a.Config.SkillSubagentTimeout,
		Invalidate: g.Extensions.Index.Invalidate,
		// SYNAPSE_MAX_ENHANCE_CONTEXT_CHARS, SYNAPSE_TOOL_RESULT_SUMMARY_LIMIT
		MaxTranscript: a.Config.MaxEnhanceContextChars,
		MaxResult:     a.Config.ToolResultSummaryLimit,
	}
	g.Hooks.AddStop(evolve.HookName, enh.Hook)
	g.Extensions.Skills.Merge = func(ctx context.Context, dir, target string) (string, error) {
		if subagent.Nested(ctx) {
			return "", errors.New("a sub-agent cannot start the skill-enhance sub-agent; import with --continue, or leave the merge to the main agent")
		}
		return enh.Merge(ctx, dir, target)
	}

	opts := a.AgentOptions(s.Persist, warn)
	opts.Hooks = g.Hooks
	opts.Provider, opts.Model, opts.Cwd = provider, model, cwd
	opts.Tool, opts.Todos, opts.OnEvent = g.Tool, todos, logEvents(a.debugLog(), s.OnEvent)
	opts.ResumeID, opts.Fork = s.ResumeID, s.Fork
	opts.DisableSkillSearchInstruction = s.DisableSkillSearchInstruction || !settings.SkillSearchInstruction()
	opts.MaxTokens, opts.ThinkingBudget = settings.MaxTokens, settings.ThinkingBudget
	if s.MaxTurns > 0 {
		opts.MaxTurns = s.MaxTurns
	}
	opts.SystemPrompt = s.SystemPrompt
	if s.AppendSystemPrompt != "" {
		opts.SystemPrompt = cmp.Or(s.SystemPrompt, agent.SystemPrompt(cwd)) + "\n\n" + s.AppendSystemPrompt
	}
	if opts.CompactModel != "" {
		if opts.CompactProvider, err = g.providers.For(opts.CompactModel); err != nil {
			g.settingsWarnings = append(slices.Clone(g.settingsWarnings), fmt.Sprintf("SYNAPSE_COMPACT_MODEL: %v; summaries use the conversation's model", err))
			opts.CompactModel, opts.CompactProvider, err = "", nil, nil
		}
	}
	if g.Runner, err = agent.New(opts); err != nil {
		if s.ResumeID != "" {
			return nil, fmt.Errorf("cannot resume: %w", err)
		}
		return nil, err
	}
	g.closers = append(g.closers, g.Runner.Close)
	return g, nil
}

// newJobs is the agent's job table: jobs run in its shell; logs go to its
// scratch directory. The FIFOs are made where the sandbox may open them for
// writing at the same path: the scratch directory (bwrap binds it
// read-only, which a FIFO does not mind), or under Landlock, which checks
// FIFOs like files, its temp directory (asked when a job starts: plan mode
// makes the sandbox read-only, with a temp directory of its own).
func (a *App) newJobs(sb *sandbox.Manager, scratch string) *jobs.Table {
	t := jobs.New(jobs.Options{
		Dir:     scratch,
		FifoDir: sb.SameTmp,
		Exec: func(ctx context.Context, cmd string) (command.Result, error) {
			return sb.Execute(ctx, cmd, sb.Cwd())
		},
		Detach:  sb.Detach,
		MaxRead: a.Config.OutputCap,
	})
	sb.CountJobs(t.Running)
	return t
}

// askScratch is the ask permission mode's scratch list: the session's
// private /tmp (also $TMPDIR) when the sandbox gives it one (a shared host
// /tmp is no scratch space), less the roots bound over it at their own
// path (a project under the host's /tmp), and settings.json's
// "permissions.scratch". Symbolic links are read through the sandbox's
// mapping of /tmp, so a link a command left there is seen where it leads.
func (a *App) askScratch(settings config.Settings, sb *sandbox.Manager) (writecheck.Checker, []string) {
	c := writecheck.Checker{Env: map[string]string{}, HostPath: sb.HostPath}
	if a.Config.UserHome != "" {
		c.Env["HOME"] = a.Config.UserHome
	}
	extra, warns := settings.ScratchPaths(a.Config.UserHome, func(k string) (string, bool) {
		v := a.Config.Getenv(k)
		return v, v != ""
	})
	if sb.PrivateTmp() != "" {
		c.Scratch = append(c.Scratch, sandbox.PrivateTmp)
		c.Env["TMPDIR"] = sandbox.PrivateTmp
		own := writecheck.Checker{Scratch: extra, HostPath: sb.HostPath}
		c.Shadowed = func(p string) bool {
			return strings.HasPrefix(p, sandbox.PrivateTmp+"/") && sb.HostPath(p) == p && !own.InScratch(p)
		}
	}
	c.Scratch = append(c.Scratch, extra...)
	return c, warns
}
