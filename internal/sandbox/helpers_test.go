package sandbox

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// requireBwrap skips without bubblewrap, except under CI where it fails.
func requireBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap is required under CI: %v", err)
		}
		t.Skipf("bwrap not installed: %v", err)
	}
	if err := probePlatform(context.Background(), "linux", nil); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("bwrap cannot sandbox under CI: %v", err)
		}
		t.Skipf("bwrap cannot sandbox here: %v", err)
	}
}

// pipeSession is a small persistent bash over pipes for this package's
// tests (the product wires internal/shell). Each command's stderr goes to a
// file in errDir, which must be writable inside the sandbox.
type pipeSession struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	errDir string

	mu   sync.Mutex
	cwd  string
	dead bool
	n    int
}

func startPipeSession(ctx context.Context, opts SessionOptions, errDir string) (Session, error) {
	cmd := exec.Command(opts.Argv[0], append(opts.Argv[1:], "--norc", "--noprofile")...)
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &pipeSession{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout), errDir: errDir, cwd: opts.Dir}
	go func() { _ = cmd.Wait() }()
	if _, err := s.Execute(ctx, "true"); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("shell did not start: %w", err)
	}
	return s, nil
}

func (s *pipeSession) Execute(ctx context.Context, c string) (command.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return command.Result{}, errors.New("shell is dead")
	}
	s.n++
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	mark := "__END_" + hex.EncodeToString(b)
	errf := filepath.Join(s.errDir, "stderr-"+mark)
	script := fmt.Sprintf("__c=$(cat <<'%s'\n%s\n%s\n)\neval \"$__c\" </dev/null 2>%q\nprintf '\\n%s %%d %%s\\n' $? \"$PWD\"\n", mark, c, mark, errf, mark)
	if _, err := io.WriteString(s.stdin, script); err != nil {
		s.dead = true
		return command.Result{}, err
	}
	var stdout strings.Builder
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			s.dead = true
			return command.Result{}, fmt.Errorf("shell exited: %w", err)
		}
		if rest, ok := strings.CutPrefix(line, mark+" "); ok {
			f := strings.SplitN(strings.TrimSuffix(rest, "\n"), " ", 2)
			code, _ := strconv.Atoi(f[0])
			if len(f) == 2 {
				s.cwd = f[1]
			}
			errb, _ := os.ReadFile(errf)
			_ = os.Remove(errf)
			out := strings.TrimRight(stdout.String(), "\n")
			return command.Result{Stdout: out, Stderr: string(errb), ExitCode: code, Cwd: s.cwd}, nil
		}
		stdout.WriteString(line)
	}
}

func (s *pipeSession) Restart(ctx context.Context) error { return errors.New("not supported") }
func (s *pipeSession) Close() error {
	s.mu.Lock()
	s.dead = true
	s.mu.Unlock()
	_ = s.stdin.Close()
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
	return nil
}
func (s *pipeSession) Cwd() string { s.mu.Lock(); defer s.mu.Unlock(); return s.cwd }
func (s *pipeSession) Alive() bool { s.mu.Lock(); defer s.mu.Unlock(); return !s.dead }

// realManager builds a manager with the real local provider and bwrap over a
// temp workspace; home is a fake user home holding the default secrets.
type fixture struct {
	ws, home, tmp, cfgPath string
	m                      *Manager
}

func newFixture(t testing.TB, mutate func(*ManagerOptions)) *fixture {
	t.Helper()
	requireBwrap(t)
	root := t.TempDir()
	f := &fixture{ws: filepath.Join(root, "work space"), home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp")}
	for _, d := range []string{f.ws, f.home, f.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.cfgPath = filepath.Join(f.home, ".synapse", "sandbox.json")
	opts := ManagerOptions{
		ConfigPath: f.cfgPath,
		Config:     Config{Enabled: true, Provider: "local"},
		Cwd:        f.ws,
		Env:        []string{"HOME=" + f.home, "PATH=" + os.Getenv("PATH"), "LANG=C"},
		TempDir:    f.tmp,
		StartSession: func(ctx context.Context, o SessionOptions) (Session, error) {
			return startPipeSession(ctx, o, f.tmp)
		},
	}
	if mutate != nil {
		mutate(&opts)
	}
	m, err := NewManager(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.m = m
	t.Cleanup(func() { _ = m.Shutdown() })
	return f
}

func (f *fixture) run(t testing.TB, c string) command.Result {
	t.Helper()
	res, err := f.m.Execute(context.Background(), c, "")
	if err != nil {
		t.Fatalf("execute %q: %v", c, err)
	}
	return res
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
