//go:build linux

package repoguard

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watch finds git repositories that commands create, or point a new
// `.git` file at, inside the writable roots while the sandbox runs: the
// start-up scan protects only the ones that existed then, and git on the
// host runs a repository's hooks and core.fsmonitor. A repository whose
// hooks or configuration would run anything is disabled (its .git renamed
// aside) and reported; a harmless one is watched and checked again after
// every later command, since its config can still be changed.
//
// The directories the start-up scan saw are watched with inotify (a new
// entry in one is an event), so a command that created nothing costs one
// non-blocking read. A directory inotify cannot watch (the user's watch
// limit) is checked by its ctime instead, one Lstat per command (unlike the
// mtime, no command can set it back). The scan watches a writable root's
// directories past the blacklist's bounds too (up to the sandbox's maxWatchEntries), and
// inside node_modules, .hg and .svn (a budget of their own): host git
// status runs git in every gitlink of the index (which is writable) that
// holds a .git, wherever it is. Only the inside of .git directories is
// not watched, and what lies past the bounds. A directory git would take
// for a bare repository (HEAD with objects and refs) counts as a
// repository: git looks for one before the .git of the folders above.
//
// Every path is one a command can change while the checks run: below a
// writable root no symlink is followed and nothing is opened that could
// block (beneath.go).
//
// Control watches (ctl) wake the idle watcher (see the sandbox's LocalBackend.idle) when
// anything is created or written in a git or Mercurial directory, its
// objects, objects/info or hooks, or a rebase's state directory, so that a
// file a background job plants there while no command runs is found at
// once too; what no event shows (a write through a shared mapping) is
// found by the idle watcher's look at a fixed pace (the sandbox's idlePace).
type Watch struct {
	mu    sync.Mutex
	roots []string                       // the writable roots (resolved): below them no symlink is followed
	fd    int                            // inotify descriptor, -1 before start or without inotify
	wds   map[int32]string               // watch descriptor -> directory
	ctl   map[int32]string               // control watches: wake the idle check only
	dirs  map[string]int64               // directory -> ctime (ns): the unwatched ones, checked by their ctime
	known map[string]bool                // .git and .hg entries present at start (mounted read-only where it matters)
	fresh []string                       // .git and .hg entries that appeared since, watched for changes
	seq   map[string]map[string][]string // existing git directory -> what its rebase/sequencer state ran at start
	// scanned lists the directories the start-up scan remembered, for
	// Start to watch (a check before Start takes them into dirs);
	// started: Start has run.
	scanned []string
	started bool
	// unmounted: .git and .hg entries present at start that the mount plan
	// left writable (its mount budget), with their control directories:
	// fingerprinted at start, judged again when an event came from one of
	// those (touched: the control directories events came from since the
	// last check).
	unmounted []unmountedRepo
	touched   map[string]bool
	// ctlDirty: something changed in a control directory since the last
	// look (or no look yet); ctlBlind: one could not be watched. Without
	// either (and with inotify) the control files and rebase state are
	// as they were, and their look is skipped: it costs a dozen syscalls
	// per command in a repository.
	ctlDirty, ctlBlind bool
	changed            bool   // the last check looked at the control files
	sw                 sweep  // what no watch covers
	buf                []byte // drain's, kept: a check runs before and after every command
	cpath              []byte // inotifyAdd's, kept
	// rootFDs holds the writable roots open (O_PATH) during a sweep step,
	// which opens hundreds of folders beneath them (OpenBeneath).
	rootFDs map[string]int
}

// NewWatch returns a Watch with no roots: the mount plan fills it, Start
// starts it.
func NewWatch() *Watch {
	return &Watch{fd: -1, wds: map[int32]string{}, ctl: map[int32]string{}, dirs: map[string]int64{}, known: map[string]bool{},
		seq: map[string]map[string][]string{}, ctlDirty: true}
}

// SetRoots sets the writable roots (resolved): below them no symlink is
// followed. The mount plan calls it before it records anything.
func (w *Watch) SetRoots(roots []string) { w.roots = slices.Clone(roots) }

