package agentsh

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// bashExec runs each command with the real bash in dir and records the calls,
// so tests can count what reached the shell.
type bashExec struct {
	dir   string
	mu    sync.Mutex
	calls []execCall
}

type execCall struct{ cmd, cwd string }

func (e *bashExec) Execute(ctx context.Context, cmd, cwd string) (command.Result, error) {
	e.mu.Lock()
	e.calls = append(e.calls, execCall{cmd, cwd})
	e.mu.Unlock()
	c := exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c", cmd)
	c.Dir = cwd
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	res := command.Result{Stdout: out.String(), Stderr: errb.String(), Cwd: cwd}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return res, err
	}
	return res, nil
}

func (e *bashExec) Cwd() string { return e.dir }

func (e *bashExec) Calls() []execCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]execCall(nil), e.calls...)
}

// denyUnder blocks every path under root.
type denyUnder struct{ root string }

func (d denyUnder) CheckPath(p string, write bool) (bool, string, string) {
	if p == d.root || filepath.Dir(p) == d.root || len(p) > len(d.root) && p[:len(d.root)+1] == d.root+"/" {
		return true, "outside the allowed directories", p
	}
	return false, "", ""
}

// allowOnly blocks every path outside root (keeps fuzzing inside a temp dir).
type allowOnly struct{ root string }

func (a allowOnly) CheckPath(p string, write bool) (bool, string, string) {
	if p == a.root || strings.HasPrefix(p, a.root+"/") {
		return false, "", ""
	}
	return true, "outside the test directory", p
}

// newTestShell gives a Shell whose session directory is a fresh temp dir.
func newTestShell(t testing.TB, mod func(*Options)) (*Shell, *bashExec) {
	t.Helper()
	ex := &bashExec{dir: t.TempDir()}
	o := Options{Exec: ex, Home: t.TempDir()}
	if mod != nil {
		mod(&o)
	}
	return New(o), ex
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
