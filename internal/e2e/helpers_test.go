package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/todo"
)

// world is one configured Synapse: a fake model server, a project directory
// outside the temp directory (so a read-only sandbox really has no writable
// workspace), and the app resolved from an environment pointing at both.
type world struct {
	srv  *llmtest.Server
	app  *app.App
	proj string
	tmp  string
	env  map[string]string
}

func newWorld(t testing.TB, env map[string]string) *world {
	t.Helper()
	base := t.TempDir()
	w := &world{srv: llmtest.NewServer(), proj: filepath.Join(base, "proj"), tmp: filepath.Join(base, "tmp")}
	t.Cleanup(w.srv.Close)
	for _, d := range []string{w.proj, w.tmp, filepath.Join(base, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The sandbox keeps the system temp directory writable; move it away
	// from the project.
	t.Setenv("TMPDIR", w.tmp)
	w.env = map[string]string{
		"HOME":               filepath.Join(base, "home"),
		"SYNAPSE_HOME":       filepath.Join(base, "home", ".synapse"),
		"ANTHROPIC_BASE_URL": w.srv.URL(),
		"ANTHROPIC_API_KEY":  "llmtest-key",
		"SYNAPSE_MODEL":      "parent-model",
	}
	for k, v := range env {
		w.env[k] = v
	}
	a, err := app.New(testutil.MapEnv(w.env))
	if err != nil {
		t.Fatal(err)
	}
	w.app = a
	return w
}

// events records a runner's events.
type events struct {
	mu  sync.Mutex
	all []agent.Event
	// running counts sub-agents between TaskStart and TaskEnd; peak is its maximum.
	running, peak int
}

func (e *events) add(ev agent.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ev)
	switch ev.Kind {
	case agent.TaskStart:
		e.running++
		e.peak = max(e.peak, e.running)
	case agent.TaskEnd:
		e.running--
	}
}

func (e *events) list() []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]agent.Event(nil), e.all...)
}

func (e *events) count(k agent.EventKind) int {
	n := 0
	for _, ev := range e.list() {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

func (e *events) maxRunning() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peak
}

// parent is a top-level agent built by app.NewAgent, the production wiring.
type parent struct {
	runner *agent.Runner
	todos  *todo.Store
	ev     *events
}

func (w *world) newParent(t testing.TB, persist bool) *parent {
	t.Helper()
	ev := &events{}
	g, err := w.app.NewAgent(context.Background(), app.AgentSetup{
		Cwd: w.proj, Persist: persist, OnEvent: ev.add, DisableSkillSearchInstruction: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return &parent{runner: g.Runner, todos: g.Runner.Todos(), ev: ev}
}

// isSubagent tells sub-agent requests from the parent's by their system prompt.
func isSubagent(req *llmtest.Request) bool {
	return strings.Contains(req.System, "sub-agent of Synapse")
}
