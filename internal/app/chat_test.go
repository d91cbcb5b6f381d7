package app

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestUserShell(t *testing.T) {
	dir := t.TempDir()
	run := UserShell(func() string { return dir }, nil)
	tests := []struct {
		name string
		cmd  string
		code int
		out  string // a regexp the whole combined output must match
	}{
		{"output and status", "echo out; echo err >&2; exit 3", 3, `^out\nerr\n$`},
		// Both streams share one pipe: an error shows where it happened,
		// not after all of stdout.
		{"streams keep the order they were written in", "echo a; ls /nonexistent-xyz; echo hi", 0, `^a\nls: .*nonexistent-xyz.*\nhi\n$`},
		{"runs in the agent's directory", "pwd", 0, "^" + regexp.QuoteMeta(dir) + `\n$`},
		{"stdin is empty, never the terminal", "cat; echo after", 0, `^after\n$`},
		{"unknown command", "no-such-command-xyz", 127, `no-such-command-xyz: command not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code || !regexp.MustCompile(tt.out).MatchString(res.Stdout) || res.Stderr != "" {
				t.Errorf("got %+v, want code %d and output matching %q (stderr folded in)", res, tt.code, tt.out)
			}
		})
	}
}

func TestUserShellCapsOutput(t *testing.T) {
	run := UserShell(func() string { return t.TempDir() }, nil)
	res, err := run(context.Background(), "head -c 3000000 /dev/zero | tr '\\0' a")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) > userShellOutputCap+100 || !strings.Contains(res.Stdout, "bytes of output not shown") {
		t.Errorf("stdout is %d bytes, tail %q", len(res.Stdout), res.Stdout[max(0, len(res.Stdout)-60):])
	}
}

func TestUserShellCancelKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	run := UserShell(func() string { return dir }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	pidFile := filepath.Join(dir, "bg.pid")
	done := make(chan command.Result, 1)
	go func() {
		res, _ := run(ctx, "sleep 30 & echo $! > bg.pid; wait")
		done <- res
	}()
	var pid int
	testutil.WaitFor(t, "the background command to start", func() bool {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		return pid != 0
	})
	cancel()
	select {
	case res := <-done:
		if res.ExitCode != command.Interrupted {
			t.Errorf("exit code %d, want %d", res.ExitCode, command.Interrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not stop the command")
	}
	testutil.WaitFor(t, "the background sleep to die with the cancel", func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		return err != nil || strings.Contains(string(stat), ") Z ") // gone, or dead and waiting to be reaped
	})
}

// `!cmd &` leaves a background job holding the output pipes; the command is
// done when bash exits, not when the job does. A job that left the process
// group (setsid) is out of Ctrl+C's reach too, so without a bound the REPL
// would hang until the job ended.
func TestUserShellDoesNotWaitForBackgroundJobs(t *testing.T) {
	for _, tc := range []struct{ name, cmd string }{
		{"background job", "sleep 30 & echo $! > bg.pid; echo started"},
		{"detached job", "setsid sleep 30 & echo $! > bg.pid; echo started"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.cmd, "setsid") {
				testutil.RequireTool(t, "setsid")
			}
			dir := t.TempDir()
			run := UserShell(func() string { return dir }, nil)
			done := make(chan command.Result, 1)
			go func() {
				res, _ := run(context.Background(), tc.cmd)
				done <- res
			}()
			var res command.Result
			select {
			case res = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the command did not return while its background job ran")
			}
			data, err := os.ReadFile(filepath.Join(dir, "bg.pid"))
			if err != nil {
				t.Fatal(err)
			}
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			alive := false
			if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(stat), ") Z ") {
				alive = true
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			if !alive {
				t.Errorf("the command returned only after its background job ended")
			}
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "started") {
				t.Errorf("res = %+v", res)
			}
		})
	}
}

// TestUserShellSettlesFirst: a `!` line runs on the host, often git in the
// project, so the sandbox's checks run before it (a repository a
// background job planted is disabled first) and what they did is shown,
// cleaned of terminal escapes (the paths are a command's choice).
func TestUserShellSettlesFirst(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "evil", ".git", "config"), "[core]\n\tfsmonitor = x\n")
	settled := 0
	settle := func() []string {
		settled++
		if err := os.Rename(filepath.Join(dir, "evil", ".git"), filepath.Join(dir, "evil", ".git.synapse-disabled-0")); err != nil {
			t.Error(err)
		}
		return []string{"disabled a new git repository at evil/.git\x1b]52;c;cHduZWQ=\x07"}
	}
	run := UserShell(func() string { return dir }, settle)
	res, err := run(context.Background(), "ls -A evil")
	if err != nil {
		t.Fatal(err)
	}
	if settled != 1 || res.Stdout != "sandbox: disabled a new git repository at evil/.git\n.git.synapse-disabled-0\n" {
		t.Errorf("settled %d times; output %q", settled, res.Stdout)
	}
}
