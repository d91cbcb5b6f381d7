//go:build linux

package repoguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Guard stands in, under Landlock, for the read-only mounts bubblewrap
// puts on the workspace's own repositories: Landlock cannot take .git out
// of a writable workspace. It records the protected paths of the mount
// plan (hooks, config, control files, .git files, what a config names) and
// the .git/.hg directories when the sandbox starts, and after every command
// restores what a command changed there: a changed or new entry is renamed
// aside (so nothing of it runs), the recorded content written back; a
// replaced .git or .hg directory is renamed aside as a whole. Only paths
// inside the writable roots are handled, never through a symlink.
type Guard struct {
	w     *Watch
	paths []string             // protected paths, in plan order
	snap  map[string]guardNode // path -> recorded state
	pins  map[string][2]uint64 // .git/.hg directory -> device, inode
	gone  map[string]bool      // pinned directories found missing (reported once)
	// undone lists the paths the last checks restored, for the result of
	// the command that changed them (take).
	undone []string
}

// Take returns and clears the paths the checks restored since the last take.
func (g *Guard) Take() []string {
	if g == nil {
		return nil
	}
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	out := g.undone
	g.undone = nil
	return out
}

// Forget stops guarding the repositories commands created under an earlier
// backend (Watch keeps checking those as new ones: their state at this
// backend's start is not a baseline to restore).
func (g *Guard) Forget(fresh []string) {
	for _, f := range fresh {
		delete(g.pins, f)
		g.paths = slices.DeleteFunc(g.paths, func(p string) bool { return within(p, f) })
	}
}

// guardNode is the recorded state of a file or directory.
type guardNode struct {
	missing bool
	dir     bool
	mode    uint32
	data    []byte               // a file's content
	kids    map[string]guardNode // a directory's entries
}

// Bounds of what the guard records: hooks folders are small; a larger
// tree is recorded as far as the bounds and the rest left to Watch.
const (
	maxGuardEntries = 2000
	maxGuardDepth   = 4
)

// NewGuard records the protected paths of a mount plan (protect: the paths
// bubblewrap would mount read-only; pin: the directories it would make
// mount points) inside w's writable roots, except those the OS enforces
// itself (skip: the ones Landlock keeps read-only).
func NewGuard(w *Watch, protect, pin, skip []string) *Guard {
	g := &Guard{w: w, snap: map[string]guardNode{}, pins: map[string][2]uint64{}, gone: map[string]bool{}}
	budget := maxGuardEntries
	for _, p := range protect {
		if g.w.RootOf(p) == "" || slices.ContainsFunc(skip, func(s string) bool { return within(p, s) }) {
			continue
		}
		g.paths = append(g.paths, p)
		g.snap[p] = g.record(p, 0, &budget)
	}
	for _, p := range pin {
		if b := filepath.Base(p); b != ".git" && b != ".hg" {
			continue
		}
		if st, ok := g.lstat(p); ok && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			g.pins[p] = [2]uint64{st.Dev, st.Ino}
		}
	}
	return g
}

