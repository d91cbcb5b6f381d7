package app

import (
	"testing"

	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestProbeCacheSeed: sub-agents take the backend of a parent whose
// sandbox works (no probe each), but learn nothing from a parent whose
// sandbox is off: a read-only sub-agent's sandbox is always on, and must
// find out for itself whether the platform can run it.
func TestProbeCacheSeed(t *testing.T) {
	newManager := func(t *testing.T, enabled bool) *sandbox.Manager {
		m, err := sandbox.NewManager(sandbox.ManagerOptions{Config: sandbox.Config{Enabled: enabled}, Cwd: t.TempDir(), TempDir: t.TempDir(), Launcher: launcher()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Shutdown() })
		return m
	}
	t.Run("no parent", func(t *testing.T) {
		var p probeCache
		p.seed(nil)
		if probe, _ := p.cached(); probe != nil {
			t.Fatal("a cache seeded with nothing claims to know")
		}
	})
	t.Run("parent's sandbox off", func(t *testing.T) {
		var p probeCache
		p.seed(newManager(t, false))
		if probe, _ := p.cached(); probe != nil {
			t.Fatal("a parent with the sandbox off seeded the probe")
		}
	})
	t.Run("parent's sandbox working", func(t *testing.T) {
		testutil.RequireSandbox(t)
		m := newManager(t, true)
		var p probeCache
		p.seed(m)
		probe, backend := p.cached()
		if probe == nil || backend != m.Backend() || backend == "" {
			t.Fatalf("cached() = %v, %q; want the parent's backend %q", probe != nil, backend, m.Backend())
		}
		if err := probe(t.Context()); err != nil {
			t.Fatalf("the seeded probe fails: %v", err)
		}
	})
}
