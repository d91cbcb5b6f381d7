//go:build linux

package sandbox

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// walkAll lists what walkDir visits under root with read, as path and
// type, stopping where skip says (a SkipDir at "b", a SkipAll at "stop").
func walkAll(t *testing.T, root string, walk func(string, fs.WalkDirFunc) error) []string {
	t.Helper()
	var out []string
	err := walk(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p+" "+d.Type().String())
		switch d.Name() {
		case "b":
			return fs.SkipDir
		case "stop":
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// settledCache opens the cache of roots in dir as if every folder had
// changed long ago (a test cannot age a folder's ctime).
func settledCache(dir string, roots []string, ahead *planAhead) *dirCache {
	c := newDirCache(dir, roots)
	c.window = -int64(time.Hour)
	c.ahead = ahead
	go c.prepare()
	return c
}

func makeScanTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"a/x", "b/y", "c/d/e", "c/stop/z", "c/zz"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/.env", "b/f", "c/d/g", "top"} {
		writeFile(t, filepath.Join(root, f), "x")
	}
	if err := os.Symlink("/etc", filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestWalkDirIsFilepathWalkDir: the scan's walk visits what
// filepath.WalkDir does, in the same order, with SkipDir and SkipAll,
// whether the folders come from the disk or from the cache.
func TestWalkDirIsFilepathWalkDir(t *testing.T) {
	root := makeScanTree(t)
	want := walkAll(t, root, func(r string, fn fs.WalkDirFunc) error { return filepath.WalkDir(r, fn) })
	if got := walkAll(t, root, func(r string, fn fs.WalkDirFunc) error { return walkDir(r, os.ReadDir, fn) }); !slices.Equal(got, want) {
		t.Fatalf("walkDir:\n%q\nfilepath.WalkDir:\n%q", got, want)
	}
	dir := t.TempDir()
	for round := range 2 { // a cold cache, then a warm one
		c := settledCache(dir, []string{root}, nil)
		<-c.ready
		fromFile := len(c.hit)
		got := walkAll(t, root, func(r string, fn fs.WalkDirFunc) error { return walkDir(r, c.readDir, fn) })
		if !slices.Equal(got, want) {
			t.Fatalf("round %d through the cache:\n%q\nwant:\n%q", round, got, want)
		}
		if round == 1 && fromFile == 0 {
			t.Fatal("the warm round took nothing from the cache")
		}
		if err := writeCache(c.path, c.encode()); err != nil {
			t.Fatal(err)
		}
	}
}

// kept are the folders the cache would write: read or confirmed by this scan.
func (c *dirCache) kept() map[string]cachedDir {
	out := map[string]cachedDir{}
	for p, cd := range c.hit {
		if cd.keep {
			out[p] = cd
		}
	}
	return out
}

// TestDirCacheSeesChanges: a folder whose entries changed is read again;
// one changed just before the scan is not kept (its ctime may not move
// for a change in the same clock tick); a torn or foreign file is
// ignored whole; a cache of other roots is not taken.
func TestDirCacheSeesChanges(t *testing.T) {
	root := makeScanTree(t)
	dir := t.TempDir()
	// scan returns the folders taken from the cache, those it would keep,
	// and what the walk saw.
	scan := func(settled bool) (hit, kept map[string]cachedDir, got []string) {
		c := openDirCache(dir, []string{root}, nil)
		if settled {
			c = settledCache(dir, []string{root}, nil)
		}
		<-c.ready
		c.checked = true
		c.check()
		hit = maps.Clone(c.hit) // what the file gave and the check kept, before the walk adds its reads
		got = walkAll(t, root, func(r string, fn fs.WalkDirFunc) error { return walkDir(r, c.readDir, fn) })
		kept = c.kept()
		if err := writeCache(c.path, c.encode()); err != nil {
			t.Fatal(err)
		}
		return hit, kept, got
	}
	// Just made: racy, nothing kept.
	if _, kept, _ := scan(false); len(kept) != 0 {
		t.Fatalf("kept %d folders changed within the racy window", len(kept))
	}
	scan(true)
	writeFile(t, filepath.Join(root, "a", "new.pem"), "k")
	hit, _, got := scan(true)
	if _, ok := hit[filepath.Join(root, "a")]; ok {
		t.Fatal("a folder with a new entry was taken from the cache")
	}
	if !slices.Contains(got, filepath.Join(root, "a", "new.pem")+" ----------") {
		t.Fatalf("the new entry was not seen: %q", got)
	}
	if _, ok := hit[filepath.Join(root, "c", "d")]; !ok {
		t.Fatal("an unchanged folder was read again")
	}
	// Torn: the checksum fails, everything is read.
	path := openDirCache(dir, []string{root}, nil).path
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if hit, _, _ := scan(true); len(hit) != 0 {
		t.Fatalf("a torn cache gave %d folders", len(hit))
	}
	if c := openDirCache(dir, []string{root}, nil); c.matches([]string{root, "/other"}) {
		t.Fatal("a cache of other roots matched")
	}
}

// TestPlanAhead: with no cache file, the plan the manager expects is
// made in the background, reading the folders; the first sandbox takes
// it when its policy is the one planned (its private temp directory
// aside), and plans anew otherwise.
func TestPlanAhead(t *testing.T) {
	// Below /tmp, as a scratch project may be: it then needs a mount
	// point in the private /tmp.
	root, err := os.MkdirTemp(PrivateTmp, "plan-ahead-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "a", ".env"), "KEY=1")
	p := Policy{Whitelist: []string{root}, Blacklist: DefaultBlacklist(), Home: t.TempDir()}
	secret := filepath.Join(root, "a", ".env")
	for _, tc := range []struct {
		name  string
		later func(Policy) Policy
		taken bool
	}{
		{"same", func(p Policy) Policy { return p }, true},
		{"private tmp made since", func(p Policy) Policy { p.TempDir = t.TempDir(); return p }, true},
		{"other blacklist", func(p Policy) Policy { p.Blacklist = append(slices.Clone(p.Blacklist), "**/top"); return p }, false},
		{"read-only", func(p Policy) Policy { p.ReadOnly = true; return p }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := settledCache(t.TempDir(), scanKey(p), &planAhead{p: p})
			<-c.ready
			if len(c.hit) == 0 {
				t.Fatal("the plan ahead read nothing")
			}
			later := tc.later(p)
			mp, ok := c.takeAhead(later, nil)
			if ok != tc.taken {
				t.Fatalf("taken %v, want %v", ok, tc.taken)
			}
			if !ok {
				if slices.ContainsFunc(slices.Collect(maps.Values(c.hit)), func(cd cachedDir) bool { return cd.used }) {
					t.Fatal("the folders of the plan dropped are still marked as used")
				}
				return
			}
			defer mp.watch.Close()
			if !slices.Contains(mp.hideFiles, secret) {
				t.Fatalf("the plan made ahead did not hide %s: %q", secret, mp.hideFiles)
			}
			// A root below /tmp has its mount point in the private /tmp
			// that bubblewrap mounts there, made now.
			if later.TempDir != "" {
				point := filepath.Join(later.TempDir, strings.TrimPrefix(root, PrivateTmp+"/"))
				if st, err := os.Lstat(point); err != nil || !st.IsDir() {
					t.Fatalf("no mount point %s in the private tmp: %v", point, err)
				}
			}
		})
	}
}

// TestPlanAheadIsNotStale: what changes between the plan made ahead and
// the first command (the person runs git init while the model thinks) is
// in the plan the sandbox starts with: the check before it finds the
// folders that plan took changed, and the plan is made again.
func TestPlanAheadIsNotStale(t *testing.T) {
	root := makeScanTree(t)
	p := Policy{Whitelist: []string{root}, Blacklist: DefaultBlacklist(), Home: t.TempDir()}
	cacheDir := t.TempDir()
	c := openDirCache(cacheDir, scanKey(p), &planAhead{p: p})
	<-c.ready
	if err := os.Mkdir(filepath.Join(root, "c", "d", ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "c", "zz", ".env"), "KEY=1")
	pl := &platform{cacheDir: cacheDir, scan: c}
	mp := pl.plan(p, nil)
	mp.watch.Close()
	if !slices.Contains(mp.pin, filepath.Join(root, "c", "d", ".git")) {
		t.Errorf("a repository made after the plan ahead is not protected: pins %q", mp.pin)
	}
	if !slices.Contains(mp.hideFiles, filepath.Join(root, "c", "zz", ".env")) {
		t.Errorf("a secret made after the plan ahead is not hidden: %q", mp.hideFiles)
	}
}

// TestMatchEntryIsMatchRules: in a walk that skips what a rule covers,
// matching the last name (matchEntry, the scan's) decides as matching
// every component of the path does, for name, glob, path and
// multi-component rules.
func TestMatchEntryIsMatchRules(t *testing.T) {
	root := makeScanTree(t)
	for _, f := range []string{"c/key.pem", "c/d/.envrc", "b/y/secrets.json", "a/x/cfg/gcloud/k", "c/zz/.env.local"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, f), "x")
	}
	rules := compileRules(append(DefaultBlacklist(), "*.pem", "**/cfg/gcloud", filepath.Join(root, "c", "zz")), t.TempDir())
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		we, wok := matchRules(rules, p)
		ge, gok := matchEntry(rules, p, d.Name())
		if we != ge || wok != gok {
			t.Errorf("%s: matchEntry %q %v, matchRules %q %v", p, ge, gok, we, wok)
		}
		if wok {
			n++
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("only %d paths matched a rule", n)
	}
}

