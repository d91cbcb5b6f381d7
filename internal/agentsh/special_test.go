package agentsh

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// runOrHang runs one command and fails the test instead of hanging when the
// command never returns (an open of a FIFO blocks forever and ignores ctx).
func runOrHang(t *testing.T, sh *Shell, line string) command.Result {
	t.Helper()
	done := make(chan command.Result, 1)
	go func() { done <- sh.Run(context.Background(), line) }()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still blocked after 30s (it must refuse special files at once)", line)
		return command.Result{}
	}
}

// read and edit act only on regular files: a FIFO, a device or a socket would
// block the agent (a FIFO's open waits for a writer; /dev/stdin is the
// agent's own input) or stream without end.
func TestFileCommandsRefuseSpecialFiles(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	fifo := filepath.Join(ex.dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(ex.dir, "a.txt"), "a\n")
	if err := os.Symlink(fifo, filepath.Join(ex.dir, "to-fifo")); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, want string }{
		{"read fifo", "not a regular file"},
		{"read to-fifo", "not a regular file"},
		{"edit fifo a b", "not a regular file"},
		{"read /dev/zero", "not a regular file"},
		{"read /dev/null", "not a regular file"},
		{"read /dev/stdin", ""},
	}
	for _, tt := range tests {
		r := runOrHang(t, sh, tt.line)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.want) || r.Stdout != "" {
			t.Errorf("%s = %+v, want exit 1 with %q", tt.line, r, tt.want)
		}
	}
	// The FIFO is still a FIFO: edit did not replace it.
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("fifo changed: %v %v", fi, err)
	}
	// Regular files still work.
	if r := sh.Run(context.Background(), "read a.txt"); r.ExitCode != 0 || r.Stdout != "     1\ta\n" {
		t.Errorf("read a.txt = %+v", r)
	}
}

// read runs inside the agent process, so /proc/self is the agent: its
// environment holds the provider keys the sandbox hides from commands.
// read refuses /proc altogether and points at cat, which runs sandboxed.
func TestReadRefusesProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	sh, _ := newTestShell(t, nil)
	pid := strconv.Itoa(os.Getpid())
	for _, p := range []string{"/proc/self/environ", "/proc/self/status", "/proc/" + pid + "/environ", "/proc/thread-self/environ", "/proc/self/fd/0", "/proc/cpuinfo"} {
		r := runOrHang(t, sh, "read "+p)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "/proc") || !strings.Contains(r.Stderr, "cat ") || r.Stdout != "" {
			t.Errorf("read %s = %+v, want a refusal pointing at cat", p, r)
		}
	}
}
