package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// Bounds of the scan that expands blacklist globs (and finds `.git`
// directories and unix sockets) inside the writable roots when a sandbox is
// created. It reads folders breadth-first, the shallowest first, so that in
// a monorepo the budget covers the top of every package before any deep
// folder, and its cost is the same in a tree of any size. Files beyond it,
// and files created after the sandbox started, are still refused by the
// command text check and by the in-process CheckPath, but not by a mount;
// repositories beyond it are the watch's sweep's (repoguard).
const (
	maxScanEntries = 20000 // entries looked at, shared by the roots
	maxScanFolders = 2048  // folders read, in each root
	// maxDepFolders bounds the folders read, in each writable root, of the
	// dependency trees the blacklist scan skips (node_modules, .hg, .svn),
	// looked into for repositories only, after the rest.
	maxDepFolders = 256
	// maxRepoMounts bounds the mounts the repositories take (pins and
	// read-only control files: four for a repository one folder down).
	maxRepoMounts = 64
)

// scanSkip names directories the blacklist scan does not descend into:
// dependency trees are large and hold no user secrets. Repositories are
// looked for, and directories watched, inside all but .git all the same
// (scanDeps): host git status runs git in any gitlink of the index.
var scanSkip = map[string]bool{"node_modules": true, ".git": true, ".hg": true, ".svn": true}

// errNoBwrap is the fail-closed refusal when bubblewrap is missing.
var errNoBwrap = errors.New("bwrap is required to sandbox commands on Linux: install bubblewrap (for example `apt-get install bubblewrap`), or turn the sandbox off with \"enabled\": false in sandbox.json")

// mountPlan is the policy turned into concrete paths on this machine.
type mountPlan struct {
	writable  []string // existing whitelisted paths, bound read-write
	readonly  []string // existing whitelisted paths in ReadOnly mode
	missing   []string // whitelist entries that do not exist (skipped)
	protect   []string // read-only inside writable roots (.git/hooks, .git/config)
	pin       []string // bound onto themselves (read-write) so they cannot be renamed or replaced
	gitWatch  []string // git control files that must not appear (removed after each command)
	hideDirs  []string
	hideFiles []string
	truncated bool                                // the glob scan hit its bound
	unmounted []string                            // repositories past the mount budget (repoguard.Watch.Unmounted)
	watch     *repoguard.Watch                    // finds repositories commands create in the writable roots
	read      func(string) ([]fs.DirEntry, error) // how the scan reads a folder, valid until its next call (dirCache.read)
}

// planMounts resolves the policy against the filesystem. env supplies
// SSH_AUTH_SOCK and XDG_RUNTIME_DIR, whose sockets are hidden.
func planMounts(p Policy, env []string) mountPlan { return planMountsRead(p, env, readDirSorted) }