// MarkKnown records a .git or .hg entry present at start (the mount plan
// protects it), so that the checks do not report it as new.
func (w *Watch) MarkKnown(path string) { w.known[path] = true }

// Unmounted records a repository present at start that the mount plan
// leaves without read-only mounts: Start records what would run in it
// (as the sweep records an old repository it finds) and watches its
// control folders, and every check that follows a change there judges it
// again, as a new one when what would run in it changed.
// Past maxUnmounted of them a repository is the sweep's, as one past the
// scan's bounds is: each takes a fingerprint at start and a few control
// watches, and a tree of thousands of repositories must not cost more.
func (w *Watch) Unmounted(path string) {
	switch {
	case slices.ContainsFunc(w.unmounted, func(r unmountedRepo) bool { return r.path == path }):
	case len(w.unmounted) >= maxUnmounted:
		w.sw.on = true
	default:
		w.unmounted = append(w.unmounted, unmountedRepo{path: path})
	}
}

// maxUnmounted bounds the repositories Unmounted guards.
const maxUnmounted = 128

// unmountedRepo is a repository of Watch.Unmounted: its .git or .hg entry
// and the git directories it names (itself for a .hg).
type unmountedRepo struct {
	path string
	dirs []string
}

// changed reports whether an event came from inside one of r's
// directories since the last check.
func (r unmountedRepo) changed(touched map[string]bool) bool {
	for d := range touched {
		if slices.ContainsFunc(r.dirs, func(gd string) bool { return within(d, gd) }) {
			return true
		}
	}
	return false
}

// Baseline records, once per git directory, what its rebase or sequencer
// state would run at start: the checks report only what is new.
func (w *Watch) Baseline(gitDir string) {
	if _, ok := w.seq[gitDir]; !ok {
		w.seq[gitDir] = seqBaseline(gitDir)
	}
}

// Fresh lists the repositories commands created that the checks still
// follow (harmless at the last check).
func (w *Watch) Fresh() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.fresh)
}

// isRepoEntry reports whether name makes its directory a repository to
// git or Mercurial on the host.
func isRepoEntry(name string) bool { return name == ".git" || name == ".hg" }

// ctlMask: any entry made, moved in or rewritten in a control directory.
// IN_MODIFY too: a job that keeps a config open after writing to it sends
// no IN_CLOSE_WRITE.
const ctlMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_MASK_ADD

// control watches dir (when it exists) for the idle check.
func (w *Watch) control(dir string) {
	if w.fd < 0 {
		return
	}
	wd, err := w.inotifyAdd(dir, ctlMask)
	switch {
	case err == nil:
		_, isCtl := w.ctl[int32(wd)]
		_, isDir := w.wds[int32(wd)]
		if !isCtl && !isDir && len(w.wds)+len(w.ctl) >= MaxWatches {
			// A new watch past the bound: taken back, and looked at every
			// time instead. One inotify already holds (the control
			// folders Start watched, which the sandbox's ControlFiles
			// names again once the folders took the rest) costs nothing:
			// counting it made every check in a large tree look at every
			// repository's control files and rebase state.
			_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
			w.ctlBlind = true
			return
		}
		w.ctl[int32(wd)] = dir
	case !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR):
		// It exists but cannot be watched (the watch limit): look every time.
		w.ctlBlind = true
	}
}

// ControlFiles watches the directories of the control files that must not
// appear (the sandbox's mountPlan.gitWatch): a missing directory (a repository without
// objects/info) could be made and filled unseen, so then every check
// looks at them.
func (w *Watch) ControlFiles(paths []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	for _, p := range paths {
		dir := filepath.Dir(p)
		if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
			w.ctlBlind = true
			continue
		}
		w.control(dir)
	}
}

