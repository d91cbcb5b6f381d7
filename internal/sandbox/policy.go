package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// Policy is what a sandboxed process may do. Paths are absolute host paths.
type Policy struct {
	// Whitelist lists the directories (or files) the process may write.
	// Everything else is read-only.
	Whitelist []string `json:"whitelist"`
	// Blacklist lists paths and globs (`**/.env`, `~/.ssh`) the process may
	// neither read nor write. `~` is expanded with Home.
	Blacklist []string `json:"blacklist"`
	// AllowNetwork keeps the host network; otherwise the process gets a
	// network namespace with only its own loopback.
	AllowNetwork bool `json:"allowNetwork"`
	// ReadOnly mounts every whitelisted path read-only too (explore
	// sub-agents), and gives the process a private, empty tmpfs at /tmp
	// (TMPDIR=/tmp) in place of the host's: nothing of the host is writable,
	// not even a project that lives under the host temp directory.
	ReadOnly bool `json:"readOnly,omitempty"`
	// TempDir is the session's private temp directory on the host, mounted
	// as /tmp (TMPDIR=/tmp) and writable inside a bubblewrap sandbox; a
	// ReadOnly sandbox has none (a tmpfs instead). Under Seatbelt it is the
	// host temp directory, in Whitelist.
	TempDir string `json:"tempDir,omitempty"`
	// Visible lists host directories under /tmp that commands may read at
	// their own path although the private temp directory is mounted over
	// /tmp (the agent's scratch directory of cut outputs): bound read-only,
	// and not mapped by HostPath.
	Visible []string `json:"visible,omitempty"`
	// Home expands `~` in blacklist entries.
	Home string `json:"home,omitempty"`
	// Protect lists directories kept read-only even inside writable roots
	// (the agent's own configuration, $SYNAPSE_HOME). A writable root
	// deeper than a protected directory is writable again: the most
	// specific entry wins, and a protected one wins a tie.
	Protect []string `json:"protect,omitempty"`
}

// PrivateTmp is where a sandbox mounts its private temp directory (a
// ReadOnly one: an empty tmpfs).
const PrivateTmp = "/tmp"

// readOnlyReason explains a refused write in a ReadOnly sandbox.
const readOnlyReason = "this agent's sandbox is read-only: it cannot create, change or delete files anywhere on the host"

// DefaultBlacklist is always part of the blacklist; sandbox.json entries add to
// it and cannot remove from it.
var defaultBlacklist = []string{
	"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure",
	"/etc/shadow",
	"**/.env", "**/.envrc", "**/.env.local", "**/credentials.json", "**/secrets.json",
}

// DefaultBlacklist returns a copy of the built-in blacklist.
func DefaultBlacklist() []string { return slices.Clone(defaultBlacklist) }

// isGlob reports whether a blacklist entry is a pattern rather than a path.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// expandHome turns `~` and `~/x` into paths under home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// rule is one compiled blacklist entry.
type rule struct {
	entry string         // as configured (`~/.ssh`, `**/.env`)
	path  string         // expanded absolute path for literal entries
	re    *regexp.Regexp // for glob entries, anchored, over absolute paths
	// name is set for `**/<one component>` entries (most of them): the
	// path matches when one of its components does, which is what re
	// says, without running re over the whole path. nameRe is that
	// component's own regex when it holds wildcards; name stays literal
	// otherwise. The scan checks tens of thousands of paths with these.
	name   string
	nameRe *regexp.Regexp
}

// compileRules turns blacklist entries into matchers. Relative literal
// entries and patterns without a leading `/` or `**` match anywhere.
func compileRules(entries []string, home string) []rule {
	var out []rule
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		x := expandHome(e, home)
		if !isGlob(x) {
			if !filepath.IsAbs(x) {
				x = "**/" + x
			} else {
				out = append(out, rule{entry: e, path: filepath.Clean(x)})
				continue
			}
		}
		if !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, "**") {
			x = "**/" + x
		}
		re, err := regexp.Compile(globRegex(x))
		if err != nil {
			continue // globRegex quotes everything it does not translate
		}
		r := rule{entry: e, re: re}
		if c, ok := strings.CutPrefix(x, "**/"); ok && c != "" && !strings.Contains(c, "/") && !strings.Contains(c, "**") {
			r.name = c
			if isGlob(c) {
				// globRegex of a bare component: anchored, plus a
				// "(/.*)?" tail that a component never needs.
				r.nameRe, _ = regexp.Compile(strings.TrimSuffix(globRegex(c), "(/.*)?$") + "$")
			}
		}
		out = append(out, r)
	}
	return out
}

// matchName reports whether a component of abs matches r.name.
func (r rule) matchName(abs string) bool {
	for rest := abs; rest != ""; {
		var c string
		c, rest, _ = strings.Cut(rest, "/")
		if c != "" && r.matchComponent(c) {
			return true
		}
	}
	return false
}