// planMountsRead is planMounts reading the folders it scans with read
// (the scan cache's).
func planMountsRead(p Policy, env []string, read func(string) ([]fs.DirEntry, error)) mountPlan {
	mp := mountPlan{watch: repoguard.NewWatch(), read: read}
	rules := compileRules(p.Blacklist, p.Home)
	for _, w := range normalizeDirs(p.Whitelist, p.Home) {
		if _, ok := matchRules(rules, w); ok {
			// Hidden all the same; binding it first would only make the
			// hiding mount fail (bwrap cannot create a file in a hidden,
			// read-only directory) and no command could run at all.
			continue
		}
		if !exists(w) {
			mp.missing = append(mp.missing, w)
			continue
		}
		if p.ReadOnly {
			// The root is read-only already; binding it would only hide the
			// private /tmp.
			if w == "/" {
				continue
			}
			mp.readonly = append(mp.readonly, w)
			continue
		}
		mp.writable = append(mp.writable, w)
	}
	// Scan in policy order (workspace first) so the bounded scan spends its
	// budget on the project before a large temp dir.
	scanOrder := slices.Clone(mp.writable)
	mp.watch.SetRoots(mp.writable)
	// Parents before children so a nested bind is not covered by its parent.
	slices.SortStableFunc(mp.writable, func(a, b string) int { return len(a) - len(b) })
	slices.SortStableFunc(mp.readonly, func(a, b string) int { return len(a) - len(b) })

	hide := func(path string) {
		st, err := os.Stat(path)
		if err != nil {
			return
		}
		if st.IsDir() {
			if !slices.Contains(mp.hideDirs, path) {
				mp.hideDirs = append(mp.hideDirs, path)
			}
		} else if !slices.Contains(mp.hideFiles, path) {
			mp.hideFiles = append(mp.hideFiles, path)
		}
	}
	for _, r := range rules {
		if r.path != "" {
			hide(r.path)
			if real, err := filepath.EvalSymlinks(r.path); err == nil && real != r.path {
				hide(real)
			}
		}
	}
	for _, s := range []string{envValue(env, "SSH_AUTH_SOCK"), envValue(env, "XDG_RUNTIME_DIR")} {
		if s != "" && filepath.IsAbs(s) && !within(s, "/run") {
			hide(filepath.Clean(s))
		}
	}

	if !p.ReadOnly {
		for _, pr := range normalizeDirs(p.Protect, p.Home) {
			if !slices.ContainsFunc(mp.writable, func(w string) bool { return within(pr, w) }) {
				continue // outside every writable root: read-only already
			}
			if !exists(pr) {
				// Created so that it can be mounted read-only: a missing one
				// could be created and filled from inside.
				_ = os.MkdirAll(pr, 0o755)
			}
			if exists(pr) && !slices.Contains(mp.protect, pr) {
				mp.protect = append(mp.protect, pr)
			}
		}
	}

	if p.TempDir != "" && !p.ReadOnly {
		prepareTmpMountPoints(p.TempDir, append(slices.Clone(mp.writable), mp.readonly...))
	}
	budget := maxScanEntries
	for _, root := range scanOrder {
		// The private temp directory is not scanned: git on the host is
		// never pointed at it, and it is removed when the session ends.
		mp.scan(root, rules, &budget, hide, true, true)
	}
	for _, root := range mp.readonly {
		mp.scan(root, rules, &budget, hide, false, false)
	}
	return mp
}

