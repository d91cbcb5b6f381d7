package jobs

import (
	"context"
	"github.com/synapse-agent/synapse/internal/testutil"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/shell"
)

var ctx = context.Background()

// newT is a table over a real shell session in a fresh directory.
func newT(t *testing.T) *Table {
	t.Helper()
	return newTOpts(t, Options{})
}

func newTOpts(t *testing.T, o Options) *Table {
	t.Helper()
	dir := t.TempDir()
	sh, err := shell.Start(context.Background(), shell.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	o.Dir = dir
	o.Exec = sh.Execute
	tb := New(o)
	t.Cleanup(func() {
		_ = tb.Close()
		_ = sh.Close()
	})
	return tb
}

// pidsIn reads the pids a job wrote to a file, one a line.
func pidsIn(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid %q: %v", f, err)
		}
		out = append(out, n)
	}
	return out
}

// gone reports whether no process of pids exists any more (a zombie not
// yet reaped by its parent counts as gone: it runs nothing).
func gone(pids []int) bool {
	for _, p := range pids {
		if syscall.Kill(p, 0) == nil {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
			if err == nil && !strings.Contains(string(b), ") Z ") {
				return false
			}
		}
	}
	return true
}

func TestStartReadWaitEnd(t *testing.T) {
	tb := newT(t)
	gate := t.TempDir() + "/go"
	info, err := tb.Start(ctx, "echo one; echo two >&2; until [ -e "+gate+" ]; do sleep 0.01; done; echo three; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != 1 || info.State != Running {
		t.Fatalf("info = %+v", info)
	}
	ctx := context.Background()
	out, why, err := tb.Wait(ctx, 1, regexp.MustCompile(`two`), 20*time.Second)
	if err != nil || why != WaitMatched || !strings.Contains(out.Text, "one\n") || !strings.Contains(out.Text, "two\n") {
		t.Fatalf("Wait = %q %s %v", out.Text, why, err)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, why, err = tb.Wait(ctx, 1, nil, 20*time.Second)
	if err != nil || why != WaitEnded || out.Text != "three\n" || out.Info.State != Exited || out.Info.ExitCode != 3 {
		t.Fatalf("Wait for the end = %q %s %+v %v", out.Text, why, out.Info, err)
	}
	out, err = tb.Read(1)
	if err != nil || out.Text != "" {
		t.Fatalf("Read after everything was read = %q %v", out.Text, err)
	}
	b, err := os.ReadFile(info.Log)
	if err != nil || string(b) != "one\ntwo\nthree\n" {
		t.Fatalf("log %s = %q %v", info.Log, b, err)
	}
}

func TestWaitTimesOut(t *testing.T) {
	tb := newT(t)
	if _, err := tb.Start(ctx, "echo hi; exec sleep 300"); err != nil {
		t.Fatal(err)
	}
	out, why, err := tb.Wait(context.Background(), 1, regexp.MustCompile(`never`), 50*time.Millisecond)
	if err != nil || why != WaitTimedOut || out.Info.State != Running {
		t.Fatalf("Wait = %q %s %+v %v", out.Text, why, out.Info, err)
	}
}

func TestStopKillsTree(t *testing.T) {
	tb := newT(t)
	dir := t.TempDir()
	pidFile := dir + "/pids"
	// A child in a group of its own and one that ignores SIGTERM: Stop must
	// still leave nothing behind.
	info, err := tb.Start(ctx, `set -m; sleep 300 & echo $! >> `+pidFile+`; set +m
bash -c 'trap "" TERM; echo $BASHPID >> `+pidFile+`; echo ready; while :; do sleep 1; done' &
echo $BASHPID >> `+pidFile+`; wait`)
	if err != nil {
		t.Fatal(err)
	}
	if _, why, err := tb.Wait(context.Background(), info.ID, regexp.MustCompile(`ready`), 20*time.Second); err != nil || why != WaitMatched {
		t.Fatalf("Wait ready = %s %v", why, err)
	}
	pids := pidsIn(t, pidFile)
	if len(pids) != 3 || gone(pids) {
		t.Fatalf("pids = %v", pids)
	}
	got, err := tb.Stop(info.ID)
	if err != nil || got.State != Stopped {
		t.Fatalf("Stop = %+v %v", got, err)
	}
	testutil.WaitFor(t, "every process of the job to end", func() bool { return gone(pids) })
	if tb.Running() != 0 {
		t.Fatalf("Running = %d after Stop", tb.Running())
	}
}

func TestCloseKillsEveryJob(t *testing.T) {
	tb := newT(t)
	pidFile := t.TempDir() + "/pids"
	for range 2 {
		if _, err := tb.Start(ctx, `sleep 300 & echo $! >> `+pidFile+`; echo $BASHPID >> `+pidFile+`; wait`); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, "both jobs to start", func() bool { b, _ := os.ReadFile(pidFile); return len(strings.Fields(string(b))) == 4 })
	pids := pidsIn(t, pidFile)
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "every process to end", func() bool { return gone(pids) })
	if _, err := tb.Start(ctx, "true"); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestReadCapsAndLogRestarts(t *testing.T) {
	tb := newTOpts(t, Options{MaxRead: 100, MaxLog: 1000})
	if _, err := tb.Start(ctx, `for i in $(seq 1 300); do echo "line $i"; done`); err != nil {
		t.Fatal(err)
	}
	out, _, err := tb.Wait(context.Background(), 1, nil, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out.Dropped == 0 || out.Omitted == 0 || !strings.Contains(out.Text, "line 300\n") || !strings.Contains(out.Text, "bytes omitted") {
		t.Fatalf("out = %+v", out)
	}
	if st, err := os.Stat(out.Info.Log); err != nil || st.Size() > 1000 {
		t.Fatalf("log size: %v %v", st, err)
	}
}

func TestUnknownJob(t *testing.T) {
	tb := newT(t)
	if _, err := tb.Read(7); err == nil || !strings.Contains(err.Error(), "job:list") {
		t.Fatalf("Read(7) = %v", err)
	}
}

// TestBackgroundAdoptsGroups: a moved command is a job whose later output
// comes through the sink and whose groups Stop ends.
func TestBackgroundAdoptsGroups(t *testing.T) {
	dir := t.TempDir()
	var sink func([]byte)
	var note string
	cmd := execSleep(t)
	tb := New(Options{Dir: dir, Running: func() string { return "sleep 300" },
		Detach: func(n string, s func([]byte)) ([]int, error) {
			note, sink = n, s
			return []int{cmd}, nil
		}})
	t.Cleanup(func() { _ = tb.Close() })
	info, err := tb.Background()
	if err != nil || info.ID != 1 || !info.Moved || info.Command != "sleep 300" {
		t.Fatalf("Background = %+v %v", info, err)
	}
	if !strings.Contains(note, "job 1") || !strings.Contains(note, "job:read 1") {
		t.Fatalf("note = %q", note)
	}
	sink([]byte("later\n"))
	if out, err := tb.Read(1); err != nil || out.Text != "later\n" {
		t.Fatalf("Read = %q %v", out.Text, err)
	}
	if got, err := tb.Stop(1); err != nil || got.State != Stopped {
		t.Fatalf("Stop = %+v %v", got, err)
	}
	testutil.WaitFor(t, "the moved process to end", func() bool { return gone([]int{cmd}) })
}

// execSleep starts a sleep in a process group of its own, reaped by the test.
func execSleep(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/sleep", []string{"sleep", "300"}, &os.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true}})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = p.Wait() }()
	t.Cleanup(func() { _ = p.Kill() })
	return p.Pid
}