// matchComponent reports whether one path component is the rule's name.
func (r rule) matchComponent(c string) bool {
	if r.nameRe != nil {
		return r.nameRe.MatchString(c)
	}
	return c == r.name
}

// globRegex translates a path glob into an anchored regular expression over
// absolute paths: `**/` is any number of directories, `*` and `?` stay within
// one path component, `[...]` is a class. The same text feeds the macOS
// profile's regex rules. A match also covers everything below the matched path.
func globRegex(g string) string {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			if i == 0 {
				b.WriteString("(/.*)?/")
			} else {
				b.WriteString("(.*/)?")
			}
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(/.*)?$")
	return b.String()
}

// matchRules returns the entry of the first rule covering abs (the path
// itself or one of its parents).
func matchRules(rules []rule, abs string) (string, bool) { return firstMatch(rules, abs, "") }

// matchEntry is matchRules for the entry name at abs in a walk whose
// folders above abs were matched already (none was hidden, or the walk
// would not be below it): a rule on one name then needs only the last
// component, not every component again (the scan's cost per entry).
func matchEntry(rules []rule, abs, name string) (string, bool) { return firstMatch(rules, abs, name) }

// firstMatch is matchRules, and matchEntry when last is not "".
func firstMatch(rules []rule, abs, last string) (string, bool) {
	for _, r := range rules {
		var ok bool
		switch {
		case r.name != "" && last != "":
			ok = r.matchComponent(last)
		case r.name != "":
			ok = r.matchName(abs)
		case r.re != nil:
			ok = r.re.MatchString(abs)
		default:
			ok = within(abs, r.path)
		}
		if ok {
			return r.entry, true
		}
	}
	return "", false
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	// Not HasPrefix(p, root+"/"): no string is made per call (the scan
	// asks once per entry and rule).
	return len(p) > len(root) && p[len(root)] == '/' && strings.HasPrefix(p, root)
}

