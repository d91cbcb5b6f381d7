package subagent

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/shell"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// provider is the real Anthropic adapter pointed at the fake server, without retries.
func provider(srv *llmtest.Server) llm.Provider {
	return anthropic.New(anthropic.Options{APIKey: "llmtest-key", BaseURL: srv.URL(), Retry: &llm.RetryPolicy{}})
}

// startShell starts the real persistent shell for a sandbox manager.
func startShell(ctx context.Context, o sandbox.SessionOptions) (sandbox.Session, error) {
	s, err := shell.Start(ctx, shell.Options{Argv: o.Argv, Dir: o.Dir, Env: o.Env, Timeout: o.Timeout})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// workspaces builds real workspaces: an unsandboxed persistent bash (the
// sandboxed ones are tested through app in internal/e2e), its own Agent
// Shell and todo list. It counts the workspaces built and closed and keeps
// their todo stores.
type workspaces struct {
	dir    string
	built  atomic.Int64
	closed atomic.Int64
	mu     sync.Mutex
	todos  []*todo.Store
	kinds  []string
	// extra are handlers added to every workspace's tool.
	extra map[router.Family]command.Handler
}

func newWorkspaces(t *testing.T) *workspaces {
	testutil.RequireTool(t, "bash")
	return &workspaces{dir: t.TempDir()}
}

func (w *workspaces) build(ctx context.Context, k Kind) (Workspace, error) {
	w.built.Add(1)
	mgr, err := sandbox.NewManager(sandbox.ManagerOptions{
		Cwd:          w.dir,
		Env:          []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.dir, "LC_ALL=C"},
		StartSession: startShell,
	})
	if err != nil {
		return Workspace{}, err
	}
	todos := &todo.Store{}
	w.mu.Lock()
	w.todos = append(w.todos, todos)
	w.kinds = append(w.kinds, k.Name)
	w.mu.Unlock()
	sh := agentsh.New(agentsh.Options{Exec: mgr, Paths: mgr, Todos: todos})
	bash := tool.New(tool.Options{Exec: mgr, Agent: sh, Handlers: w.extra})
	return Workspace{Tool: bash, Todos: todos, Close: func() error {
		w.closed.Add(1)
		return mgr.Shutdown()
	}}, nil
}

// parent records what a sub-agent reports to its parent.
type parent struct {
	model string

	mu     sync.Mutex
	events []agent.Event
	usages []recordedUsage
}

type recordedUsage struct {
	usage llm.Usage
	model string
}

func (p *parent) Emit(e agent.Event) {
	p.mu.Lock()
	p.events = append(p.events, e)
	p.mu.Unlock()
}

func (p *parent) RecordUsage(u llm.Usage, model string) {
	p.mu.Lock()
	p.usages = append(p.usages, recordedUsage{u, model})
	p.mu.Unlock()
}

func (p *parent) Model() string { return p.model }

func (p *parent) Events() []agent.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.Event(nil), p.events...)
}

func (p *parent) Usages() []recordedUsage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]recordedUsage(nil), p.usages...)
}

func (p *parent) kinds() []agent.EventKind {
	var out []agent.EventKind
	for _, e := range p.Events() {
		out = append(out, e.Kind)
	}
	return out
}

// fixture is a handler over a fake LLM server with real workspaces.
type fixture struct {
	srv    *llmtest.Server
	ws     *workspaces
	parent *parent
	h      *Handler
}

func newFixture(t *testing.T, opts Options, turns ...llmtest.Turn) *fixture {
	t.Helper()
	f := &fixture{srv: llmtest.New(t, turns...), ws: newWorkspaces(t), parent: &parent{model: "parent-model"}}
	opts.Provider = provider(f.srv)
	if opts.Workspace == nil {
		opts.Workspace = f.ws.build
	}
	if opts.Cwd == "" {
		opts.Cwd = f.ws.dir
	}
	f.h = New(opts)
	return f
}

// traced is ctx as the parent's tool call gives it: reporting to f.parent.
func (f *fixture) traced(ctx context.Context) context.Context {
	return agent.WithCallTrace(ctx, agent.CallTrace{Emit: f.parent.Emit, RecordUsage: f.parent.RecordUsage, Model: f.parent.Model})
}

// Parse is parseIn against the built-in types only.
func Parse(line string) (Request, error) { return parseIn(line, Kinds()) }

// Help is the --help text of one built-in kind.
func Help(k Kind) string { return helpIn(k, Kinds()) }
