package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func bash(script string) []string { return []string{"/bin/bash", "-c", script} }

func TestRunExitStatus(t *testing.T) {
	tests := []struct {
		name, script   string
		code           int
		stdout, stderr string
	}{
		{"success", "echo hi", 0, "hi\n", ""},
		{"exit code", "echo oops >&2; exit 3", 3, "", "oops\n"},
		{"killed by a signal", "kill -TERM $$", 128 + int(syscall.SIGTERM), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run(context.Background(), Cmd{Argv: bash(tt.script)})
			if r.ExitCode != tt.code || r.Stdout != tt.stdout || r.Stderr != tt.stderr || r.Canceled || r.StartErr != nil {
				t.Errorf("got %+v, want exit %d stdout %q stderr %q", r, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestRunCombinedKeepsWriteOrder(t *testing.T) {
	// Many alternating writes: two pipes read by two goroutines would
	// group them per stream; one pipe keeps them in order.
	script := `for i in 1 2 3 4 5 6 7 8; do echo "out$i"; echo "err$i" >&2; done`
	r := Run(context.Background(), Cmd{Argv: bash(script), Combined: true})
	var want strings.Builder
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&want, "out%d\nerr%d\n", i, i)
	}
	if r.Stdout != want.String() || r.Stderr != "" || r.ExitCode != 0 {
		t.Errorf("got %+v, want stdout %q and no stderr", r, want.String())
	}
}

func TestRunStdinDirEnv(t *testing.T) {
	dir := t.TempDir()
	r := Run(context.Background(), Cmd{Argv: bash(`read -r l; echo "$l $PWD $GREETING"`), Dir: dir,
		Env: []string{"GREETING=hello"}, Stdin: strings.NewReader("line\n")})
	if want := "line " + dir + " hello\n"; r.Stdout != want {
		t.Errorf("stdout %q, want %q", r.Stdout, want)
	}
	// Without Stdin the child reads EOF, never the caller's terminal.
	r = Run(context.Background(), Cmd{Argv: bash(`if read -r l; then echo got; else echo eof; fi`)})
	if r.Stdout != "eof\n" {
		t.Errorf("stdout %q, want eof", r.Stdout)
	}
}

func TestRunCannotStart(t *testing.T) {
	r := Run(context.Background(), Cmd{Argv: []string{"/nonexistent/program"}})
	if r.StartErr == nil || !errors.Is(r.StartErr, os.ErrNotExist) || r.ExitCode != 127 {
		t.Errorf("got %+v, want a start error and 127", r)
	}
	if r := Run(context.Background(), Cmd{}); r.StartErr == nil {
		t.Error("an empty argv started")
	}
}

func TestRunCapsEachStream(t *testing.T) {
	r := Run(context.Background(), Cmd{Argv: bash(`head -c 5000 /dev/zero | tr '\0' a; head -c 10 /dev/zero | tr '\0' b >&2`), MaxOutput: 1000})
	if !strings.HasPrefix(r.Stdout, strings.Repeat("a", 1000)+"\n[… 4000 bytes of output not shown]") {
		t.Errorf("stdout not capped with its note: %q…", r.Stdout[:min(len(r.Stdout), 80)])
	}
	if r.Stderr != "bbbbbbbbbb" {
		t.Errorf("stderr %q, want it whole", r.Stderr)
	}
}

// A cancel kills the whole process group: a grandchild the command started
// dies with it.
func TestRunCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, Cmd{Argv: bash(`sleep 300 & echo $! > ` + pidFile + `; wait`)}) }()
	var pid int
	testutil.WaitFor(t, "the command to start its child", func() bool {
		data, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		return pid != 0
	})
	cancel()
	r := <-done
	if !r.Canceled || r.ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("got %+v, want canceled with 137", r)
	}
	testutil.WaitFor(t, "the grandchild to die with the cancel", func() bool { return syscall.Kill(pid, 0) != nil })
}

// A background job that keeps the output pipes open does not hold Run past
// WaitDelay once the command itself has exited.
func TestRunDoesNotWaitForBackgroundJobs(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	r := Run(context.Background(), Cmd{Argv: bash(`setsid sleep 30 & echo $! > bg.pid; echo started`), Dir: dir, WaitDelay: 200 * time.Millisecond})
	if data, err := os.ReadFile(filepath.Join(dir, "bg.pid")); err == nil {
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
			defer syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if r.ExitCode != 0 || r.Stdout != "started\n" || r.Canceled {
		t.Errorf("got %+v", r)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Run waited %s for the background job", took)
	}
}

// BenchmarkRun is the cost of one short child: start, wait, collect.
func BenchmarkRun(b *testing.B) {
	for b.Loop() {
		if r := Run(context.Background(), Cmd{Argv: []string{"/bin/echo", "hi"}}); r.Stdout != "hi\n" {
			b.Fatalf("got %+v", r)
		}
	}
}

// A child run on a terminal sees one (a colour-aware ls colours), reads the
// person's keys until Ctrl+D (cat), and its output is shown as it comes and
// kept.
func TestRunTerminal(t *testing.T) {
	tests := []struct {
		name, script, keys, want string
	}{
		{"a terminal", "test -t 0 && test -t 1 && echo on-a-tty", "", "on-a-tty"},
		{"keys until Ctrl+D", "cat", "hello\r\x04", "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			defer inW.Close()
			go func() { _, _ = io.WriteString(inW, tt.keys) }()
			var shown strings.Builder
			res := RunTerminal(context.Background(), Cmd{Argv: []string{"/bin/bash", "-c", tt.script}}, Terminal{Cols: 80, Rows: 24, In: inR, Out: &shown})
			if res.StartErr != nil || res.ExitCode != 0 {
				t.Fatalf("%+v", res)
			}
			if !strings.Contains(res.Stdout, tt.want) || !strings.Contains(shown.String(), tt.want) {
				t.Fatalf("kept %q, shown %q, want %q in both", res.Stdout, shown.String(), tt.want)
			}
		})
	}
}
