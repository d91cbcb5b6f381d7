package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// TestApproverAllowsANewFile goes through the Bash tool's approver with real
// bubblewrap: a command writing a file that does not exist yet outside the
// writable roots is blocked, the user allows it, and the retry succeeds,
// for exactly that file (a sibling in the same directory stays blocked).
// An "allow once" grant is withdrawn after the retry.
func TestApproverAllowsANewFile(t *testing.T) {
	requireTool(t, "bwrap")
	tests := []struct {
		decision  tool.Decision
		keepsFile bool // a later write to the same file is allowed without asking
	}{
		{tool.Once, false},
		{tool.Session, true},
		{tool.Permanent, true},
	}
	for _, tt := range tests {
		t.Run(tt.decision.String(), func(t *testing.T) {
			home, ws, tmp := t.TempDir(), t.TempDir(), t.TempDir()
			outside := testutil.OutsideTmp(t) // not the workspace, not the sandbox's temp dir, visible to commands
			a := testApp(t, home)
			mgr, err := sandbox.NewManager(sandbox.ManagerOptions{
				ConfigPath:   a.Config.SandboxPath(),
				Config:       sandbox.Config{Enabled: true},
				Cwd:          ws,
				TempDir:      tmp,
				Env:          []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home},
				StartSession: startShell,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer mgr.Shutdown()
			var mu sync.Mutex
			var asked []string
			approver := approverFunc(func(_ context.Context, req tool.ApprovalRequest) tool.Decision {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, req.Resource)
				if filepath.Base(req.Resource) == "new.txt" {
					return tt.decision
				}
				return tool.Deny
			})
			bt, err := a.NewTool(context.Background(), ToolSetup{Cwd: ws, Exec: mgr, Approver: approver})
			if err != nil {
				t.Fatal(err)
			}
			newFile := filepath.Join(outside, "new.txt")
			ctx := context.Background()

			exit := func(r tool.Result) int {
				if c, ok := r.Facts.Exit(); ok {
					return c
				}
				return -1
			}
			r := bt.Run(ctx, tool.Input{Command: "echo created > " + newFile})
			if exit(r) != 0 || r.Facts.Type == "sandbox_blocked" {
				t.Fatalf("the allowed write failed: %+v", r)
			}
			if got, _ := os.ReadFile(newFile); string(got) != "created\n" {
				t.Errorf("new.txt = %q", got)
			}

			// Once: asked again (and allowed again); otherwise not asked.
			if r = bt.Run(ctx, tool.Input{Command: "echo again >> " + newFile}); exit(r) != 0 {
				t.Errorf("second write: %+v", r)
			}
			if got, _ := os.ReadFile(newFile); string(got) != "created\nagain\n" {
				t.Errorf("new.txt = %q", got)
			}

			sibling := filepath.Join(outside, "sibling.txt")
			r = bt.Run(ctx, tool.Input{Command: "echo x > " + sibling})
			if r.Facts.Type != "sandbox_blocked" || !strings.Contains(r.Output, "The user denied access to "+sibling) {
				t.Errorf("the sibling write: %+v", r)
			}
			if _, err := os.Stat(sibling); err == nil {
				t.Error("the grant widened to the directory: sibling.txt was written")
			}
			if tt.decision == tool.Permanent {
				cfg, _, err := sandbox.LoadConfig(a.Config.SandboxPath())
				if err != nil || len(cfg.Policy.Whitelist) != 1 || cfg.Policy.Whitelist[0] != newFile {
					t.Errorf("sandbox.json whitelist = %q (%v), want exactly [%s]", cfg.Policy.Whitelist, err, newFile)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := []string{newFile, sibling}
			if !tt.keepsFile {
				want = []string{newFile, newFile, sibling} // once: asked again
			}
			if strings.Join(asked, " ") != strings.Join(want, " ") {
				t.Errorf("asked about %q, want %q", asked, want)
			}
		})
	}
}

// approverFunc adapts a function to tool.Approver.
type approverFunc func(ctx context.Context, req tool.ApprovalRequest) tool.Decision

func (f approverFunc) Approve(ctx context.Context, req tool.ApprovalRequest) tool.Decision {
	return f(ctx, req)
}