// scan walks one root within the bounds, hiding blacklisted entries and
// sockets and protecting git metadata. A read-only root needs no protection
// and is left exactly as it is (no hooks directory is created in it).
func (mp *mountPlan) scan(root string, rules []rule, budget *int, hide func(string), writable, mkHooks bool) {
	add := func(list *[]string, p string) {
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	// A repository costs bubblewrap a few mounts, and each mount more than
	// the one before (it reads the whole mount table after each): past
	// maxRepoMounts, the shallowest repositories having taken them, a
	// repository is the watch's to guard instead (repoguard.Watch.Unmounted).
	mountsLeft := func(path string) bool {
		if len(mp.pin)+len(mp.protect) < maxRepoMounts {
			return true
		}
		mp.watch.Unmounted(path)
		if !slices.Contains(mp.unmounted, path) {
			mp.unmounted = append(mp.unmounted, path)
		}
		return false
	}
	protectGit := func(gitPath string, isDir bool) {
		if !writable || !mountsLeft(gitPath) {
			return
		}
		mp.watch.MarkKnown(gitPath)
		// Git on the host would run hooks just as well from a .git put in
		// place of this one, or from one a worktree's .git file is pointed
		// at: a .git directory and the directories above it (up to the
		// root) are mount points, which cannot be renamed, and a .git file
		// is read-only.
		if isDir {
			add(&mp.pin, gitPath)
		} else {
			add(&mp.protect, gitPath)
		}
		for d := filepath.Dir(gitPath); d != root && within(d, root); d = filepath.Dir(d) {
			add(&mp.pin, d)
		}
		common := gitPath
		if !isDir {
			common = gitCommonDir(gitPath)
			if common == "" {
				return
			}
		}
		mp.protectGitDir(common, mkHooks, 0)
		mp.protectConfigPaths(common, filepath.Dir(gitPath))
	}
	protectHg := func(hgPath string) {
		if !writable || !mountsLeft(hgPath) {
			return
		}
		// As for .git: the .hg directory and those above it are mount
		// points (not renamed or replaced), its existing control files
		// read-only, and one that appears is removed after the command.
		add(&mp.pin, hgPath)
		for d := filepath.Dir(hgPath); d != root && within(d, root); d = filepath.Dir(d) {
			add(&mp.pin, d)
		}
		for _, name := range repoguard.HgControlFiles {
			p := filepath.Join(hgPath, name)
			if exists(p) {
				add(&mp.protect, p)
			} else {
				add(&mp.gitWatch, p)
			}
		}
		mp.protectNamed(repoguard.HgNamedPaths(hgPath, filepath.Dir(hgPath)))
		mp.watch.MarkKnown(hgPath)
	}
	if st, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		protectGit(filepath.Join(root, ".git"), st.IsDir())
	}
	if st, err := os.Lstat(root); err != nil || !st.IsDir() {
		return
	}
	if writable {
		mp.watch.Remember(root)
	}
	// The queue holds no more folders than are read: one past it would
	// not be read, nor watched (the watch's table is as long).
	queue, deps := []string{root}, []string(nil)
	var buf []byte
	for i := 0; i < len(queue); i++ {
		if *budget <= 0 {
			mp.truncated = true
			if writable {
				mp.watch.MarkUnseen()
			}
			break
		}
		dir := queue[i]
		ents, err := mp.read(dir)
		if err != nil {
			continue
		}
		for _, d := range ents {
			*budget--
			name := d.Name()
			buf = append(append(append(buf[:0], dir...), '/'), name...)
			if len(dir) == 1 {
				buf = buf[1:] // the root, /
			}
			// A view of buf for the rules, made a string only when kept:
			// most entries are not.
			view := unsafe.String(unsafe.SliceData(buf), len(buf))
			// Every folder above it below the root was matched before it
			// was queued (the root itself is never one a rule covers:
			// planMountsRead skips it).
			if _, ok := matchEntry(rules, view, name); ok || d.Type()&fs.ModeSocket != 0 {
				hide(string(buf))
				continue
			}
			switch {
			case !d.IsDir():
				if name == ".git" {
					protectGit(string(buf), false)
				}
				continue
			case name == ".git":
				protectGit(string(buf), true)
				continue
			case name == ".hg":
				protectHg(string(buf))
			}
			if scanSkip[name] {
				if writable {
					deps = append(deps, string(buf))
				}
				continue
			}
			if len(queue) >= maxScanFolders {
				mp.truncated = true
				if writable {
					mp.watch.MarkUnseen()
				}
				continue
			}
			path := string(buf)
			queue = append(queue, path)
			if writable {
				mp.watch.Remember(path)
			}
		}
	}
	mp.scanDeps(deps, protectGit, protectHg)
}

// scanDeps reads, breadth-first and up to maxDepFolders, the dependency
// trees the blacklist scan skips (node_modules, .hg, .svn), for their
// repositories and folders to watch: a command could plant a hook in an
// existing repository there, and host git status runs git in a gitlink
// of the index wherever it points. Past the bound the sweep covers them.
func (mp *mountPlan) scanDeps(queue []string, protectGit func(string, bool), protectHg func(string)) {
	for _, d := range queue {
		mp.watch.Remember(d)
	}
	for i := 0; i < len(queue); i++ {
		dir := queue[i]
		ents, err := mp.read(dir)
		if err != nil {
			continue
		}
		for _, d := range ents {
			switch {
			case d.Name() == ".git":
				protectGit(filepath.Join(dir, d.Name()), d.IsDir())
				continue
			case !d.IsDir():
				continue
			case len(queue) >= maxDepFolders:
				mp.watch.MarkUnseen()
				continue
			}
			path := filepath.Join(dir, d.Name())
			if d.Name() == ".hg" {
				protectHg(path)
			}
			queue = append(queue, path)
			mp.watch.Remember(path)
		}
	}
}

// gitControlFiles are the files of a git directory that make git on the
// host run code or take its configuration, hooks or objects from elsewhere.
// An existing one is mounted read-only; a missing one cannot be mounted over
// (bubblewrap binds only what exists, and git refuses an empty commondir),
// so one that appears is removed after each command (revertGit).
var gitControlFiles = []string{"config", "config.worktree", "commondir", filepath.Join("objects", "info", "alternates")}

