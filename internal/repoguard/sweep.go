//go:build linux

package repoguard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds of what a Watch costs, whatever the size of the tree (a monorepo
// of 100 000 folders costs what one of a few thousand does).
const (
	// MaxWatches bounds the inotify watches one Watch holds: the scan's
	// shallowest folders, then new folders and control folders while
	// watches are left. Kernel memory and the user's max_user_watches
	// are shared with their editor and build tools.
	MaxWatches = 2048
	// sweepStep bounds the folders one check (after a command, or one
	// look of the idle watcher) reads of the sweep; Exhaust lifts it.
	sweepStep = 256
	// maxOwed bounds the steps checks after commands leave to a later
	// look (DeferSweep): past it the check after a command takes its
	// steps itself, so the pass keeps a step a command when commands
	// come back to back, with no idle look between them.
	maxOwed = 4
)

// sweep is the walk, resumed at each check, that covers the folders no
// watch covers: the tree past the start scan's bounds, folders past
// MaxWatches, the inside of node_modules and the like. A pass reads each
// folder of the writable roots once (never the inside of a .git); a new
// pass begins where the last one ended.
type sweep struct {
	on    bool     // some folder is not watched: the sweep runs
	stack []string // folders of this pass still to read
	fresh bool     // the next step begins a pass
	full  bool     // Exhaust: the next check runs a whole pass
	hold  bool     // HoldSweep: the next check reads no folder of the sweep
	owed  int      // steps DeferSweep left to the next check that reads
	// t0 is the file systems' clock when the Watch started (ns): what has
	// a change time before it existed before any command ran.
	t0 int64
	// late: the repositories a sweep found that existed before any
	// command ran (their control files untouched since): what would run
	// in them then, to compare with what would run now.
	late map[string]lateRepo
}

type lateRepo struct {
	ctime int64  // the newest change time of its control paths
	print string // fingerprint of what in it would run (dangerPrint)
}

// startClock records t0 from the change time of an unnamed file made in
// the first writable root (O_TMPFILE: no folder changes), so that it comes
// from the very clock, and at the granularity, that stamps what commands
// write there. Without O_TMPFILE it is the time now less a margin: a
// change just before the start then counts as one made since (judged, at
// worst reported), never the other way round.
func (w *Watch) startClock() {
	w.sw.t0 = time.Now().Add(-2 * time.Second).UnixNano()
	if len(w.roots) == 0 {
		return
	}
	fd, err := unix.Open(w.roots[0], unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		w.sw.t0 = st.Ctim.Sec*1e9 + st.Ctim.Nsec
	}
}

// Exhaust makes the next check sweep the whole tree in one go when some
// folders are not watched: the session ends, and what a command planted
// where no watch looks must not outlive it armed. (Where every folder is
// watched the events have shown everything already.)
func (w *Watch) Exhaust() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sw.full = w.sw.on
}

// HoldSweep makes the next check leave the sweep where it is (its other
// looks run): the session ends and hands the pass off (Handoff) to a
// background process that reads every folder from the roots, those of
// this step included, with the state this check leaves. Exhaust, called
// after it when the handoff fails, wins.
func (w *Watch) HoldSweep() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sw.hold = true
}

// DeferSweep makes the next check (the one after a command) leave its
// sweep step to the next look of the idle watcher (woken by the command's
// events, or at its pace), which reads the steps owed with its own: a
// command's result need not wait for a few milliseconds of reads that
// find only what host git would run, and the sweep keeps its pace. Past
// maxOwed the check reads them itself.
func (w *Watch) DeferSweep() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sw.on && w.sw.owed < maxOwed {
		w.sw.owed++
		w.sw.hold = true
	}
}

