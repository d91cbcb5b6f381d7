package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// Without /dev/fd (a /dev with only null in it) the driver cannot source
// the command: it evals it, and commands behave as they do elsewhere
// (cancel aside, which needs the sourced command's `return`).
func TestWithoutDevFd(t *testing.T) {
	p, err := exec.LookPath("bwrap")
	if err != nil {
		testutil.RequireTool(t, "bwrap")
	}
	argv := []string{p, "--ro-bind", "/", "/", "--tmpfs", "/dev", "--dev-bind", "/dev/null", "/dev/null",
		"--proc", "/proc", "--unshare-pid", "--die-with-parent", "--bind", "/tmp", "/tmp", "/bin/bash"}
	dir := t.TempDir()
	s := startT(t, Options{Argv: argv, Dir: dir})
	if r := execT(t, s, "[[ -e /dev/fd ]] || echo none"); r.Stdout != "none\n" {
		t.Skipf("/dev/fd exists in this bwrap: %+v", r)
	}
	big := "x='" + strings.Repeat("q", 70000) + "'; echo ${#x}"
	steps := []struct{ cmd, stdout, stderr string }{
		{"echo out; echo err >&2", "out\n", "err\n"},
		{"read x; echo rc=$?", "rc=1\n", ""},
		{"exec >/dev/null 2>&1; echo hidden", "", ""},
		{"echo back; echo back2 >&2", "back\n", "back2\n"},
		{"cd /tmp && export K=v", "", ""},
		{`echo "$K $PWD"`, "v /tmp\n", ""},
		{"echo 'héllo'", "héllo\n", ""},
		{big, "70000\n", ""},
		{"set -x; echo traced", "traced\n", "+++ echo traced\n"},
		{"set +x", "", "+++ set +x\n"},
	}
	for _, st := range steps {
		r := execT(t, s, st.cmd)
		if r.Stdout != st.stdout || r.Stderr != st.stderr {
			t.Fatalf("%q: stdout %q stderr %q, want %q %q", trunc(st.cmd), r.Stdout, r.Stderr, st.stdout, st.stderr)
		}
	}
	// eval reports the driver's line, not the command's.
	if r := execT(t, s, "no_such_cmd_xyz"); r.ExitCode != 127 || !strings.HasSuffix(r.Stderr, ": no_such_cmd_xyz: command not found\n") {
		t.Fatalf("command not found: %+v", r)
	}
	if r := execT(t, s, "exit 3"); r.ExitCode != 3 || s.Alive() {
		t.Fatalf("exit: %+v", r)
	}
}

// With OwnPIDNamespace, closing kills the wrapper alone: the end of its PID
// namespace must take every process of the session with it, those that left
// the shell's session or process group included, before Close returns (the
// sandbox's last check of the repositories comes after). --new-session, as
// the sandbox passes it, keeps the namespace out of the wrapper's group.
func TestCloseEndsItsPIDNamespace(t *testing.T) {
	argv := bwrapArgv(t)
	argv = append([]string{argv[0], "--new-session"}, argv[1:]...)
	dir := t.TempDir()
	s := startT(t, Options{Argv: argv, Dir: dir, OwnPIDNamespace: true})
	tg := tag(t)
	// A writer that never stops shows any moment it runs after Close.
	out := filepath.Join(dir, "out")
	execT(t, s, "setsid sleep "+tg+" & (sleep "+tg+" &); nohup sleep "+tg+" >/dev/null 2>&1 & "+
		"setsid bash -c 'while :; do echo x; done' >"+out+" 2>&1 &")
	testutil.WaitFor(t, "three processes tagged "+tg, func() bool { return len(liveWithTag(tg)) == 3 })
	testutil.WaitFor(t, "the writer writing", func() bool { fi, err := os.Stat(out); return err == nil && fi.Size() > 0 })
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	before, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if after, err := os.Stat(out); err != nil || after.Size() != before.Size() {
		t.Fatalf("a process of the session wrote after Close returned (%d bytes, then %v, %v)", before.Size(), after.Size(), err)
	}
	if live := liveWithTag(tg); len(live) > 0 {
		t.Fatalf("still running after Close: %q", live)
	}
}
