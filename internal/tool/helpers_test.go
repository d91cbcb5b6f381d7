package tool

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/shell"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// sessionExec puts a real persistent bash session behind the Executor
// interface and records every call, so tests can count what reached it.
type sessionExec struct {
	s     *shell.Session
	mu    sync.Mutex
	calls []execCall
}

type execCall struct{ cmd, cwd string }

func (e *sessionExec) Execute(ctx context.Context, cmd, cwd string) (command.Result, error) {
	e.mu.Lock()
	e.calls = append(e.calls, execCall{cmd, cwd})
	e.mu.Unlock()
	return e.s.Execute(ctx, cmd)
}

func (e *sessionExec) Cwd() string                       { return e.s.Cwd() }
func (e *sessionExec) Restart(ctx context.Context) error { return e.s.Restart(ctx) }

func (e *sessionExec) Calls() []execCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]execCall(nil), e.calls...)
}

func startSession(t testing.TB) *sessionExec {
	t.Helper()
	testutil.RequireTool(t, "bash")
	s, err := shell.Start(context.Background(), shell.Options{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LC_ALL=C"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &sessionExec{s: s}
}

// newTool builds the full tool over a real session and the real Agent Shell.
func newTool(t testing.TB, mod func(*Options)) (*Bash, *sessionExec) {
	t.Helper()
	ex := startSession(t)
	o := Options{Exec: ex, Agent: agentsh.New(agentsh.Options{Exec: ex}), OutputDir: t.TempDir()}
	if mod != nil {
		mod(&o)
	}
	return New(o), ex
}

// fakeExec answers every command with a scripted result and records calls
// (seed 001 routes: "sandboxManager.execute('npm test', '/workspace')").
type fakeExec struct {
	cwd    string
	mu     sync.Mutex
	calls  []execCall
	answer func(cmd string) command.Result
}

func (f *fakeExec) Execute(_ context.Context, cmd, cwd string) (command.Result, error) {
	f.mu.Lock()
	f.calls = append(f.calls, execCall{cmd, cwd})
	f.mu.Unlock()
	if f.answer == nil {
		return command.Result{}, nil
	}
	return f.answer(cmd), nil
}

func (f *fakeExec) Cwd() string                   { return f.cwd }
func (f *fakeExec) Restart(context.Context) error { return nil }

func (f *fakeExec) Calls() []execCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]execCall(nil), f.calls...)
}

func category(r Result) string { return r.Facts.FailureCategory }

func mustContain(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Errorf("%s = %q, want it to contain %q", what, s, sub)
	}
}

// exitCodeOf is r's exit code, or nil when none was reported.
func exitCodeOf(r Result) any {
	if c, ok := r.Facts.Exit(); ok {
		return c
	}
	return nil
}

// handlerFunc adapts a function to command.Handler.
type handlerFunc func(ctx context.Context, line string) command.Result

func (f handlerFunc) Run(ctx context.Context, line string) command.Result { return f(ctx, line) }