// sweepStep reads up to sweepStep folders of the current pass (all of a
// fresh pass after Exhaust or an overflow), noting (note) the repositories
// that are new or that existed before the first command and changed since.
func (w *Watch) sweepStep(note func(string)) {
	hold := w.sw.hold
	w.sw.hold = false
	if hold && !w.sw.full {
		return
	}
	owed := w.sw.owed
	w.sw.owed = 0
	if !w.sw.on && !w.sw.full {
		return
	}
	budget := sweepStep * (1 + owed)
	if w.sw.full {
		w.sw.full, w.sw.fresh, w.sw.stack = false, true, nil
		budget = -1
	}
	w.openRoots()
	defer w.closeRoots()
	if w.sw.fresh || len(w.sw.stack) == 0 {
		w.sw.fresh = false
		w.sw.stack = append(w.sw.stack[:0], w.roots...)
		slices.Reverse(w.sw.stack) // the first root first
	}
	for len(w.sw.stack) > 0 && budget != 0 {
		budget--
		dir := w.sw.stack[len(w.sw.stack)-1]
		w.sw.stack = w.sw.stack[:len(w.sw.stack)-1]
		ents, err := w.readDir(dir)
		if err != nil {
			continue
		}
		for i := len(ents) - 1; i >= 0; i-- {
			e := ents[i]
			p := filepath.Join(dir, e.Name())
			// A folder git would take for a bare repository, as in Check
			// (one the check renamed aside stays aside).
			if e.Name() == "HEAD" && !strings.HasPrefix(filepath.Base(dir), ".git"+DisabledMark) && bareRepoShaped(dir) {
				w.sweptRepo(p, note)
			}
			if isRepoEntry(e.Name()) {
				w.sweptRepo(p, note)
			}
			if e.IsDir() && e.Name() != ".git" {
				w.sw.stack = append(w.sw.stack, p)
			}
		}
	}
	if len(w.sw.stack) == 0 {
		w.sw.fresh = true // the pass is over: the next step begins another
	}
}

// sweptRepo handles a .git or .hg entry (or a bare repository's HEAD) the
// sweep found. One the start
// scan found is protected by the mount plan; one a check found is
// followed already. Any other either existed before the first command and
// is untouched since (its fingerprint is recorded), or is new or changed:
// judged as a new one is. One recorded before is judged again when a
// change time of its control paths moved and what would run in it is not
// what would have run at the start.
func (w *Watch) sweptRepo(p string, note func(string)) {
	if w.known[p] || slices.Contains(w.fresh, p) {
		return
	}
	ct := w.controlCtime(p)
	if was, ok := w.sw.late[p]; ok {
		if ct == was.ctime {
			return
		}
		if now := dangerPrint(p); now == was.print {
			w.sw.late[p] = lateRepo{ctime: ct, print: now}
			return
		}
		delete(w.sw.late, p)
		note(p)
		return
	}
	if ct < w.sw.t0 {
		if w.sw.late == nil {
			w.sw.late = map[string]lateRepo{}
		}
		w.sw.late[p] = lateRepo{ctime: ct, print: dangerPrint(p)}
		return
	}
	note(p)
}

// gitDirsOf are the git directory of the .git entry (or bare HEAD) p and
// the common one it names.
func gitDirsOf(p string) []string {
	d := gitDirOf(p)
	if filepath.Base(p) == "HEAD" {
		d = filepath.Dir(p)
	}
	if d == "" {
		return nil
	}
	if c, odd := CommonDirOf(d); odd == "" && c != "" && c != d {
		return []string{d, c}
	}
	return []string{d}
}

// controlPaths are the paths, relative to a git directory, whose change
// times move when anything git would run there changes.
var controlPaths = append([]string{".", "hooks", "config", "commondir", "config.worktree", "objects", filepath.Join("objects", "info"),
	filepath.Join("objects", "info", "alternates")}, seqStates...)

// controlCtime is the newest change time of the .git or .hg entry p, of
// the git directories it names, of their control paths and hooks.
func (w *Watch) controlCtime(p string) int64 {
	newest := int64(0)
	stamp := func(q string) {
		if st, err := os.Lstat(q); err == nil {
			newest = max(newest, ctimeOf(st))
		}
	}
	stamp(p)
	if filepath.Base(p) == ".hg" {
		for _, name := range append([]string{"."}, HgControlFiles...) {
			stamp(filepath.Join(p, name))
		}
		return newest
	}
	for _, d := range gitDirsOf(p) {
		for _, name := range controlPaths {
			stamp(filepath.Join(d, name))
		}
		if ents, err := ReadDirNoBlock(filepath.Join(d, "hooks")); err == nil {
			for _, e := range ents {
				stamp(filepath.Join(d, "hooks", e.Name()))
			}
		}
	}
	return newest
}

