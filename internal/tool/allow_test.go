package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/testutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Seed 003 "allow_permanent 同步写入持久白名单并生效", against the real
// sandbox manager: sandbox.json gains the path and so does the session's policy.
func TestAllowPermanentWritesSandboxJSON(t *testing.T) {
	home := t.TempDir()
	cfg, err := config.Load(testutil.MapEnv(map[string]string{"HOME": t.TempDir(), "SYNAPSE_HOME": home}))
	if err != nil {
		t.Fatal(err)
	}
	workspace, extra := t.TempDir(), t.TempDir()
	m, err := sandbox.NewManager(sandbox.ManagerOptions{
		ConfigPath: cfg.SandboxPath(),
		Cwd:        workspace,
		Home:       cfg.UserHome,
		// Only the whitelist bookkeeping is under test: no OS sandbox needed.
		Probe: func(context.Context) error { return errors.New("not needed for this test") },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Shutdown()
	b := tool.New(tool.Options{Exec: m, Home: cfg.UserHome})
	if err := b.AllowPermanent(extra, workspace); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cfg.SandboxPath())
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Policy struct {
			Filesystem struct {
				Whitelist []string `json:"whitelist"`
			} `json:"filesystem"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(file.Policy.Filesystem.Whitelist, extra) {
		t.Errorf("sandbox.json whitelist = %q, want %s in it", file.Policy.Filesystem.Whitelist, extra)
	}
	if wl := m.BuildPolicy().Whitelist; !slices.Contains(wl, extra) {
		t.Errorf("session whitelist = %q, want %s in it", wl, extra)
	}
}
