//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/synapse-agent/synapse/internal/repoguard"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamPlantPastTheSweepIsDisabledAfterExit: in a tree larger than
// the watches cover, a repository planted in an old, unwatched folder that
// the session's checks did not reach before it ended is found by the
// background pass the end hands the sweep to: disabled, and recorded for
// the next session, which shows it and clears it.
func TestRedTeamPlantPastTheSweepIsDisabledAfterExit(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.MkdirAll(filepath.Dir(f.cfgPath), 0o700); err != nil { // the agent home, where the notices go
		t.Fatal(err)
	}
	old := plantPastTheSweep(t, f)
	repo := filepath.Join(old, ".git")
	if err := f.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	notices := filepath.Join(filepath.Dir(f.cfgPath), noticesName)
	testutil.WaitFor(t, "the background pass to disable "+repo, func() bool {
		_, err := os.Lstat(repo)
		b, _ := os.ReadFile(notices)
		return os.IsNotExist(err) && strings.Contains(string(b), repo)
	})
	if aside, _ := filepath.Glob(filepath.Join(old, ".git"+repoguard.DisabledMark+"*")); len(aside) != 1 {
		t.Fatalf("the planted repository was not renamed aside: %v", aside)
	}
	sub := newFixture(t, func(o *ManagerOptions) { o.ConfigPath, o.SubAgent = f.cfgPath, true })
	if w := strings.Join(sub.m.Warnings(), "\n"); strings.Contains(w, repo) {
		t.Fatalf("a sub-agent's manager took the notices, which nobody would show: %q", w)
	}
	g := newFixture(t, func(o *ManagerOptions) { o.ConfigPath = f.cfgPath })
	if w := strings.Join(g.m.Warnings(), "\n"); !strings.Contains(w, "after a session that ended at ") || !strings.Contains(w, repo) {
		t.Fatalf("the next session did not show what the background pass did: %q", w)
	}
	if _, err := os.Lstat(notices); !os.IsNotExist(err) {
		t.Fatalf("the notices were not cleared once shown: %v", err)
	}
}

// TestPlantPastTheSweepWithoutBackgroundPass: where the background
// pass cannot start (no launcher binary), the end of the session runs the
// whole pass itself before it returns, as it did before the handoff.
func TestPlantPastTheSweepWithoutBackgroundPass(t *testing.T) {
	if testutil.UnderLandlock() {
		t.Skip("the Landlock backend needs the launcher; this test takes it away (bwrap only)")
	}
	f := newFixture(t, func(o *ManagerOptions) { o.Launcher = filepath.Join(t.TempDir(), "missing") })
	old := plantPastTheSweep(t, f)
	if err := f.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(old, ".git")); !os.IsNotExist(err) {
		t.Fatalf("the planted repository is still armed when the session's end returned: %v", err)
	}
}

// plantPastTheSweep makes the workspace larger than the watches cover and
// has a command plant an armed repository in an old folder that is last
// in the sweep's order and past the watched (shallowest) ones, so that
// the session's own checks do not reach it; it returns that folder.
func plantPastTheSweep(t *testing.T, f *fixture) string {
	t.Helper()
	for i := range repoguard.MaxWatches + 50 {
		if err := os.Mkdir(filepath.Join(f.ws, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := filepath.Join(f.ws, "zzz", "a", "b", "c")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	res := f.run(t, gitEnv+"git init -q zzz/a/b/c && printf '#!/bin/sh\\ntouch pwned\\n' > zzz/a/b/c/.git/hooks/pre-commit && chmod +x zzz/a/b/c/.git/hooks/pre-commit && echo planted")
	if res.Stdout != "planted" {
		t.Fatalf("plant: %+v", res)
	}
	if repo := filepath.Join(old, ".git"); strings.Contains(res.Stderr, repo) {
		t.Fatalf("the check after the command reached the planted folder already; the test needs it unreached: %q", res.Stderr)
	}
	return old
}

// TestHandOffRunsIdle: the background pass runs only when nothing else
// wants the CPU (SCHED_IDLE), from its start: its runtime's start-up
// would otherwise take a core from the session ending.
func TestHandOffRunsIdle(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "policy")
	// A launcher that records its scheduling policy (field 41 of its
	// stat; 5 is SCHED_IDLE) once the parent has had time to set it.
	launcher := filepath.Join(dir, "launcher")
	script := "#!/bin/sh\ncat > /dev/null\nsleep 0.2\ncut -d' ' -f41 /proc/$$/stat > " + out + ".tmp && mv " + out + ".tmp " + out + "\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := handOff(launcher, "", repoguard.Handoff{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := waitRecord(t, out); got != "5" {
		t.Fatalf("the background pass runs under policy %s, not SCHED_IDLE (5)", got)
	}
}

// TestHandOffHoldsTheWatches: the background pass holds the session's
// inotify descriptor, its watches still set after the session closed
// its own, so that their teardown is the pass's (at its exit).
func TestHandOffHoldsTheWatches(t *testing.T) {
	dir := t.TempDir()
	w := repoguard.NewWatch()
	w.SetRoots([]string{dir})
	w.Remember(dir)
	w.Start()
	out := filepath.Join(dir, "watches")
	launcher := filepath.Join(dir, "launcher")
	script := "#!/bin/sh\ncat > /dev/null\nsleep 0.2\nn=$(grep -c 'inotify wd:' /proc/$$/fdinfo/3)\necho \"$(readlink /proc/$$/fd/3) $n\" > " + out + ".tmp && mv " + out + ".tmp " + out + "\n"
	if err := os.WriteFile(launcher, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := handOff(launcher, "", repoguard.Handoff{}, w.DupDescriptor()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := waitRecord(t, out); got != "anon_inode:inotify 1" {
		t.Fatalf("the background pass holds %q at descriptor 3, not the session's inotify descriptor with its one watch", got)
	}
}

// TestCloseIfInotify: the background pass lets go of the inherited inotify
// descriptor, and of nothing else.
func TestCloseIfInotify(t *testing.T) {
	in, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	open := func(fd int) bool {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		return err == nil
	}
	closeIfInotify(int(r.Fd()))
	if !open(int(r.Fd())) {
		t.Fatal("a pipe was closed")
	}
	closeIfInotify(in)
	if open(in) {
		_ = syscall.Close(in)
		t.Fatal("the inotify descriptor is still open")
	}
}

// waitRecord waits for a launcher script to write its record to out.
func waitRecord(t *testing.T, out string) string {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(out); err == nil {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the launcher never wrote its record")
	return ""
}

// A machine that only runs `synapse exec` may have no agent home yet: the
// scan cache, the backend memo and the background pass's notices make it
// (private) rather than be lost.
func TestCachesAndNoticesMakeTheAgentHome(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(path string) error
		file  string
	}{
		{"scan cache", func(p string) error { return writeCache(p, []byte("data")) }, filepath.Join("cache", "scan-x")},
		{"notices", func(p string) error { return appendNotices(p, []string{"disabled x"}) }, noticesName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home", ".synapse")
			path := filepath.Join(home, tc.file)
			if err := tc.write(path); err != nil {
				t.Fatalf("write with no agent home: %v", err)
			}
			if b, err := os.ReadFile(path); err != nil || len(b) == 0 {
				t.Fatalf("nothing written: %q %v", b, err)
			}
			if st, err := os.Stat(home); err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("agent home %v, %v: want a private folder", st, err)
			}
		})
	}
}
