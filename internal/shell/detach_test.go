package shell

import (
	"context"
	"errors"
	"github.com/synapse-agent/synapse/internal/testutil"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// sinkBuf collects what a moved command writes.
type sinkBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *sinkBuf) write(b []byte) {
	s.mu.Lock()
	s.b.Write(b)
	s.mu.Unlock()
}

func (s *sinkBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// detachCase moves a running command to the background in s and checks
// that it keeps running as a job of the shell, that the rest of its line
// does not run, that the shell keeps its state and that the job's later
// output reaches the sink.
func detachCase(t *testing.T, s *Session) {
	tg := tag(t)
	execT(t, s, "export KEEP=kept; cd /")
	ctx := context.Background()
	ch := executeAsync(ctx, s, "echo before; sleep "+tg+"; echo never")
	waitRunning(t, tg)
	var sink sinkBuf
	groups, err := s.Detach("moved as job 1", sink.write)
	if err != nil {
		t.Fatalf("Detach: %v", err)
	}
	r := recv(t, ch)
	if r.err != nil {
		t.Fatalf("Execute: %v", r.err)
	}
	if r.res.ExitCode != 0 || !strings.Contains(r.res.Stdout, "before") || strings.Contains(r.res.Stdout, "never") ||
		!strings.Contains(r.res.Stderr, "moved as job 1") {
		t.Fatalf("result = %+v", r.res)
	}
	if len(groups) != 1 {
		t.Fatalf("groups = %v, want the sleep's one", groups)
	}
	if len(liveWithTag(tg)) == 0 {
		t.Fatal("the moved command is not running")
	}
	got := execT(t, s, `echo "$KEEP $PWD"`)
	if strings.TrimSpace(got.Stdout) != "kept /" {
		t.Fatalf("shell state after the move: %q", got.Stdout)
	}
	// A later interrupt must spare the job, as it spares `cmd &`.
	cctx, cancel := context.WithCancel(ctx)
	ch2 := executeAsync(cctx, s, "sleep 1000.5")
	waitRunning(t, "1000.5")
	cancel()
	if r := recv(t, ch2); r.res.ExitCode != 130 {
		t.Fatalf("interrupted command: %+v", r.res)
	}
	if len(liveWithTag(tg)) == 0 {
		t.Fatal("interrupting a later command killed the moved one")
	}
	if err := syscall.Kill(-groups[0], syscall.SIGKILL); err != nil {
		t.Fatalf("kill the job's group: %v", err)
	}
	waitGone(t, tg)
}

func TestDetachMovesRunningCommand(t *testing.T) {
	detachCase(t, startT(t, Options{}))
}

func TestDetachInPIDNamespace(t *testing.T) {
	detachCase(t, startT(t, Options{Argv: bwrapArgv(t)}))
}

func TestDetachOutputGoesToSink(t *testing.T) {
	s := startT(t, Options{})
	dir := t.TempDir()
	tg := tag(t)
	ch := executeAsync(context.Background(), s, "bash -c 'echo first; touch "+dir+"/started; until [ -e "+dir+"/go ]; do sleep 0.01; done; echo late-line; exec sleep "+tg+"'")
	testutil.WaitFor(t, "the command to start", func() bool { _, err := os.Stat(dir + "/started"); return err == nil })
	var sink sinkBuf
	groups, err := s.Detach("moved", sink.write)
	if err != nil {
		t.Fatalf("Detach: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-groups[0], syscall.SIGKILL) })
	if r := recv(t, ch); !strings.Contains(r.res.Stdout, "first") {
		t.Fatalf("result = %+v", r.res)
	}
	if err := os.WriteFile(dir+"/go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the job's later output in the sink", func() bool { return strings.Contains(sink.String(), "late-line") })
}

func TestDetachNothingRunning(t *testing.T) {
	s := startT(t, Options{})
	if _, err := s.Detach("x", func([]byte) {}); !errors.Is(err, ErrNoCommand) {
		t.Fatalf("Detach with nothing running = %v, want ErrNoCommand", err)
	}
	execT(t, s, "true")
	if _, err := s.Detach("x", func([]byte) {}); !errors.Is(err, ErrNoCommand) {
		t.Fatalf("Detach after a command = %v, want ErrNoCommand", err)
	}
}