// dangerPrint fingerprints what in the repository at p would run on the
// host: "" when nothing would (GitDanger, or hgDanger for a .hg), else a
// digest of its hooks and control files, so that a change to any of them
// in an armed repository counts while a harmless one (git config
// user.name in a repository without hooks) does not.
func dangerPrint(p string) string {
	why := ""
	if filepath.Base(p) == ".hg" {
		why = hgDanger(p)
	} else {
		why = GitDanger(p)
	}
	if why == "" {
		return ""
	}
	h := sha256.New()
	add := func(q string) {
		h.Write([]byte(q + "\x00"))
		if b, err := ReadControlFile(q); err == nil {
			h.Write(b)
		} else {
			h.Write([]byte("\x00" + err.Error()))
		}
		h.Write([]byte{0})
	}
	h.Write([]byte(why + "\x00"))
	if filepath.Base(p) == ".hg" {
		for _, name := range HgControlFiles {
			add(filepath.Join(p, name))
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	if st, err := os.Lstat(p); err == nil && !st.IsDir() {
		add(p)
	}
	for _, d := range gitDirsOf(p) {
		for _, name := range []string{"config", "commondir", "config.worktree", filepath.Join("objects", "info", "alternates")} {
			add(filepath.Join(d, name))
		}
		if ents, err := ReadDirNoBlock(filepath.Join(d, "hooks")); err == nil {
			for _, e := range ents {
				if !strings.HasSuffix(e.Name(), ".sample") && e.Type()&fs.ModeType == 0 {
					add(filepath.Join(d, "hooks", e.Name()))
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// maxIndex bounds what is read of a git index for its gitlinks (a larger
// one is left to the sweep).
const maxIndex = 64 << 20

// checkGitlinks looks at the gitlinks of the index of each git directory
// that existed at start (a .git folder; the control watches tell when its
// index changed): host git status runs git in every gitlink that holds a
// .git, wherever it lies, so one the sweep has not reached yet is judged
// now.
func (w *Watch) checkGitlinks(note func(string)) {
	for dir := range w.seq {
		if filepath.Base(dir) != ".git" || !w.reachable(dir) {
			continue
		}
		fd, err := w.OpenBeneath(filepath.Join(dir, "index"), unix.O_RDONLY|unix.O_NONBLOCK)
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), "index")
		b, err := io.ReadAll(io.LimitReader(f, maxIndex+1))
		f.Close()
		if err != nil || len(b) > maxIndex {
			continue
		}
		hashLen := 20
		if cfg, err := ReadControlFile(filepath.Join(dir, "config")); err == nil && bytes.Contains(bytes.ToLower(cfg), []byte("sha256")) {
			hashLen = 32
		}
		links, err := indexGitlinks(b, hashLen)
		if err != nil {
			continue
		}
		top := filepath.Dir(dir)
		for _, l := range links {
			p := filepath.Join(top, filepath.FromSlash(l), ".git")
			if !within(p, top) || !w.reachable(p) {
				continue
			}
			if _, err := os.Lstat(p); err == nil {
				w.sweptRepo(p, note)
			}
		}
	}
}

// openRoots opens the writable roots for the folders a sweep step opens
// beneath them: two system calls a folder fewer. The roots are the
// policy's resolved paths, which no command can rename (a bind mount, or
// outside what Landlock lets it write); closeRoots closes them at the
// end of the step.
func (w *Watch) openRoots() {
	w.rootFDs = make(map[string]int, len(w.roots))
	for _, r := range w.roots {
		if fd, err := unix.Open(r, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			w.rootFDs[r] = fd
		}
	}
}

func (w *Watch) closeRoots() {
	for _, fd := range w.rootFDs {
		unix.Close(fd)
	}
	w.rootFDs = nil
}
