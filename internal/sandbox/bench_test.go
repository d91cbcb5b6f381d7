package sandbox

import (
	"context"
	"os"
	"testing"

	"github.com/synapse-agent/synapse/internal/shell"
)

func realShell(ctx context.Context, o SessionOptions) (Session, error) {
	return shell.Start(ctx, shell.Options{Argv: o.Argv, Dir: o.Dir, Env: o.Env, Timeout: o.Timeout})
}

func benchManager(b *testing.B, enabled bool) *Manager {
	b.Helper()
	requireBwrap(b)
	m, err := NewManager(ManagerOptions{
		Config:       Config{Enabled: enabled, Provider: "local"},
		Cwd:          b.TempDir(),
		Env:          os.Environ(),
		TempDir:      b.TempDir(),
		StartSession: realShell,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown() })
	return m
}

func benchRoundTrip(b *testing.B, enabled bool) {
	m := benchManager(b, enabled)
	ctx := context.Background()
	if _, err := m.Execute(ctx, "true", ""); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := m.Execute(ctx, "echo hi", "")
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("res=%+v err=%v", res, err)
		}
	}
}

// BenchmarkRoundTripSandboxed: one `echo hi` in the persistent bwrap shell.
func BenchmarkRoundTripSandboxed(b *testing.B) { benchRoundTrip(b, true) }

// BenchmarkRoundTripUnsandboxed: the same with the sandbox off.
func BenchmarkRoundTripUnsandboxed(b *testing.B) { benchRoundTrip(b, false) }

// BenchmarkCreateSandbox: mount plan + bwrap + a ready bash, then teardown.
func BenchmarkCreateSandbox(b *testing.B) {
	m := benchManager(b, true)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.GetSandbox(ctx, ""); err != nil {
			b.Fatal(err)
		}
		if err := m.Shutdown(); err != nil {
			b.Fatal(err)
		}
	}
}
