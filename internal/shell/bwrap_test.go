package shell

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// bwrapArgv is a minimal bubblewrap sandbox with its own PID namespace: the
// shell's $$ and its children's pids differ from the host's, so this proves
// framing and cancel do not depend on host files or host pids.
func bwrapArgv(t testing.TB) []string {
	t.Helper()
	p, err := exec.LookPath("bwrap")
	if err != nil {
		if tt, ok := t.(*testing.T); ok {
			testutil.RequireTool(tt, "bwrap")
		}
		t.Skip("bwrap not installed")
	}
	return []string{p, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--die-with-parent", "--bind", "/tmp", "/tmp", "/bin/bash"}
}

func TestUnderBwrap(t *testing.T) {
	dir := t.TempDir() // under /tmp, which the sandbox binds
	s := startT(t, Options{Argv: bwrapArgv(t), Dir: dir})
	if r := execT(t, s, "echo hello; echo $$"); !strings.HasPrefix(r.Stdout, "hello\n") || r.ExitCode != 0 {
		t.Fatalf("echo: %+v", r)
	}
	if r := execT(t, s, "mkdir -p 'in box' && cd 'in box' && export K=v"); r.Cwd != dir+"/in box" {
		t.Fatalf("cd: %+v", r)
	}
	keeper := tag(t)
	execT(t, s, "sleep "+keeper+" &")

	tg := tag(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch := executeAsync(ctx, s, "bash -c 'sleep "+tg+" & sleep "+tg+"' | cat; echo should-not-run")
	waitRunning(t, tg)
	cancel()
	r := recv(t, ch)
	if r.err != nil || r.res.ExitCode != 130 || strings.Contains(r.res.Stdout, "should-not-run") {
		t.Fatalf("cancel: %+v %v", r.res, r.err)
	}
	waitGone(t, tg)
	if r := execT(t, s, "echo $K; pwd"); r.Stdout != "v\n"+dir+"/in box\n" {
		t.Fatalf("after cancel: %+v", r)
	}
	if len(liveWithTag(keeper)) == 0 {
		t.Fatal("cancel killed a background job of an earlier command")
	}
	if r := execT(t, s, "exit 7"); r.ExitCode != 7 || s.Alive() {
		t.Fatalf("exit: %+v alive=%v", r, s.Alive())
	}
	_ = s.Close()
	waitGone(t, keeper)
}

func BenchmarkEchoRoundTripBwrap(b *testing.B) {
	s, err := Start(context.Background(), Options{Argv: bwrapArgv(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchEcho(b, s)
}
