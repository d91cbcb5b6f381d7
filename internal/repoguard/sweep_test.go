//go:build linux

package repoguard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// makeRepo makes a minimal git repository at dir (no git needed), with a
// hook when armed.
func makeRepo(t testing.TB, dir string, armed bool) string {
	t.Helper()
	git := filepath.Join(dir, ".git")
	writeFile(t, filepath.Join(git, "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(git, "config"), "[core]\n\tbare = false\n")
	for _, d := range []string{"hooks", "objects/info", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(git, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if armed {
		writeFile(t, filepath.Join(git, "hooks", "pre-commit"), "#!/bin/sh\n")
	}
	return git
}

// waitClock waits until the file system's clock under root has moved past
// every change time in root: what the test made before the watch starts
// then counts as there before, as a user's tree does. It waits on that
// condition, not for a time.
func waitClock(t testing.TB, root string) {
	t.Helper()
	newest := int64(0)
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if st, serr := os.Lstat(p); serr == nil {
			newest = max(newest, ctimeOf(st))
		}
		return nil
	})
	for {
		fd, err := unix.Open(root, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
		if err != nil {
			t.Skipf("no O_TMPFILE here: %v", err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		if st.Ctim.Sec*1e9+st.Ctim.Nsec > newest {
			return
		}
	}
}

// startSwept starts a watch on root that, like the start-up scan past its
// bounds, watches only root itself and leaves the rest to the sweep.
func startSwept(t testing.TB, root string) *Watch {
	t.Helper()
	w := NewWatch()
	w.SetRoots([]string{root})
	w.Remember(root)
	w.MarkUnseen()
	w.Start()
	t.Cleanup(w.Close)
	return w
}

func TestSweepFindsWhatNoWatchSees(t *testing.T) {
	deep := filepath.Join("a", "b", "c", "d")
	tests := []struct {
		name    string
		before  func(t *testing.T, root string) // the user's tree
		command func(t *testing.T, root string) // what a command does
		want    string                          // the path reported disabled, relative; "" none
	}{
		{
			name:    "a new repository with a hook, deep",
			command: func(t *testing.T, root string) { makeRepo(t, filepath.Join(root, deep, "evil"), true) },
			want:    filepath.Join(deep, "evil", ".git"),
		},
		{
			name:   "an untouched repository with a hook, there before",
			before: func(t *testing.T, root string) { makeRepo(t, filepath.Join(root, deep, "husky"), true) },
		},
		{
			name:   "a hook planted in a repository there before",
			before: func(t *testing.T, root string) { makeRepo(t, filepath.Join(root, deep, "old"), false) },
			command: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, deep, "old", ".git", "hooks", "post-checkout"), "#!/bin/sh\n")
			},
			want: filepath.Join(deep, "old", ".git"),
		},
		{
			name:   "core.fsmonitor set in a repository there before",
			before: func(t *testing.T, root string) { makeRepo(t, filepath.Join(root, deep, "old"), false) },
			command: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, deep, "old", ".git", "config"), "[core]\n\tfsmonitor = touch /x\n")
			},
			want: filepath.Join(deep, "old", ".git"),
		},
		{
			name:   "a harmless change to a harmless repository there before",
			before: func(t *testing.T, root string) { makeRepo(t, filepath.Join(root, deep, "old"), false) },
			command: func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, deep, "old", ".git", "config"), "[core]\n\tbare = false\n[user]\n\tname = x\n")
			},
		},
		{
			name: "a bare repository made deep",
			command: func(t *testing.T, root string) {
				bare := filepath.Join(root, deep, "bare")
				writeFile(t, filepath.Join(bare, "HEAD"), "ref: refs/heads/main\n")
				writeFile(t, filepath.Join(bare, "config"), "[core]\n\tfsmonitor = touch /x\n")
				for _, d := range []string{"objects", "refs"} {
					if err := os.MkdirAll(filepath.Join(bare, d), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: filepath.Join(deep, "bare", "HEAD"),
		},
	}
	// Each case runs twice: found by the session's own check, and by the
	// background pass the session's end hands the sweep to (Finish).
	for _, tt := range tests {
		for _, handoff := range []bool{false, true} {
			name := tt.name
			if handoff {
				name += ", handed off"
			}
			t.Run(name, func(t *testing.T) {
				root := t.TempDir()
				if err := os.MkdirAll(filepath.Join(root, deep), 0o755); err != nil {
					t.Fatal(err)
				}
				if tt.before != nil {
					tt.before(t, root)
				}
				waitClock(t, root)
				w := startSwept(t, root)
				if lines := w.Check(); len(lines) > 0 {
					t.Fatalf("the check before any command reported %q", lines)
				}
				if tt.command != nil {
					tt.command(t, root)
				}
				var lines string
				if handoff {
					h, ok := w.Handoff()
					if !ok {
						t.Fatal("a watch with unwatched folders handed nothing off")
					}
					w.Close()
					lines = strings.Join(Finish(h), "\n")
				} else {
					lines = strings.Join(w.Check(), "\n")
				}
				if tt.want == "" {
					if lines != "" {
						t.Fatalf("reported %q, want nothing", lines)
					}
					return
				}
				want := filepath.Join(root, tt.want)
				if !strings.Contains(lines, want) {
					t.Fatalf("did not report %s: %q", want, lines)
				}
				if _, err := os.Lstat(want); err == nil {
					t.Fatalf("%s is still in place", want)
				}
			})
		}
	}
}

// TestHandoffKeepsKnownRepositories: a repository the start-up scan
// found (protected by the mount plan) is the person's, however busy the
// session was in it: the background pass must not take its hooks for
// planted ones; and a watch whose folders are all watched hands nothing off.
func TestHandoffKeepsKnownRepositories(t *testing.T) {
	root := t.TempDir()
	git := makeRepo(t, filepath.Join(root, "a", "b"), true)
	waitClock(t, root)
	w := NewWatch()
	w.SetRoots([]string{root})
	w.Remember(root)
	w.MarkKnown(git)
	if _, ok := w.Handoff(); ok {
		t.Fatal("a watch that sees every folder handed a pass off")
	}
	w.MarkUnseen()
	w.Start()
	defer w.Close()
	writeFile(t, filepath.Join(git, "index"), "a commit made in the sandbox\n")
	h, ok := w.Handoff()
	if !ok {
		t.Fatal("a watch with unwatched folders handed nothing off")
	}
	if lines := Finish(h); len(lines) > 0 {
		t.Fatalf("the background pass reported the person's repository: %q", lines)
	}
	if _, err := os.Lstat(filepath.Join(git, "hooks", "pre-commit")); err != nil {
		t.Fatalf("the person's repository lost its hook: %v", err)
	}
}

// TestSweepIsBounded: one check reads at most sweepStep folders, and the
// check at the end of a session (Exhaust) reads them all.
func TestSweepIsBounded(t *testing.T) {
	root := t.TempDir()
	n := 2 * sweepStep
	for i := range n {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := startSwept(t, root)
	last := filepath.Join(root, fmt.Sprintf("d%05d", n-1))
	makeRepo(t, last, true)
	if lines := w.Check(); len(lines) > 0 {
		t.Fatalf("one check read past its bound (the last folder of %d): %q", n, lines)
	}
	w.Exhaust()
	if lines := strings.Join(w.Check(), "\n"); !strings.Contains(lines, filepath.Join(last, ".git")) {
		t.Fatalf("the exhaustive check did not find the repository in the last folder: %q", lines)
	}
}

// TestDeferredSweepIsPaidLater: the checks after commands leave their
// sweep steps (DeferSweep) to a later check, which reads them with its
// own; past maxOwed the check after a command reads them itself, so
// commands back to back keep the pass going.
func TestDeferredSweepIsPaidLater(t *testing.T) {
	root := t.TempDir()
	n := (1+maxOwed)*sweepStep - 1 // the last is read last of 1+maxOwed steps (the root first)
	for i := range n {
		if err := os.Mkdir(filepath.Join(root, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w := startSwept(t, root)
	first, last := filepath.Join(root, "d00000"), filepath.Join(root, fmt.Sprintf("d%05d", n-1))
	makeRepo(t, first, true)
	makeRepo(t, last, true)
	for i := range maxOwed {
		w.DeferSweep()
		if lines := w.Check(); len(lines) > 0 {
			t.Fatalf("check %d after DeferSweep read the sweep's folders: %q", i+1, lines)
		}
	}
	w.DeferSweep() // one too many: this check pays
	lines := strings.Join(w.Check(), "\n")
	for _, repo := range []string{first, last} {
		if !strings.Contains(lines, filepath.Join(repo, ".git")) {
			t.Fatalf("the check past maxOwed steps owed did not read them (%s): %q", repo, lines)
		}
	}
}

// TestHeldSweepIsLeftToTheHandoff: the last check of a session that
// hands its pass off reads no folder of the sweep (HoldSweep); what that
// step would have found, the background pass finds; and when the handoff
// fails, the exhaustive check still reads everything.
func TestHeldSweepIsLeftToTheHandoff(t *testing.T) {
	root := t.TempDir()
	first := filepath.Join(root, "d0")
	if err := os.Mkdir(first, 0o755); err != nil {
		t.Fatal(err)
	}
	w := startSwept(t, root)
	makeRepo(t, first, true)
	w.HoldSweep()
	if lines := w.Check(); len(lines) > 0 {
		t.Fatalf("a check with the sweep held read its folders: %q", lines)
	}
	h, ok := w.Handoff()
	if !ok {
		t.Fatal("nothing handed off")
	}
	if lines := strings.Join(Finish(h), "\n"); !strings.Contains(lines, filepath.Join(first, ".git")) {
		t.Fatalf("the background pass did not find what the held step would have: %q", lines)
	}
	// The handoff failed: Exhaust after the hold reads the whole pass.
	second := filepath.Join(root, "d1")
	makeRepo(t, second, true)
	w.HoldSweep()
	w.Exhaust()
	if lines := strings.Join(w.Check(), "\n"); !strings.Contains(lines, filepath.Join(second, ".git")) {
		t.Fatalf("the exhaustive check after a hold did not run: %q", lines)
	}
}

// TestControlWatchesOutliveTheBound: when the scan's folders take every
// watch left, naming again a control folder Start already watches
// (ControlFiles, as the sandbox does) is no blind spot: a quiet check
// does not look at the control files, and a control file written there
// is still seen (an event).
func TestControlWatchesOutliveTheBound(t *testing.T) {
	root := t.TempDir()
	git := makeRepo(t, filepath.Join(root, "repo"), false)
	w := NewWatch()
	w.SetRoots([]string{root})
	w.MarkKnown(git)
	w.Baseline(git)
	for i := range MaxWatches + 10 {
		d := filepath.Join(root, fmt.Sprintf("d%05d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		w.Remember(d)
	}
	w.Start()
	defer w.Close()
	if w.WaitFD() < 0 {
		t.Skip("no inotify here")
	}
	w.ControlFiles([]string{filepath.Join(git, "commondir"), filepath.Join(git, "objects", "info", "alternates")})
	w.Check() // the first check looks at everything
	w.Check()
	if w.ControlChanged() {
		t.Fatal("a quiet check looked at the control files: a control folder named twice counted as unwatchable")
	}
	if n := watchCount(w); n > MaxWatches {
		t.Fatalf("%d watches, more than %d", n, MaxWatches)
	}
	writeFile(t, filepath.Join(git, "commondir"), "/elsewhere\n")
	w.Check()
	if !w.ControlChanged() {
		t.Fatal("a control file written in a watched control folder was not looked at")
	}
}

// TestWatchesAreBounded: however many folders the scan remembers (the
// shallowest first: it reads breadth-first), the watch holds at most
// MaxWatches, and what it leaves is the sweep's.
func TestWatchesAreBounded(t *testing.T) {
	root := t.TempDir()
	w := NewWatch()
	w.SetRoots([]string{root})
	for i := range MaxWatches + 100 {
		d := filepath.Join(root, fmt.Sprintf("d%05d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		w.Remember(d)
	}
	deepest := filepath.Join(root, "d00000", "x", "y")
	if err := os.MkdirAll(deepest, 0o755); err != nil {
		t.Fatal(err)
	}
	w.Remember(deepest)
	if n := len(w.scanned) + len(w.dirs); n > MaxWatches {
		t.Fatalf("the scan's table holds %d folders, more than %d", n, MaxWatches)
	}
	w.Start()
	defer w.Close()
	if got := watchCount(w); got > MaxWatches {
		t.Fatalf("%d watches, want at most %d", got, MaxWatches)
	}
	if !w.NeedsLook() {
		t.Fatal("folders left unwatched, and the idle watcher is not told to look")
	}
	for _, dir := range w.wds {
		if dir == deepest {
			t.Fatal("the deepest folder was watched before shallower ones")
		}
	}
}

// watchCount is the number of inotify watches w holds.
func watchCount(w *Watch) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.wds) + len(w.ctl)
}

// TestUnmountedIsBounded: past maxUnmounted, a repository the mount plan
// left writable is the sweep's, and the watch says the sweep must run.
func TestUnmountedIsBounded(t *testing.T) {
	w := NewWatch()
	for i := range maxUnmounted + 10 {
		w.Unmounted(fmt.Sprintf("/ws/r%03d/.git", i))
	}
	w.Unmounted("/ws/r000/.git") // once only
	if n := len(w.unmounted); n != maxUnmounted {
		t.Fatalf("%d repositories guarded, want %d", n, maxUnmounted)
	}
	if !w.sw.on {
		t.Fatal("repositories left to the sweep, and the sweep is off")
	}
}