// ControlChanged reports whether the last check looked at the control
// files (something changed, or nothing can tell): the caller then removes
// the planted ones (the sandbox's mountPlan.revertGit).
func (w *Watch) ControlChanged() bool {
	if w == nil {
		return true // nothing watches: the caller always looks
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changed
}

// controlRepo adds the control watches of one git directory or .hg. A
// watch follows the inode: objects (not a mount point) renamed away and
// made anew is a new folder, watched when the check that its creation
// woke calls this again, and so is the objects/info made in it next.
func (w *Watch) controlRepo(dir string) {
	w.control(dir)
	if filepath.Base(dir) == ".hg" {
		return
	}
	for _, sub := range append([]string{"hooks", "objects", filepath.Join("objects", "info")}, seqStates...) {
		w.control(filepath.Join(dir, sub))
	}
}

// Adopt makes repositories an earlier backend's commands created new to
// this watch again (its scan took them for existing ones).
func (w *Watch) Adopt(fresh []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range fresh {
		if _, err := os.Lstat(p); err != nil || slices.Contains(w.fresh, p) {
			continue
		}
		delete(w.known, p)
		w.fresh = append(w.fresh, p)
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			w.controlRepo(p)
		}
	}
}

// NeedsLook reports whether something exists that only a look, not an
// inotify event, can tell has changed (see the sandbox's idlePace).
func (w *Watch) NeedsLook() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.fresh) > 0 || len(w.dirs) > 0 || len(w.scanned) > 0 || w.ctlBlind || w.sw.on
}

// MarkUnseen records that the start-up scan left folders of the writable
// roots unvisited (its bounds): the sweep covers them.
func (w *Watch) MarkUnseen() { w.sw.on = true }

// budgetLeft reports whether another watch fits in MaxWatches (one inode
// watched for both purposes counts twice: a bound, not a count).
func (w *Watch) budgetLeft() bool { return len(w.wds)+len(w.ctl) < MaxWatches }

// WaitFD is the inotify descriptor the idle watcher polls (-1: none).
func (w *Watch) WaitFD() int {
	if w == nil {
		return -1
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fd
}

func ctimeOf(st fs.FileInfo) int64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Ctim.Sec*1e9 + sys.Ctim.Nsec
	}
	return st.ModTime().UnixNano()
}

// Remember records a directory of the start-up scan (or a new one). Past
// MaxWatches a new one is left to the sweep: the scan remembers the
// shallowest first (breadth-first), and holds no table of a whole tree.
func (w *Watch) Remember(dir string) {
	switch {
	case w.fd >= 0:
		if !w.add(dir) {
			w.sw.on = true
		}
	case len(w.scanned)+len(w.dirs) >= MaxWatches:
		w.sw.on = true
	case !w.started:
		// A list, not the table (a map of 2 000 folders cost 220 KB as it
		// grew): the scan remembers a folder once, or once per root when
		// roots nest (Start drops the copies).
		w.scanned = append(w.scanned, dir)
	default:
		// Its change time is read by the next check (this one is new).
		w.dirs[dir] = 0
	}
}

// takeScanned moves the scan's folders into dirs, to be looked at by
// their change time (0: read at Start, or by the next check).
func (w *Watch) takeScanned() {
	for _, dir := range w.scanned {
		w.dirs[dir] = 0
	}
	w.scanned = nil
}

// watchMask adds to what a control watch of the same directory asks for
// (IN_MASK_ADD): inotify keeps one watch per inode.
const watchMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_MASK_ADD

// add watches dir with inotify; false when it cannot.
func (w *Watch) add(dir string) bool {
	if !w.budgetLeft() {
		return false
	}
	wd, err := w.inotifyAdd(dir, watchMask)
	if err != nil {
		return false
	}
	w.wds[int32(wd)] = dir
	return true
}

// inotifyAdd is unix.InotifyAddWatch with the path made a C string in
// w.cpath, kept: Start adds two thousand watches in a large tree, and
// each made a copy of its own (110 KB).
func (w *Watch) inotifyAdd(dir string, mask uint32) (int, error) {
	if strings.IndexByte(dir, 0) >= 0 {
		return -1, unix.EINVAL
	}
	w.cpath = append(append(w.cpath[:0], dir...), 0)
	wd, _, e := unix.Syscall(unix.SYS_INOTIFY_ADD_WATCH, uintptr(w.fd), uintptr(unsafe.Pointer(&w.cpath[0])), uintptr(mask))
	if e != 0 {
		return -1, e
	}
	return int(wd), nil
}