// lstat looks at p without following a symlink below its writable root.
func (g *Guard) lstat(p string) (unix.Stat_t, bool) {
	var st unix.Stat_t
	dfd, err := g.w.OpenBeneath(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return st, false
	}
	defer unix.Close(dfd)
	return st, unix.Fstatat(dfd, filepath.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// record reads the state of p.
func (g *Guard) record(p string, depth int, budget *int) guardNode {
	*budget--
	st, ok := g.lstat(p)
	if !ok {
		return guardNode{missing: true}
	}
	n := guardNode{mode: st.Mode}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		n.dir = true
		n.kids = map[string]guardNode{}
		if depth >= maxGuardDepth || *budget <= 0 {
			return n
		}
		ents, err := g.w.readDir(p)
		if err != nil {
			return n
		}
		for _, e := range ents {
			if *budget <= 0 {
				break
			}
			if strings.Contains(e.Name(), DisabledMark) {
				continue // what the guard itself put aside
			}
			n.kids[e.Name()] = g.record(filepath.Join(p, e.Name()), depth+1, budget)
		}
	case unix.S_IFREG:
		fd, err := g.w.OpenBeneath(p, unix.O_RDONLY|unix.O_NONBLOCK)
		if err == nil {
			f := os.NewFile(uintptr(fd), p)
			n.data, _ = io.ReadAll(io.LimitReader(f, maxControlFile))
			f.Close()
		}
	}
	return n
}

// same reports whether the recorded node a still describes b.
func (a guardNode) same(b guardNode) bool {
	if a.missing || b.missing || a.dir || b.dir {
		return a.missing == b.missing && a.dir == b.dir && (a.missing || a.mode&unix.S_IFMT == b.mode&unix.S_IFMT)
	}
	return a.mode == b.mode && bytes.Equal(a.data, b.data)
}

// Check restores the protected paths and returns one line per change.
func (g *Guard) Check() []string {
	if g == nil {
		return nil
	}
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	var out []string
	for p, id := range g.pins {
		st, ok := g.lstat(p)
		if !ok {
			if !g.gone[p] {
				g.gone[p] = true
				out = append(out, fmt.Sprintf("a command moved or removed the repository directory %s: git on the host no longer finds that repository there", p))
			}
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Dev == id[0] && st.Ino == id[1] {
			delete(g.gone, p) // back in place
			continue
		}
		delete(g.gone, p)
		g.undone = append(g.undone, p)
		if aside := g.w.disableRepo(p); aside != "" {
			out = append(out, fmt.Sprintf("a command replaced the repository directory %s; the sandbox renamed the new one to %s (git on the host would have run its hooks and config); the original is wherever the command moved it", p, filepath.Base(aside)))
		} else {
			out = append(out, fmt.Sprintf("a command replaced the repository directory %s and the sandbox could not rename it aside: do not run git or hg there", p))
		}
	}
	budget := maxGuardEntries
	for _, p := range g.paths {
		if slices.ContainsFunc(slices.Collect(maps.Keys(g.gone)), func(d string) bool { return within(p, d) }) {
			continue // its repository is gone: nothing there runs
		}
		out = append(out, g.restore(p, g.snap[p], 0, &budget)...)
	}
	return out
}

// restore makes p what want records, reporting what it did.
func (g *Guard) restore(p string, want guardNode, depth int, budget *int) []string {
	now := g.record(p, maxGuardDepth, budget) // this level only
	if want.missing && now.missing {
		return nil
	}
	if !now.missing && !want.same(now) {
		g.undone = append(g.undone, p)
		aside := g.w.disableRepo(p)
		if aside == "" {
			return []string{fmt.Sprintf("a command changed %s, which git or hg on the host would run or read, and the sandbox could not undo it: do not run git or hg in that repository", p)}
		}
		var out []string
		if !want.missing {
			if err := g.write(p, want); err != nil {
				out = append(out, fmt.Sprintf("a command changed %s; the sandbox renamed its version to %s but could not put the original back (%v)", p, filepath.Base(aside), err))
				return out
			}
			return append(out, fmt.Sprintf("a command changed %s, which git or hg on the host would run or read; the sandbox put the original back and renamed the command's version to %s", p, filepath.Base(aside)))
		}
		return append(out, fmt.Sprintf("a command created %s, which git or hg on the host would run or read; the sandbox renamed it to %s", p, filepath.Base(aside)))
	}
	if now.missing {
		g.undone = append(g.undone, p)
		if err := g.write(p, want); err != nil {
			return []string{fmt.Sprintf("a command removed %s and the sandbox could not put it back (%v)", p, err)}
		}
		return []string{fmt.Sprintf("a command removed %s; the sandbox put it back", p)}
	}
	if !want.dir || depth >= maxGuardDepth {
		return nil
	}
	var out []string
	ents, err := g.w.readDir(p)
	if err != nil {
		return nil
	}
	names := map[string]bool{}
	for _, e := range ents {
		if !strings.Contains(e.Name(), DisabledMark) {
			names[e.Name()] = true
		}
	}
	for name := range want.kids {
		names[name] = true
	}
	keys := make([]string, 0, len(names))
	for n := range names {
		keys = append(keys, n)
	}
	slices.Sort(keys)
	for _, name := range keys {
		kid, ok := want.kids[name]
		if !ok {
			kid = guardNode{missing: true}
		}
		out = append(out, g.restore(filepath.Join(p, name), kid, depth+1, budget)...)
	}
	return out
}

// write recreates p as recorded (a directory with its entries, or a file
// with its content and mode), never through a symlink.
func (g *Guard) write(p string, n guardNode) error {
	dfd, err := g.w.OpenBeneath(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	name := filepath.Base(p)
	if n.dir {
		if err := unix.Mkdirat(dfd, name, n.mode&0o7777); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("create %s: %w", p, err)
		}
		for k, kid := range n.kids {
			if !kid.missing {
				if err := g.write(filepath.Join(p, k), kid); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if n.mode&unix.S_IFMT != unix.S_IFREG {
		return nil // a recorded symlink or socket is left to Watch
	}
	fd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, n.mode&0o7777)
	if err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	f := os.NewFile(uintptr(fd), p)
	_, werr := f.Write(n.data)
	if err := errors.Join(werr, unix.Fchmod(fd, n.mode&0o7777), f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