// TestSpeculativePlanIsConfirmed: the first sandbox's plan is made from
// the scan cache before the cache is checked, and the check runs while
// the shell starts. A tree unchanged since the cache was written keeps
// that plan; a repository made since (and one removed) makes the plan
// again before any command runs, and the shell is started again under
// it: the new repository's hooks are read-only to the first command.
func TestSpeculativePlanIsConfirmed(t *testing.T) {
	requireBwrap(t)
	skipUnderLandlock(t, "the Landlock backend plans from the checked cache")
	ws, cacheDir := t.TempDir(), t.TempDir()
	for _, d := range []string{"a/b", "c/d/e", "c/old/.git/hooks"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(ws, "c", "old", ".git", "HEAD"), "ref: refs/heads/main\n")
	p := Policy{Whitelist: []string{ws}, Blacklist: DefaultBlacklist(), Home: t.TempDir()}
	// wrap plans as the first sandbox does, with a cache that counts the
	// just-made tree as settled; it returns what confirmPlan said.
	wrap := func() (*platform, []string) {
		t.Helper()
		pl, err := newPlatform("linux", t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		pl.cacheDir, pl.scan = cacheDir, settledCache(cacheDir, scanKey(p), nil)
		if _, err := pl.wrap(p, []string{"/bin/true"}, WrapOptions{Cwd: ws}); err != nil {
			t.Fatal(err)
		}
		again := pl.confirmPlan()
		if err := pl.cleanup(); err != nil { // writes the cache
			t.Fatal(err)
		}
		return pl, again
	}
	wrap() // no cache yet: the first session reads the tree
	if pl, again := wrap(); again != nil || !slices.Contains(pl.lastPlan.pin, filepath.Join(ws, "c", "old", ".git")) {
		t.Fatalf("an unchanged tree did not keep the plan from the cache (again %q, pins %q)", again, pl.lastPlan.pin)
	}
	if err := os.RemoveAll(filepath.Join(ws, "c", "old")); err != nil {
		t.Fatal(err)
	}
	newGit := filepath.Join(ws, "c", "d", "new", ".git")
	if err := os.MkdirAll(filepath.Join(newGit, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(newGit, "HEAD"), "ref: refs/heads/main\n")
	pl, again := wrap()
	if again == nil {
		t.Fatal("a plan from a cache that changed since was kept")
	}
	if !slices.Contains(pl.lastPlan.pin, newGit) || slices.Contains(pl.lastPlan.pin, filepath.Join(ws, "c", "old", ".git")) {
		t.Fatalf("the plan made again is not the tree's: pins %q", pl.lastPlan.pin)
	}
	// Through the provider: a repository made since the cache was last
	// written is protected from the first command on (the shell is
	// started again under the checked plan).
	newer := filepath.Join(ws, "a", "b", "newer", ".git")
	if err := os.MkdirAll(filepath.Join(newer, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(newer, "HEAD"), "ref: refs/heads/main\n")
	b, err := LocalProvider{}.Create(context.Background(), CreateOptions{
		Policy: p, Cwd: ws, Env: []string{"PATH=" + os.Getenv("PATH")}, StartSession: realShell,
		ScanCache: cacheDir, scan: settledCache(cacheDir, scanKey(p), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Dispose()
	hook := filepath.Join(newer, "hooks", "pre-commit")
	res, err := b.Execute(context.Background(), "echo evil > "+hook)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(hook); err == nil || res.ExitCode == 0 {
		t.Fatalf("a hook was written into a repository made since the cache: exit %d, %s", res.ExitCode, res.Stderr)
	}
	// The same with the manager's plan made ahead (at start, before the
	// person made a repository while the model thought).
	env := []string{"PATH=" + os.Getenv("PATH")}
	scan := settledCache(cacheDir, scanKey(p), &planAhead{p: p, env: env})
	<-scan.ready
	newest := filepath.Join(ws, "c", "d", "e", "newest", ".git")
	if err := os.MkdirAll(filepath.Join(newest, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(newest, "HEAD"), "ref: refs/heads/main\n")
	b2, err := LocalProvider{}.Create(context.Background(), CreateOptions{
		Policy: p, Cwd: ws, Env: env, StartSession: realShell, ScanCache: cacheDir, scan: scan,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Dispose()
	hook = filepath.Join(newest, "hooks", "pre-commit")
	if res, err = b2.Execute(context.Background(), "echo evil > "+hook); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(hook); err == nil || res.ExitCode == 0 {
		t.Fatalf("a hook was written into a repository made since the plan ahead: exit %d, %s", res.ExitCode, res.Stderr)
	}
}

// walkDir is filepath.WalkDir with the folders read by read (the cache's
// readers): the same order (lexical), the same calls of fn and the same
// SkipDir and SkipAll.
func walkDir(root string, read func(string) ([]fs.DirEntry, error), fn fs.WalkDirFunc) error {
	info, err := os.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = walkDirFrom(root, fs.FileInfoToDirEntry(info), read, fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func walkDirFrom(path string, d fs.DirEntry, read func(string) ([]fs.DirEntry, error), fn fs.WalkDirFunc) error {
	if err := fn(path, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	ents, err := read(path)
	// The cache's entries are valid until its next read (dirCache.read),
	// and the walk reads on below them: it keeps copies.
	ents = slices.Clone(ents)
	for i, e := range ents {
		ents[i] = &cachedEnt{name: e.Name(), typ: e.Type()}
	}
	if err != nil {
		if err = fn(path, d, err); err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	prefix := path + "/"
	if strings.HasSuffix(path, "/") {
		prefix = path // the root, /
	}
	for _, e := range ents {
		if err := walkDirFrom(prefix+e.Name(), e, read, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}
