package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// Seed 000 "平台违规检测命中后应附带原因与资源": a command whose output carries
// the platform's refusal comes back from the sandboxed backend (built by the
// real local provider, as in production) marked blocked, with the reason and
// the resource; the same output from the unsandboxed backend is left alone.
func TestSeedPlatformViolationCarriesReasonAndResource(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	denials := map[string]command.Result{
		"touch /etc/x": {Stderr: "touch: cannot touch '/etc/x': Read-only file system\n", ExitCode: 1},
		// A script reads a hidden file: the text check cannot see the path,
		// the kernel's answer names it.
		"sh read.sh":    {Stderr: "read.sh: line 1: " + home + "/.aws/credentials: No such file or directory\n", ExitCode: 1},
		"mkdir /usr/yy": {Stderr: "mkdir: cannot create directory '/usr/yy': Read-only file system\n", ExitCode: 1},
	}
	want := map[string]struct{ resource, reason string }{
		"touch /etc/x":  {"/etc/x", "outside the sandbox write whitelist"},
		"sh read.sh":    {"~/.aws", ""},
		"mkdir /usr/yy": {"/usr/yy", "outside the sandbox write whitelist"},
	}
	for _, enabled := range []bool{true, false} {
		var sess *fakeSession
		m, err := NewManager(ManagerOptions{
			Config:   Config{Enabled: enabled, Provider: "local"},
			Cwd:      ws,
			Env:      []string{"HOME=" + home},
			TempDir:  t.TempDir(),
			Home:     home,
			GOOS:     "linux",
			LookPath: func(string) (string, error) { return "/usr/bin/bwrap", nil },
			StartSession: func(_ context.Context, o SessionOptions) (Session, error) {
				sess = &fakeSession{started: o, execFn: func(c string) (command.Result, error) {
					return denials[c], nil
				}}
				return sess, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"touch /etc/x", "mkdir /usr/yy", "sh read.sh"} {
			res, err := m.Execute(context.Background(), c, ws)
			if err != nil {
				t.Fatalf("enabled=%v %s: %v", enabled, c, err)
			}
			if !enabled {
				if res.Blocked || res.BlockedReason != "" || res.BlockedResource != "" {
					t.Errorf("unsandboxed %s marked blocked: %+v", c, res)
				}
				continue
			}
			if sess.started.Argv[0] != "/usr/bin/bwrap" {
				t.Fatalf("sandboxed shell not started under bwrap: %q", sess.started.Argv)
			}
			w := want[c]
			if !res.Blocked || res.BlockedResource != w.resource || res.BlockedReason == "" || !strings.Contains(res.BlockedReason, w.reason) {
				t.Errorf("%s = %+v, want blocked with resource %q and a reason containing %q", c, res, w.resource, w.reason)
			}
			if res.Stderr != denials[c].Stderr || res.ExitCode != 1 {
				t.Errorf("%s: the original output was not kept: %+v", c, res)
			}
		}
		_ = m.Shutdown()
	}
}