// maxGitNesting bounds how deep submodule git directories (modules/*) are
// followed inside a git directory, and maxModuleDepth how deep a
// submodule's name (which may hold slashes) is looked for under modules/.
const (
	maxGitNesting  = 4
	maxModuleDepth = 6
)

// protectGitDir keeps one git directory's control files and hooks
// read-only, then does the same for its linked worktrees' admin
// directories (worktrees/*) and its submodules' git directories (modules/…).
func (mp *mountPlan) protectGitDir(dir string, mkHooks bool, depth int) {
	add := func(list *[]string, p string) {
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	mp.watch.Baseline(dir)
	hooks := filepath.Join(dir, "hooks")
	if !exists(hooks) && mkHooks {
		// A missing hooks directory could be created and filled from
		// inside; create it (as git init would) so it can be mounted over.
		_ = os.Mkdir(hooks, 0o755)
	}
	if exists(hooks) {
		add(&mp.protect, hooks)
	}
	for _, name := range gitControlFiles {
		p := filepath.Join(dir, name)
		if exists(p) {
			add(&mp.protect, p)
		} else {
			add(&mp.gitWatch, p)
		}
	}
	if wts, err := repoguard.ReadDirNoBlock(filepath.Join(dir, "worktrees")); err == nil {
		for _, wt := range wts {
			if !wt.IsDir() {
				continue
			}
			// A worktree's admin directory: its commondir and gitdir say
			// where the repository and the checkout are.
			admin := filepath.Join(dir, "worktrees", wt.Name())
			mp.watch.Baseline(admin) // a linked worktree's own rebase
			for _, name := range []string{"commondir", "gitdir", "config.worktree"} {
				p := filepath.Join(admin, name)
				if exists(p) {
					add(&mp.protect, p)
				} else if name != "gitdir" {
					add(&mp.gitWatch, p)
				}
			}
		}
	}
	if depth >= maxGitNesting {
		return
	}
	// Submodules' git directories sit under modules/, named by the
	// submodule's name, which may contain slashes: any directory there
	// holding a HEAD is one.
	modules := filepath.Join(dir, "modules")
	if !exists(modules) {
		return
	}
	_ = filepath.WalkDir(modules, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == modules {
			return nil
		}
		if strings.Count(path[len(modules):], "/") > maxModuleDepth {
			return fs.SkipDir
		}
		if st, err := os.Lstat(filepath.Join(path, "HEAD")); err == nil && st.Mode().IsRegular() {
			mp.protectGitDir(path, mkHooks, depth+1)
			return fs.SkipDir
		}
		return nil
	})
}

// configPathKeys are the keys (section.key, lower case) whose value names
// a file or folder git reads configuration or hooks from; the value of a
// dangerousKeys key is a command, whose first word may be a path.
var configPathKeys = map[string]bool{"include.path": true, "includeif.path": true, "core.hookspath": true}

// protectConfigPaths keeps read-only what the config of the git directory
// dir (an existing repository's, read-only itself) names inside a writable
// root: core.hooksPath = .husky/_ (husky; a folder git ignores, so a change
// there does not even show in git status), include.path = ../shared.cfg,
// core.fsmonitor = ./tools/fsmon.sh. A command could rewrite them, and
// git on the host would run the result. An existing one is mounted
// read-only with the folders above it pinned (as for .git); a missing one
// is removed when it appears (revertGit). A symlink there is left (a mount
// would land on its target, and the link itself stays replaceable).
func (mp *mountPlan) protectConfigPaths(dir, worktree string) {
	mp.protectNamed(configNamedPaths(dir, worktree))
}

// protectNamed keeps read-only the paths a repository's configuration
// names that lie in a writable root (see protectConfigPaths).
func (mp *mountPlan) protectNamed(paths []string) {
	add := func(list *[]string, p string) {
		if !slices.Contains(*list, p) {
			*list = append(*list, p)
		}
	}
	for _, p := range paths {
		root := mp.watch.RootOf(p)
		if root == "" || p == root || slices.ContainsFunc(mp.protect, func(q string) bool { return within(p, q) }) {
			continue
		}
		st, err := os.Lstat(p)
		switch {
		case err != nil:
			add(&mp.gitWatch, p)
		case st.Mode()&fs.ModeSymlink != 0:
		default:
			add(&mp.protect, p)
			for d := filepath.Dir(p); d != root && within(d, root); d = filepath.Dir(d) {
				add(&mp.pin, d)
			}
		}
	}
}