// resolvePath makes p absolute (against cwd, with `~` expanded) and resolves
// symlinks in its longest existing prefix, so a link planted in the workspace
// is judged by where it points.
func resolvePath(p, cwd, home string) string {
	p = expandHome(p, home)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	var rest []string
	cur := p
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// Check reports whether the policy forbids reading (write=false) or writing
// path, which must already be absolute and resolved. It does not consult the
// filesystem.
func (p Policy) check(path string, write bool, rules []rule) (blocked bool, reason, resource string) {
	if entry, ok := matchRules(rules, path); ok {
		return true, "path is on the sandbox blacklist (" + entry + ")", entry
	}
	if !write {
		return false, "", ""
	}
	if p.ReadOnly {
		// The private /tmp lives only inside the sandbox; in-process file
		// commands act on the host, where nothing is writable.
		return true, readOnlyReason, path
	}
	root := ""
	if p.TempDir != "" && within(path, p.TempDir) {
		root = p.TempDir
	}
	for _, w := range p.Whitelist {
		if within(path, w) && (root == "" || len(w) > len(root)) {
			root = w
		}
	}
	if root == "" {
		return true, outsideReason, path
	}
	if gitProtected(path) {
		return true, gitProtectedReason, path
	}
	if d := bareRepoWrite(path, root); d != "" {
		return true, bareRepoReason, d
	}
	if named := configNamedWrite(path, root); named != "" {
		return true, configNamedReason, named
	}
	for _, pr := range p.Protect {
		if within(path, pr) && len(pr) >= len(root) {
			return true, protectedReason, path
		}
	}
	return false, "", ""
}

// Reasons for refused writes.
const (
	outsideReason      = "path is outside the sandbox write whitelist"
	protectedReason    = "this is the agent's own configuration ($SYNAPSE_HOME), read-only to the commands it runs (a change there could widen the agent's permissions); ask the user to make this change"
	bareRepoReason     = "this would make the folder a git repository to host git (a HEAD with objects and refs is a bare repository, found before the .git above it), and its config or hooks could run code outside the sandbox; use git init, or ask the user to make this change"
	configNamedReason  = "the config of the git or Mercurial repository this file is in names it (core.hooksPath, include.path, %include, a hook, an extension, or a program such as core.fsmonitor): git or hg on the host would run or read what is written here, so it is read-only inside the sandbox like the repository's hooks; ask the user to make this change"
	gitProtectedReason = "git and Mercurial control files (.git files, hooks, config, config.worktree, commondir, objects/info/alternates, modules/, worktrees/, rebase and cherry-pick state; .hg/hgrc, hgrc-not-shared, sharedpath) are read-only inside the sandbox, even in the project (a change there could run code outside it); ask the user to make this change"
)

// gitProtected reports whether p is a git control file: a `.git` file (it
// points git at another directory), or in a .git directory the config
// files, commondir, hooks, objects/info/alternates, and everything of its
// submodules' (modules/) and linked worktrees' (worktrees/) git
// directories, the rebase and cherry-pick state (its todo list's exec lines
// run on the next --continue); and Mercurial's .hg/hgrc, hgrc-not-shared and sharedpath.
// The sandbox mounts the existing ones read-only and removes new ones after
// each command; in-process writes are refused outright.
func gitProtected(p string) bool {
	if filepath.Base(p) == ".git" {
		return true
	}
	if i := strings.LastIndex(p, "/.hg/"); i >= 0 && slices.Contains(repoguard.HgControlFiles, p[i+len("/.hg/"):]) {
		return true // Mercurial reads hgrc on every command (see repoguard.HgControlFiles)
	}
	i := strings.LastIndex(p, "/.git/")
	if i < 0 {
		return false
	}
	rest := p[i+len("/.git/"):]
	first, _, _ := strings.Cut(rest, "/")
	switch first {
	case "config", "config.worktree", "commondir", "hooks", "modules", "worktrees", "rebase-merge", "rebase-apply", "sequencer":
		return true
	}
	return rest == "objects/info/alternates" || rest == "objects/info/http-alternates"
}

// configNamedWrite returns what a git repository's config names (see
// configNamedPaths) that path is, or is inside, for each repository whose
// worktree holds path (the folders from path up to root that have a
// .git); "" when none. The sandbox mounts these read-only; write and edit
// run on the host, also before any sandbox exists.
func configNamedWrite(path, root string) string {
	for d := filepath.Dir(path); within(d, root); d = filepath.Dir(d) {
		gitPath := filepath.Join(d, ".git")
		if st, err := os.Lstat(gitPath); err == nil {
			common := gitPath
			if !st.IsDir() {
				common = gitCommonDir(gitPath)
			}
			if common != "" {
				for _, named := range configNamedPaths(common, d) {
					if within(path, named) && named != root {
						return named
					}
				}
			}
		}
		if st, err := os.Lstat(filepath.Join(d, ".hg")); err == nil && st.IsDir() {
			for _, named := range repoguard.HgNamedPaths(filepath.Join(d, ".hg"), d) {
				if within(path, named) && named != root {
					return named
				}
			}
		}
		if d == root || d == "/" {
			break
		}
	}
	return ""
}

// bareRepoWrite returns the folder (path or one above it, up to root) that
// an in-process write of path would turn into, or write the control files
// of, a directory git takes for a bare repository; "" when none. Native
// commands are checked after they run (repoguard.Watch), but write and edit run
// on the host, also before the sandbox exists to watch anything.
func bareRepoWrite(path, root string) string {
	if strings.Contains(path, "/.git/") {
		return "" // a .git directory's control files: gitProtected
	}
	has := func(d, name string) bool { _, err := os.Lstat(filepath.Join(d, name)); return err == nil }
	for d := filepath.Dir(path); within(d, root); d = filepath.Dir(d) {
		rel, err := filepath.Rel(d, path)
		if err != nil {
			break
		}
		first, _, _ := strings.Cut(rel, "/")
		switch first {
		case "HEAD", "config", "config.worktree", "commondir", "hooks", "objects", "refs":
		default:
			if d == root {
				return ""
			}
			continue
		}
		head := has(d, "HEAD") || rel == "HEAD"
		parts := (has(d, "objects") || first == "objects") && (has(d, "refs") || first == "refs")
		if head && (parts || has(d, "commondir") || rel == "commondir") {
			return d
		}
		if d == root {
			break
		}
	}
	return ""
}

// Check resolves path against cwd (symlinks too) and reports whether the
// policy forbids the access.
func (p Policy) Check(path, cwd string, write bool) (blocked bool, reason, resource string) {
	abs := resolvePath(path, cwd, p.Home)
	rules := compileRules(p.Blacklist, p.Home)
	// The unresolved path matters too: `~/.ssh` may itself be a symlink.
	lit := filepath.Clean(expandHome(path, p.Home))
	if !filepath.IsAbs(lit) {
		lit = filepath.Join(cwd, lit)
	}
	if entry, ok := matchRules(rules, lit); ok {
		return true, "path is on the sandbox blacklist (" + entry + ")", entry
	}
	return p.check(abs, write, rules)
}

// normalizeDirs expands, absolutizes, resolves and de-duplicates paths,
// keeping order. Missing paths are kept as given (cleaned) so that the
// caller can report them.
func normalizeDirs(paths []string, home string) []string {
	var out []string
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		r := resolvePath(p, "/", home)
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// exists reports whether p exists (without following a final symlink).
func exists(p string) bool { _, err := os.Lstat(p); return err == nil }
