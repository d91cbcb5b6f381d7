package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-agent/synapse/internal/shell"
)

func realShell(ctx context.Context, o SessionOptions) (Session, error) {
	return shell.Start(ctx, shell.Options{Argv: o.Argv, Dir: o.Dir, Env: o.Env, Timeout: o.Timeout})
}

// benchManagerOn is a manager over a temp workspace with the given backend.
func benchManagerOn(b *testing.B, enabled bool, backend string) *Manager {
	b.Helper()
	if backend == BackendLandlock {
		if _, err := probeLandlock(context.Background(), testLauncher(b)); err != nil {
			b.Skipf("Landlock cannot sandbox here: %v", err)
		}
	} else {
		requireBwrap(b)
	}
	m, err := NewManager(ManagerOptions{
		Config:       Config{Enabled: enabled, Provider: backend},
		Launcher:     testLauncher(b),
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

func benchRoundTrip(b *testing.B, enabled bool) { benchRoundTripOn(b, enabled, BackendBwrap) }

func benchRoundTripOn(b *testing.B, enabled bool, backend string) {
	m := benchManagerOn(b, enabled, backend)
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

// BenchmarkRoundTripLandlock: one `echo hi` in the persistent shell under
// the Landlock backend (the after-command repository guard included).
func BenchmarkRoundTripLandlock(b *testing.B) { benchRoundTripOn(b, true, BackendLandlock) }

// BenchmarkCreateSandbox: mount plan + bwrap + a ready bash, then teardown.
func BenchmarkCreateSandbox(b *testing.B) { benchCreate(b, BackendBwrap) }

// BenchmarkCreateSandboxLandlock: plan + rules + the launcher (Landlock,
// seccomp, exec) + a ready bash, then teardown.
func BenchmarkCreateSandboxLandlock(b *testing.B) { benchCreate(b, BackendLandlock) }

func benchCreate(b *testing.B, backend string) {
	m := benchManagerOn(b, true, backend)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.GetSandbox(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.Shutdown(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchCreateWithTemp measures sandbox creation (mount plan, bwrap, a
// ready bash, teardown) with a host temp directory holding n entries in
// small nested folders, as a busy /tmp does. The private temp directory
// means the host one is neither mounted nor scanned, so n should not show.
func benchCreateWithTemp(b *testing.B, n int) {
	requireBwrap(b)
	tmp := b.TempDir()
	for i := 0; i < n; i++ {
		dir := filepath.Join(tmp, fmt.Sprintf("d%03d", i/100), fmt.Sprintf("e%02d", i%100/10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	m, err := NewManager(ManagerOptions{Config: Config{Enabled: true, Provider: "local"}, Cwd: b.TempDir(),
		Env: os.Environ(), TempDir: tmp, StartSession: realShell})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Shutdown() })
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.GetSandbox(ctx); err != nil {
			b.Fatal(err)
		}
		if err := m.Shutdown(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateSandboxEmptyTemp: sandbox creation with an empty host temp dir.
func BenchmarkCreateSandboxEmptyTemp(b *testing.B) { benchCreateWithTemp(b, 0) }

// BenchmarkCreateSandboxBusyTemp: the same with 20 000 files in the host temp dir.
func BenchmarkCreateSandboxBusyTemp(b *testing.B) { benchCreateWithTemp(b, 20000) }

// BenchmarkGitWatchCheck: the after-command look for new repositories in
// a workspace of 2 000 directories (20 000 files) that did not change.
func BenchmarkGitWatchCheck(b *testing.B) {
	ws := b.TempDir()
	for i := 0; i < 2000; i++ {
		dir := filepath.Join(ws, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("e%02d", i%100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 10; j++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", j)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
	mp.watch.Start() // as the sandbox's shell does
	b.Cleanup(mp.watch.Close)
	b.ResetTimer()
	for b.Loop() {
		if found := mp.watch.Check(); len(found) != 0 {
			b.Fatal(found)
		}
	}
}

// BenchmarkGitWatchCheckRepo: the same look (with the rebase-state check
// of an existing git directory and its control watches) in a project that
// is a git repository with 200 directories, nothing changed.
func BenchmarkGitWatchCheckRepo(b *testing.B) {
	ws := b.TempDir()
	for i := 0; i < 200; i++ {
		if err := os.MkdirAll(filepath.Join(ws, fmt.Sprintf("d%03d", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range []string{"hooks", "objects/info", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(ws, ".git", d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\tbare = false\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
	mp.watch.Start() // as the sandbox's shell does (platform.wrap)
	mp.watch.ControlFiles(mp.gitWatch)
	b.Cleanup(mp.watch.Close)
	b.ResetTimer()
	for b.Loop() {
		if found := mp.watch.Check(); len(found) != 0 {
			b.Fatal(found)
		}
		if mp.watch.ControlChanged() {
			if removed := mp.revertGit(); len(removed) != 0 {
				b.Fatal(removed)
			}
		}
	}
}

// BenchmarkCheckPath is the policy check of one in-process file access
// (read/write/edit) of a file in the project, under a live sandbox.
func BenchmarkCheckPath(b *testing.B) {
	f := newFixture(b, nil)
	f.run(b, "echo x > a.txt")
	p := filepath.Join(f.ws, "a.txt")
	for b.Loop() {
		if blocked, reason, _ := f.m.CheckPath(p, true); blocked {
			b.Fatal(reason)
		}
	}
}