// Start turns the scanned directories into inotify watches (the sandbox's
// shell only: a plan made for a status or an extension run keeps none).
func (w *Watch) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		return
	}
	w.startClock()
	w.started = true
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		// The ctime check covers every directory, from now (no command
		// has run yet). Its change time is read here, and only if
		// inotify is missing: a stat per folder is most of what the scan
		// would cost otherwise.
		w.takeScanned()
		for dir := range w.dirs {
			if st, err := os.Lstat(dir); err == nil {
				w.dirs[dir] = ctimeOf(st)
			} else {
				delete(w.dirs, dir)
			}
		}
		return
	}
	w.fd = fd
	// The control folders of the repositories first (they wake the idle
	// check), then the scan's folders, shallowest first, as far as
	// MaxWatches goes; the sweep covers the rest.
	for dir := range w.seq {
		w.controlRepo(dir)
	}
	for p := range w.known {
		if filepath.Base(p) == ".hg" {
			w.controlRepo(p)
		}
	}
	for i, r := range w.unmounted {
		if w.sw.late == nil {
			w.sw.late = map[string]lateRepo{}
		}
		// No change time (a stat of every control path and hook): the
		// first look after an event in its control folders computes it,
		// and compares the fingerprint.
		w.sw.late[r.path] = lateRepo{print: dangerPrint(r.path)}
		r.dirs = []string{r.path}
		if filepath.Base(r.path) != ".hg" {
			r.dirs = gitDirsOf(r.path)
		}
		for _, d := range r.dirs {
			w.controlRepo(d)
		}
		w.unmounted[i] = r
	}
	type byDepth struct {
		depth int
		dir   string
	}
	dirs := make([]byDepth, 0, len(w.scanned)+len(w.dirs))
	for _, dir := range w.scanned {
		dirs = append(dirs, byDepth{strings.Count(dir, "/"), dir}) // counted once, not per comparison
	}
	for dir := range w.dirs { // a check before Start took the scan's
		dirs = append(dirs, byDepth{strings.Count(dir, "/"), dir})
	}
	w.scanned = nil
	slices.SortFunc(dirs, func(a, b byDepth) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return strings.Compare(a.dir, b.dir)
	})
	dirs = slices.Compact(dirs) // a folder below two nested roots is remembered twice
	// Made at the size it takes (grown by doubling, the table of 2 000
	// watches left as much garbage behind it).
	if len(w.wds) == 0 {
		w.wds = make(map[int32]string, max(0, min(len(dirs), MaxWatches-len(w.ctl))))
	}
	for _, d := range dirs {
		if !w.add(d.dir) {
			w.sw.on = true
		}
	}
	w.dirs = map[string]int64{} // not clear: the scan's table (every folder it saw) is let go
}

// DupDescriptor returns a duplicate of the inotify descriptor (nil before
// Start or without inotify), for a process that outlives this one to
// hold: the kernel then takes down the watches when that process closes
// it, not in Close or at this process's exit (milliseconds for two
// thousand: each waits for an SRCU grace period to free).
func (w *Watch) DupDescriptor() *os.File {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return nil
	}
	fd, err := unix.FcntlInt(uintptr(w.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "inotify")
}

// Close releases the inotify descriptor.
func (w *Watch) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		_ = unix.Close(w.fd)
		w.fd = -1
	}
}