// configNamedPaths lists the files and folders (clean, absolute) the
// config and config.worktree of the git directory dir name, whose
// worktree is worktree: include paths, core.hooksPath, and the program of
// each command-valued key when it is a path rather than a name.
func configNamedPaths(dir, worktree string) []string {
	var out []string
	for _, cfg := range []string{filepath.Join(dir, "config"), filepath.Join(dir, "config.worktree")} {
		for _, e := range gitConfigEntries(cfg) {
			name := e.section + "." + e.key
			var p string
			switch {
			case configPathKeys[name]:
				p = e.value
				if !filepath.IsAbs(p) && name != "core.hookspath" {
					p = filepath.Join(filepath.Dir(cfg), p) // git: relative to the including file
				}
			case repoguard.DangerousKeys[e.key] && e.key != "worktree":
				fields := strings.Fields(strings.TrimPrefix(e.value, "!"))
				if len(fields) == 0 || !strings.Contains(fields[0], "/") {
					continue // a program looked up in PATH
				}
				p = strings.Trim(fields[0], `"'`)
			default:
				continue
			}
			if p == "" || strings.HasPrefix(p, "~") {
				continue
			}
			if !filepath.IsAbs(p) {
				p = filepath.Join(worktree, p) // hooks and commands run at the worktree's top
			}
			// A value naming the worktree itself or a folder above it (a
			// hooksPath of ".") would make the whole worktree read-only.
			if p = filepath.Clean(p); !within(worktree, p) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// gitConfigEntry is one setting of a git config file.
type gitConfigEntry struct{ section, key, value string }

// gitConfigEntries reads the settings of a config file (lower-case
// section and key names, the value unquoted), for the paths it names.
func gitConfigEntries(path string) []gitConfigEntry {
	b, err := repoguard.ReadControlFile(path)
	if err != nil {
		return nil
	}
	var out []gitConfigEntry
	section := ""
	for _, line := range strings.Split(string(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))), "\n") {
		line = strings.TrimSpace(line)
		for strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return out
			}
			name := strings.TrimSpace(line[1:end])
			name, _, _ = strings.Cut(name, " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(name)
			line = strings.TrimSpace(line[end+1:])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, val, _ := strings.Cut(line, "=")
		val = strings.TrimSpace(val)
		if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
			val = val[1 : len(val)-1]
		}
		out = append(out, gitConfigEntry{section, strings.ToLower(strings.TrimSpace(key)), val})
	}
	return out
}

