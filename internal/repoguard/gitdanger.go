package repoguard

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The judges of a git repository's control files: portable (the sandbox
// package reads them on every system), unlike the watcher of watch.go.

// DisabledMark names what disableRepo renamed aside.
const DisabledMark = ".synapse-disabled-"

// GitDanger says what in the repository at gitPath (a .git directory, a
// .git file naming one, or the HEAD of a directory git would take for a bare
// repository) would make git on the host run a program or take hooks,
// configuration or objects from elsewhere; "" when nothing does.
func GitDanger(gitPath string) string {
	typ, err := lstatType(gitPath)
	if err != nil {
		return ""
	}
	dir := gitPath
	switch {
	case filepath.Base(gitPath) == "HEAD":
		dir = filepath.Dir(gitPath)
		if !bareRepoShaped(dir) {
			return ""
		}
	case typ&fs.ModeSymlink != 0:
		return "a .git symlink points git somewhere else"
	case !typ.IsDir():
		target, odd := GitfileTarget(gitPath)
		if odd != "" {
			return odd
		}
		common, odd := CommonDirOf(target)
		if odd != "" {
			return odd
		}
		if common == "" {
			return ""
		}
		dir = common
		// A linked worktree's own config.worktree, in its admin folder
		// (read when the common config turns extensions.worktreeConfig on).
		if target != common {
			if key := dangerousGitConfig(filepath.Join(target, "config.worktree")); key != "" {
				return "its worktree's config.worktree sets " + key
			}
		}
	}
	for _, name := range []string{"commondir", "config.worktree", filepath.Join("objects", "info", "alternates")} {
		if _, err := lstatType(filepath.Join(dir, name)); err == nil {
			return "it has a " + name + " file"
		}
	}
	if typ, err := lstatType(filepath.Join(dir, "hooks")); err == nil && !typ.IsDir() {
		return "its hooks folder is a " + typ.String() + " (git would follow it)"
	}
	if ents, err := ReadDirNoBlock(filepath.Join(dir, "hooks")); err == nil {
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".sample") {
				return "it has a hook (" + e.Name() + ")"
			}
		}
	}
	if key := dangerousGitConfig(filepath.Join(dir, "config")); key != "" {
		return "its config sets " + key
	}
	// Rebase state: in the repository's own git directory (a worktree's
	// admin directory for a .git file) and the common one.
	for _, d := range []string{gitDirOf(gitPath), dir} {
		if d == "" {
			continue
		}
		for _, s := range seqStates {
			if runs := stateRuns(filepath.Join(d, s)); len(runs) > 0 {
				return "its " + s + " state would run " + strconv.Quote(strings.Join(runs, "; ")) + " at git rebase --continue or git cherry-pick --continue"
			}
		}
	}
	return ""
}

// gitDirOf is the git directory of a .git entry: the directory itself, or
// the one a .git file names (a linked worktree's admin directory); "" for
// a HEAD or when the file names none.
func gitDirOf(gitPath string) string {
	typ, err := lstatType(gitPath)
	if err != nil || filepath.Base(gitPath) != ".git" || typ&fs.ModeSymlink != 0 {
		return ""
	}
	if typ.IsDir() {
		return gitPath
	}
	d, odd := GitfileTarget(gitPath)
	if odd != "" {
		return ""
	}
	return d
}

// GitfileTarget reads a .git file as git does (read_gitfile): the whole
// file, its trailing newlines dropped, must start with "gitdir: "; the rest
// is the path, relative to the file's folder. It returns that path ("" when
// git would not take the file), or why the file is dangerous: one that
// cannot be read as a plain file (a FIFO would block), or whose path has
// a newline or white space at either end (where a reader that stops at
// the first line, or trims, would look at another folder than git).
func GitfileTarget(gitFile string) (dir, odd string) {
	b, err := ReadControlFile(gitFile)
	if os.IsNotExist(err) {
		return "", ""
	}
	if err != nil {
		return "", "its .git file cannot be read as git would (" + err.Error() + ")"
	}
	s := strings.TrimRight(string(b), "\r\n")
	d, ok := strings.CutPrefix(s, "gitdir: ")
	if !ok {
		return "", "" // not a gitfile to git: no repository
	}
	if d == "" || strings.ContainsAny(d, "\n\r\x00") || strings.TrimSpace(d) != d {
		return "", "its .git file names an odd path (" + strconv.Quote(d) + ")"
	}
	if !filepath.IsAbs(d) {
		d = filepath.Dir(gitFile) + "/" + d
	}
	return realDir(d), ""
}