// Check looks for new .git and .hg entries and re-checks the ones found
// before, and the rebase state of the existing git directories. It returns
// one line per repository or state it disabled.
func (w *Watch) Check() []string {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Not started (no watches): the scan's folders are looked at by their
	// change time, as the unwatched ones are.
	w.takeScanned()
	var found []string
	note := func(p string) {
		if !w.known[p] && !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	// git takes a directory holding HEAD with objects and refs for a bare
	// repository, before the .git of the directories above: a new entry
	// that could complete one has that HEAD checked. A .git directory the
	// check renamed aside is one, and stays aside: git reaches it only
	// from inside (a gitlink needs a .git in its folder).
	noteBare := func(dir, name string) {
		if bareParts[name] && !strings.HasPrefix(filepath.Base(dir), ".git"+DisabledMark) {
			note(filepath.Join(dir, "HEAD"))
		}
	}
	// New directories are walked whole: a bound let a command hide a
	// repository behind enough new entries (5 200 empty files, then
	// zzz/.git with core.fsmonitor). The walk costs what making them did.
	// Nothing is skipped but the inside of .git directories (a gitlink
	// cannot lead there): host git status runs git in every gitlink of the
	// index that holds a .git, node_modules or .hg/x included, and the
	// index is writable.
	walkNew := func(dir string) {
		w.walk(dir, func(p string, d fs.DirEntry) error {
			noteBare(filepath.Dir(p), d.Name())
			if isRepoEntry(d.Name()) {
				note(p)
			}
			if !d.IsDir() {
				return nil
			}
			if d.Name() == ".git" {
				return fs.SkipDir
			}
			w.Remember(p)
			return nil
		})
	}
	// A changed directory: look at its entries (new subdirectories whole).
	rescan := func(dir string) {
		ents, err := w.readDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			noteBare(dir, e.Name())
			if isRepoEntry(e.Name()) {
				note(p)
			}
			if e.IsDir() && e.Name() != ".git" {
				walkNew(p)
			}
		}
	}
	if w.fd >= 0 {
		w.drain(note, noteBare, walkNew)
	}
	if w.fd < 0 || w.ctlDirty || w.ctlBlind {
		w.checkGitlinks(note) // the index may have changed
	}
	for _, r := range w.unmounted {
		if w.fd < 0 || w.ctlBlind || r.changed(w.touched) {
			w.sweptRepo(r.path, note)
		}
	}
	clear(w.touched)
	w.sweepStep(note)
	for dir, was := range w.dirs {
		st, err := os.Lstat(dir)
		if err != nil || !st.IsDir() {
			delete(w.dirs, dir)
			continue
		}
		if now := ctimeOf(st); now != was {
			w.dirs[dir] = now
			rescan(dir)
		}
	}
	for _, p := range found {
		if !slices.Contains(w.fresh, p) {
			w.fresh = append(w.fresh, p)
		}
	}
	var out []string
	keep := w.fresh[:0]
	for _, p := range w.fresh {
		if !w.reachable(p) {
			// Its folder was moved (what it holds is found where it went:
			// a new entry there) and maybe a symlink put in its place.
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue // gone
		}
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			// Watched before it is judged: a harmless one armed later, also
			// while idle, wakes the idle check (a change made after this
			// look is an event).
			w.controlRepo(p)
		}
		kind, tool, why := "git", "git", ""
		if filepath.Base(p) == ".hg" {
			kind, tool, why = "Mercurial", "hg", hgDanger(p)
		} else {
			why = GitDanger(p)
		}
		if why == "" {
			keep = append(keep, p)
			continue
		}
		aside := w.disableRepo(p)
		if aside == "" {
			out = append(out, fmt.Sprintf("could not disable a new %s repository at %s: %s; %s on the host would run it: do not run %s there", kind, p, why, tool, tool))
			keep = append(keep, p)
			continue
		}
		out = append(out, fmt.Sprintf("disabled a new %s repository at %s: %s, which %s on the host would run; the sandbox renamed it to %s (rename it back only if you trust it)", kind, p, why, tool, filepath.Base(aside)))
	}
	w.fresh = keep
	w.changed = w.fd < 0 || w.ctlDirty || w.ctlBlind
	if !w.changed {
		return out
	}
	w.ctlDirty = false // set again by an event that comes during the look
	return append(out, w.checkSeq()...)
}

