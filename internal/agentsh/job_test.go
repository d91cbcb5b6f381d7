package agentsh

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/jobs"
)

func newJobShell(t *testing.T) (*Shell, string) {
	t.Helper()
	logs := t.TempDir()
	sh, ex := newTestShell(t, nil)
	tb := jobs.New(jobs.Options{Dir: logs, Exec: func(ctx context.Context, cmd string) (command.Result, error) {
		return ex.Execute(ctx, cmd, ex.Cwd())
	}})
	t.Cleanup(func() { _ = tb.Close() })
	sh.opts.Jobs = tb
	return sh, ex.dir
}

func TestJobCommands(t *testing.T) {
	sh, dir := newJobShell(t)
	ctx := context.Background()
	run := func(line string) (string, int) {
		r := sh.Run(ctx, line)
		return r.Stdout + r.Stderr, r.ExitCode
	}
	if err := os.WriteFile(dir+"/here.txt", []byte("in cwd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := run(`job:start cat here.txt; echo ready; until [ -e go ]; do sleep 0.01; done; echo done; exit 4`)
	if code != 0 || !strings.HasPrefix(out, "job 1 started: ") || !strings.Contains(out, "job:read 1") {
		t.Fatalf("job:start = %d %q", code, out)
	}
	out, code = run(`job:wait 1 --for '^ready$' --timeout 20s`)
	if code != 0 || !strings.Contains(out, "in cwd\nready\n") || !strings.Contains(out, "[job 1 running; pattern found]") {
		t.Fatalf("job:wait --for = %d %q", code, out)
	}
	out, code = run(`job:wait 1 --for nothing-like-this --timeout 0.05`)
	if code != 1 || !strings.Contains(out, "(no new output)") || !strings.Contains(out, "without seeing the pattern") {
		t.Fatalf("job:wait timeout = %d %q", code, out)
	}
	if out, _ = run("job:list"); !strings.Contains(out, "1  running") || !strings.Contains(out, "cat here.txt") {
		t.Fatalf("job:list = %q", out)
	}
	if err := os.WriteFile(dir+"/go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = run("job:wait 1")
	if code != 0 || out != "done\n[job 1 exited (status 4)]\n" {
		t.Fatalf("job:wait for the end = %d %q", code, out)
	}
	if out, _ = run("job:read 1"); out != "(no new output)\n[job 1 exited (status 4)]\n" {
		t.Fatalf("job:read after the end = %q", out)
	}
	if out, _ = run("job:stop 1"); !strings.Contains(out, "already ended") {
		t.Fatalf("job:stop of an ended job = %q", out)
	}
}

func TestJobStop(t *testing.T) {
	sh, _ := newJobShell(t)
	ctx := context.Background()
	sh.Run(ctx, "job:start echo up; exec sleep 300")
	if r := sh.Run(ctx, "job:wait 1 --for up"); r.ExitCode != 0 {
		t.Fatalf("job:wait = %+v", r)
	}
	r := sh.Run(ctx, "job:stop 1")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "[job 1 stopped; stopped with its process tree]") {
		t.Fatalf("job:stop = %+v", r)
	}
}

func TestJobUsageErrors(t *testing.T) {
	sh, _ := newJobShell(t)
	ctx := context.Background()
	for _, tt := range []struct{ line, want string }{
		{"job:start", "missing command"},
		{"job:read", "missing job id"},
		{"job:read x", `"x" is not a job id`},
		{"job:read 9", "no job 9"},
		{"job:wait 1 --for '('", "not a valid regular expression"},
		{"job:wait 1 --timeout soon", "not a duration"},
		{"job:list now", "takes no arguments"},
		{"job:frob", "not an Agent Shell command"},
	} {
		r := sh.Run(ctx, tt.line)
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("%s = %+v, want an error with %q", tt.line, r, tt.want)
		}
	}
}

// Sub-agents' shells have no table: the commands say so.
func TestJobCommandsWithoutTable(t *testing.T) {
	sh, _ := newTestShell(t, nil)
	r := sh.Run(context.Background(), "job:start sleep 1")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr, "not available here") {
		t.Fatalf("job:start without a table = %+v", r)
	}
	if r := sh.Run(context.Background(), "job:start --help"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "# job:start") {
		t.Fatalf("job:start --help = %+v", r)
	}
}

// A command quoted as a whole is the command, not a program of that name.
func TestJobStartQuotedWhole(t *testing.T) {
	sh, _ := newJobShell(t)
	ctx := context.Background()
	if r := sh.Run(ctx, `job:start 'echo a && echo "b c"'`); r.ExitCode != 0 {
		t.Fatalf("job:start = %+v", r)
	}
	if r := sh.Run(ctx, "job:wait 1"); !strings.HasPrefix(r.Stdout, "a\nb c\n[job 1 exited (status 0)") {
		t.Fatalf("job:wait = %+v", r)
	}
}