// realDir resolves the symlinks of a path a .git or commondir file names,
// as git does when it goes there: l/../r is r next to the folder l points
// to, not next to l (filepath.Join and Clean would drop l/..). A path that
// does not resolve is returned as it is (git finds no repository there).
func realDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// CommonDirOf is the common git directory of the git directory dir: the
// one its commondir file names (as git reads it), or dir itself; odd says
// why the commondir file is dangerous to read otherwise than git does.
func CommonDirOf(dir string) (common, odd string) {
	b, err := ReadControlFile(filepath.Join(dir, "commondir"))
	if os.IsNotExist(err) {
		return dir, ""
	}
	if err != nil {
		return "", "its commondir cannot be read as git would (" + err.Error() + ")"
	}
	c := strings.TrimRight(string(b), "\r\n")
	if c == "" || strings.ContainsAny(c, "\n\r\x00") || strings.TrimSpace(c) != c {
		return "", "its commondir names an odd path (" + strconv.Quote(c) + ")"
	}
	if !filepath.IsAbs(c) {
		c = dir + "/" + c
	}
	return realDir(c), ""
}

// ReadDirNoBlock lists a directory without following a symlink at its
// end and without blocking on a FIFO put in its place.
func ReadDirNoBlock(p string) ([]fs.DirEntry, error) {
	fd, err := openDirNoBlock(p)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return readDirFD(fd, p)
}

// openDirNoBlock opens the folder p to list it: not through a symlink at
// its end, and not blocking on a FIFO put in its place.
func openDirNoBlock(p string) (int, error) {
	return unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
}

// gitSafeSections are the config sections a new repository may have and
// still be taken for harmless: what git init, git clone, git remote,
// git submodule and everyday settings write. Any other section counts as
// dangerous (include, includeIf, alias, filter, pager, credential, url,
// protocol, gpg, hook, interactive, difftool, mergetool, sendemail, imap,
// trailer, man, browser, web, guitool…): too many of their keys run a
// program for a list of those to stay complete.
var gitSafeSections = map[string]bool{
	"core": true, "user": true, "remote": true, "branch": true, "submodule": true, "init": true, "extensions": true,
	"pull": true, "push": true, "fetch": true, "merge": true, "diff": true, "color": true, "gc": true, "pack": true,
	"index": true, "advice": true, "status": true, "log": true, "commit": true, "tag": true, "rebase": true, "http": true,
	"lfs": true, "feature": true, "maintenance": true, "clone": true, "checkout": true, "transfer": true, "receive": true,
	"repack": true, "column": true, "format": true, "am": true, "apply": true, "rerere": true, "grep": true, "blame": true,
	"i18n": true, "worktree": true, "stash": true, "reset": true, "notes": true, "fsck": true, "versionsort": true,
}

// DangerousKeys are keys of those sections (the last part, lower case)
// whose value git runs as a program or treats as a path to more
// configuration, hooks or programs.
var DangerousKeys = map[string]bool{
	"fsmonitor": true, "hookspath": true, "sshcommand": true, "pager": true, "editor": true, "askpass": true,
	"gitproxy": true, "textconv": true, "command": true, "driver": true, "helper": true, "program": true,
	"external": true, "uploadpack": true, "receivepack": true, "packobjectshook": true,
	"alternaterefscommand": true, "worktree": true, "clean": true, "smudge": true, "process": true,
	"cmd": true, "vcs": true, "templatedir": true, "defaultkeycommand": true, "difffilter": true,
	"recentobjectshook": true, // gc.recentObjectsHook: run at gc and repack
	// http.cookieFile with http.saveCookies: git writes the cookie jar
	// there, any file the user's shell sources included.
	"cookiefile": true, "savecookies": true,
}

// dangerousGitConfig returns the first key of the config file at path that
// git would run or follow ("section.key"), or what else makes the file
// dangerous, or "". It reads the file as git's parser does where that
// matters: a UTF-8 byte-order mark is skipped, a header may follow another
// on one line, a line may be as long as git likes. A file that cannot be
// read whole as a plain file (a FIFO, a symlink, over maxControlFile)
// counts as dangerous, as does a key before any section.
func dangerousGitConfig(path string) string {
	b, err := ReadControlFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		return "config (" + err.Error() + ")"
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		for strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "a malformed section"
			}
			name := strings.TrimSpace(line[1:end])
			name, _, _ = strings.Cut(name, " ")
			name, _, _ = strings.Cut(name, ".")
			section = strings.ToLower(name)
			if !gitSafeSections[section] {
				return "a [" + section + "] section"
			}
			line = strings.TrimSpace(line[end+1:])
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if section == "" {
			return "a setting outside any section"
		}
		key, val, _ := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		val = strings.Trim(strings.TrimSpace(val), `"`)
		switch {
		case DangerousKeys[key]:
		case section == "submodule" && key == "update" && strings.HasPrefix(val, "!"):
		case section == "remote" && (key == "url" || key == "pushurl") && strings.HasPrefix(strings.ToLower(val), "ext::"):
		case section == "lfs" && key == "path": // lfs.customtransfer.<name>.path
		default:
			continue
		}
		return section + "." + key
	}
	return ""
}

// bareRepoShaped reports whether git would take dir (which holds a HEAD) for
// a repository: git's discovery looks for HEAD with objects and refs (or a
// commondir standing in for them) in each directory it climbs through.
func bareRepoShaped(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	_, errO := os.Lstat(filepath.Join(dir, "objects"))
	_, errR := os.Lstat(filepath.Join(dir, "refs"))
	return errO == nil && errR == nil
}
