package tool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/shell"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// TestRedTeamBlacklistedPathIsNeverGranted: the permission prompt for a
// blacklisted path says why it cannot be allowed and the answer is deny,
// whatever the user pressed; nothing reaches sandbox.json and the sandbox
// still starts (issue 11, item 10: "allow" on ~/.ssh/id_rsa broke every
// later command).
func TestRedTeamBlacklistedPathIsNeverGranted(t *testing.T) {
	testutil.RequireSandbox(t)
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	testutil.WriteFile(t, filepath.Join(home, ".ssh", "id_rsa"), "KEY\n")
	testutil.WriteFile(t, filepath.Join(ws, "keep"), "")
	cfg := filepath.Join(home, ".synapse", "sandbox.json")
	testutil.WriteFile(t, cfg, `{"enabled": true}`)
	launcher, err := os.Executable() // TestMain makes it the Landlock launcher
	if err != nil {
		t.Fatal(err)
	}
	m, err := sandbox.NewManager(sandbox.ManagerOptions{ConfigPath: cfg, Cwd: ws, Home: home, Launcher: launcher,
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")},
		StartSession: func(ctx context.Context, o sandbox.SessionOptions) (sandbox.Session, error) {
			return shell.Start(ctx, shell.Options{Argv: o.Argv, Dir: o.Dir, Env: o.Env, Timeout: o.Timeout})
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	var asked []tool.ApprovalRequest
	ap := approverFunc(func(_ context.Context, req tool.ApprovalRequest) tool.Decision {
		asked = append(asked, req)
		return tool.Permanent // the user pressed "allow permanently"
	})
	b := tool.New(tool.Options{Exec: m, Home: home, Approver: ap})
	out := b.Run(context.Background(), tool.Input{Command: "echo x >> ~/.ssh/id_rsa"})
	if len(asked) != 1 || !strings.Contains(asked[0].Refusal, "is on the sandbox blacklist (~/.ssh)") {
		t.Fatalf("the prompt was not told the path cannot be granted: %+v", asked)
	}
	if !strings.Contains(out.Output, "denied") {
		t.Errorf("the model should learn the access was denied: %s", out.Output)
	}
	if b, _ := os.ReadFile(cfg); string(b) != `{"enabled": true}` {
		t.Errorf("sandbox.json was changed: %s", b)
	}
	if out := b.Run(context.Background(), tool.Input{Command: "echo hi"}); out.IsError || !strings.Contains(out.Output, "hi") {
		t.Errorf("echo hi after the refused grant: %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "id_rsa")); string(b) != "KEY\n" {
		t.Errorf("id_rsa = %q", b)
	}
}

// approverFunc adapts a function to tool.Approver.
type approverFunc func(ctx context.Context, req tool.ApprovalRequest) tool.Decision

func (f approverFunc) Approve(ctx context.Context, req tool.ApprovalRequest) tool.Decision {
	return f(ctx, req)
}