// gitCommonDir reads a `.git` file (worktree or submodule) as git does and
// returns the repository directory that holds hooks and config ("" when
// it names none, or names it in a way git and this reader could take
// differently: gitDanger reports those).
func gitCommonDir(gitFile string) string {
	target, odd := repoguard.GitfileTarget(gitFile)
	if odd != "" || target == "" {
		return ""
	}
	common, odd := repoguard.CommonDirOf(target)
	if odd != "" {
		return ""
	}
	// The real path: a mount point names no symlink, and l/../r is
	// resolved through l as git does.
	if real, err := filepath.EvalSymlinks(common); err == nil {
		return real
	}
	return filepath.Clean(common)
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// bwrapArgs turns a plan into the bubblewrap command line (without the
// program to run). emptyFile is an empty read-only regular file mounted over
// hidden files (/dev/null when empty).
func bwrapArgs(bwrap string, p Policy, mp mountPlan, opts WrapOptions, emptyFile string) []string {
	a := []string{bwrap,
		"--die-with-parent",
		"--unshare-all",
	}
	if p.AllowNetwork {
		a = append(a, "--share-net")
	}
	if !opts.AllowTTY {
		// A new session has no controlling terminal: TIOCSTI cannot push
		// keystrokes into the user's terminal.
		a = append(a, "--new-session")
	}
	a = append(a, "--cap-drop", "ALL",
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		// Host daemons' sockets (systemd, dbus, docker, user agents) live
		// under /run; a root process could ask them to run things outside.
		"--tmpfs", "/run",
	)
	if st, err := os.Lstat("/var/run"); err == nil && st.IsDir() {
		a = append(a, "--tmpfs", "/var/run")
	}
	if p.AllowNetwork && exists("/run/systemd/resolve") {
		a = append(a, "--ro-bind", "/run/systemd/resolve", "/run/systemd/resolve")
	}
	switch {
	case p.ReadOnly:
		// A private scratch /tmp before the binds: a workspace under the
		// host /tmp is bound (read-only) on top of it and stays visible.
		a = append(a, "--perms", "01777", "--tmpfs", PrivateTmp, "--setenv", "TMPDIR", PrivateTmp)
	case p.TempDir != "":
		// The session's private temp directory in place of the host's,
		// whose other users' files and repositories are out of reach; a
		// workspace under the host /tmp is bound on top and stays visible.
		a = append(a, "--bind", p.TempDir, PrivateTmp, "--setenv", "TMPDIR", PrivateTmp)
	}
	for _, r := range mp.readonly {
		a = append(a, "--ro-bind", r, r)
	}
	if p.TempDir != "" && !p.ReadOnly {
		// Host paths under /tmp that must stay visible over the private
		// /tmp: the agent's own configuration and the extension being run.
		var back, points []string
		for _, v := range slices.Concat(opts.Visible, p.Visible, normalizeDirs(p.Protect, p.Home)) {
			v = filepath.Clean(v)
			if within(v, PrivateTmp) && v != PrivateTmp && exists(v) &&
				!slices.ContainsFunc(mp.writable, func(w string) bool { return within(v, w) }) && !slices.Contains(back, v) {
				back = append(back, v)
				if st, err := os.Stat(v); err == nil && !st.IsDir() {
					v = filepath.Dir(v) // bwrap creates the file's mount point itself
				}
				points = append(points, v)
			}
		}
		prepareTmpMountPoints(p.TempDir, points)
		for _, v := range back {
			a = append(a, "--ro-bind", v, v)
		}
	}
	a = append(a, writeBinds(mp)...)
	if emptyFile == "" {
		emptyFile = "/dev/null"
	}
	// What lies inside a hidden directory is hidden with it; mounting over
	// it again would fail (the empty tmpfs is read-only and lacks it).
	inHidden := func(p string) bool {
		return slices.ContainsFunc(mp.hideDirs, func(d string) bool { return d != p && within(p, d) })
	}
	for _, d := range mp.hideDirs {
		if !inHidden(d) {
			a = append(a, "--tmpfs", d, "--remount-ro", d)
		}
	}
	for _, f := range mp.hideFiles {
		if !inHidden(f) {
			a = append(a, "--ro-bind", emptyFile, f)
		}
	}
	for _, kv := range opts.ExtraEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			a = append(a, "--setenv", k, v)
		}
	}
	if opts.Cwd != "" {
		a = append(a, "--chdir", opts.Cwd)
	}
	return append(a, "--")
}

// lookBwrap finds bwrap with look (exec.LookPath when nil).
func lookBwrap(look func(string) (string, error)) (string, error) {
	if look == nil {
		look = exec.LookPath
	}
	path, err := look("bwrap")
	if err != nil {
		return "", fmt.Errorf("%w (%v)", errNoBwrap, err)
	}
	return path, nil
}

// writeBinds binds the writable roots read-write and the protected paths
// read-only, shallowest first, so that the most specific entry wins: a
// protected directory inside a writable root is read-only, a writable root
// inside a protected directory is writable again. At equal paths the
// protection comes last and wins.
func writeBinds(mp mountPlan) []string {
	type bind struct {
		path string
		ro   bool
	}
	var binds []bind
	for _, w := range mp.writable {
		binds = append(binds, bind{w, false})
	}
	for _, p := range mp.pin {
		binds = append(binds, bind{p, false})
	}
	for _, pr := range mp.protect {
		binds = append(binds, bind{pr, true})
	}
	slices.SortStableFunc(binds, func(a, b bind) int { return len(a.path) - len(b.path) })
	var a []string
	for _, b := range binds {
		if b.ro {
			a = append(a, "--ro-bind", b.path, b.path)
		} else {
			a = append(a, "--bind", b.path, b.path)
		}
	}
	return a
}