// checkSeq renames aside the rebase or sequencer state of an existing git
// directory that would now run something on the host it did not run when
// the sandbox started (an exec line added to a stopped rebase's todo list,
// a todo list planted from nothing). A rebase a command started that
// stopped on a conflict runs nothing, and stays.
func (w *Watch) checkSeq() []string {
	var out []string
	for dir := range w.seq {
		if !w.reachable(dir) {
			continue
		}
		// A linked worktree added since: its rebase state is new.
		if wts, err := w.readDir(filepath.Join(dir, "worktrees")); err == nil {
			for _, wt := range wts {
				admin := filepath.Join(dir, "worktrees", wt.Name())
				if _, ok := w.seq[admin]; !ok && wt.IsDir() {
					w.seq[admin] = map[string][]string{}
					w.controlRepo(admin)
				}
			}
		}
	}
	for dir, base := range w.seq {
		if !w.reachable(dir) {
			continue // a worktree's admin folder moved and a symlink put there
		}
		// Watched before it is read (folders made since included): what
		// is written after the look wakes the idle check.
		w.controlRepo(dir)
		state, runs := seqDanger(dir, base)
		if state == "" {
			continue
		}
		p := filepath.Join(dir, state)
		what := fmt.Sprintf("git rebase --continue or git cherry-pick --continue on the host would run %q", strings.Join(runs, "; "))
		if aside := w.disableRepo(p); aside != "" {
			out = append(out, fmt.Sprintf("disabled the %s state at %s: %s; the sandbox renamed it to %s (rename it back only if you trust it)", state, p, what, filepath.Base(aside)))
		} else {
			out = append(out, fmt.Sprintf("could not disable the %s state at %s: %s; do not continue it on the host", state, p, what))
		}
	}
	return out
}

// drain reads the pending inotify events: a new `.git` is noted, a new
// directory walked; after an overflow (a command that makes more than
// 16 384 entries, or a job that wants the host busy) the sweep makes a
// whole pass in this check, which costs one read of every directory.
func (w *Watch) drain(note func(string), noteBare func(dir, name string), walkNew func(string)) {
	if w.buf == nil {
		w.buf = make([]byte, 64*1024)
	}
	buf := w.buf
	for {
		// The descriptor is non-blocking and w.mu keeps it open: a raw
		// call skips the runtime's bookkeeping for calls that may block,
		// which wakes its sleeping monitor thread (issue 30).
		r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(w.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		n := int(r)
		if e != 0 || n <= 0 {
			return // EAGAIN: nothing more
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameBytes := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if d, ok := w.ctl[ev.Wd]; ok {
				w.ctlDirty = true
				if len(w.unmounted) > 0 {
					if w.touched == nil {
						w.touched = map[string]bool{}
					}
					w.touched[d] = true
				}
			}
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				// Events were lost: folders made meanwhile hold no watch,
				// so the sweep runs from now on, whole in this check.
				w.ctlDirty = true
				w.sw.full, w.sw.on = true, true
				continue
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(w.wds, ev.Wd)
				delete(w.ctl, ev.Wd)
				continue
			}
			dir, ok := w.wds[ev.Wd]
			if !ok {
				continue
			}
			name := string(bytes.TrimRight(nameBytes, "\x00"))
			p := filepath.Join(dir, name)
			noteBare(dir, name)
			if isRepoEntry(name) {
				note(p)
			}
			if ev.Mask&unix.IN_ISDIR != 0 && name != ".git" {
				walkNew(p)
			}
		}
	}
}

// bareParts are the entries that make a directory a bare repository to git.
var bareParts = map[string]bool{"HEAD": true, "objects": true, "refs": true, "commondir": true, "config": true}

// disableRepo renames a .git entry aside (no link followed: rename acts on
// the entry itself) and returns the new path, or "" when it failed.
// The name is never one that exists (RENAME_NOREPLACE): past the first
// hundred, a job that plants again and again gets names made unique by
// the time, and never a repository left armed for want of a free name.
// Nothing is renamed through a symlink below a writable root (renameAside).
func (w *Watch) disableRepo(p string) string {
	for i := 0; i < 200; i++ {
		aside := fmt.Sprintf("%s%s%d", p, DisabledMark, i)
		if i >= 100 {
			aside = fmt.Sprintf("%s%s%d-%d", p, DisabledMark, time.Now().UnixNano(), i)
		}
		err := w.renameAside(p, aside)
		switch {
		case err == nil:
			return aside
		case errors.Is(err, unix.EEXIST):
			continue
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS):
			// A file system without RENAME_NOREPLACE: look, then rename.
			if _, err := os.Lstat(aside); err == nil {
				continue
			}
			if !w.reachable(p) || os.Rename(p, aside) != nil {
				return ""
			}
			return aside
		default:
			return ""
		}
	}
	return ""
}
