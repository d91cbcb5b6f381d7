//go:build linux

package repoguard

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The judges only the watcher (watch.go, Linux's) uses: new Mercurial
// repositories and rebase state that appeared while the sandbox ran.

// hgDanger says what in the .hg directory at p would make hg on the host
// run a program or read configuration from elsewhere; "" when nothing does.
// A clone's hgrc ([paths] only) is harmless.
func hgDanger(p string) string {
	st, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return "a .hg symlink points hg somewhere else"
	}
	if !st.IsDir() {
		return "" // hg takes only a directory for a repository
	}
	if _, err := os.Lstat(filepath.Join(p, "sharedpath")); err == nil {
		return "it has a sharedpath file (hg would read the configuration of the repository it names)"
	}
	for _, name := range []string{"hgrc", "hgrc-not-shared"} {
		if what := dangerousHgrc(filepath.Join(p, name)); what != "" {
			return "its " + name + " has " + what
		}
	}
	return ""
}

// hgSafeSections are the hgrc sections that run nothing and read no other
// file (a clone writes [paths]); every other section, and any %include,
// counts as dangerous: hooks, extensions, ui.ssh, merge-tools, aliases
// starting with `!`, pager and more all run programs.
var hgSafeSections = map[string]bool{"paths": true}

// dangerousHgrc returns what in the hgrc at path would run a program or
// read another file ("a [hooks] section", "an %include"), or "".
func dangerousHgrc(path string) string {
	b, err := ReadControlFile(path)
	switch {
	case os.IsNotExist(err):
		return ""
	case err != nil:
		return "a file that is not a regular file (" + err.Error() + ")"
	}
	section := ""
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "%"):
			return "an " + strings.Fields(line)[0] + " directive"
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return "a malformed section"
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			if !hgSafeSections[section] {
				return "a [" + section + "] section"
			}
		case section == "":
			return "a setting outside any section"
		}
	}
	return ""
}

// seqBaseline records what a git directory's rebase and sequencer state
// runs when the sandbox starts: the user's own rebase in progress (its
// exec lines included) is theirs, and stays.
func seqBaseline(gitDir string) map[string][]string {
	base := map[string][]string{}
	for _, s := range seqStates {
		if runs := stateRuns(filepath.Join(gitDir, s)); len(runs) > 0 {
			base[s] = runs
		}
	}
	return base
}

// seqDanger returns what in gitDir's rebase or sequencer state would run
// on the host that was not there at the start (base), by state.
func seqDanger(gitDir string, base map[string][]string) (state string, runs []string) {
	for _, s := range seqStates {
		var fresh []string
		for _, r := range stateRuns(filepath.Join(gitDir, s)) {
			if !slices.Contains(base[s], r) {
				fresh = append(fresh, r)
			}
		}
		if len(fresh) > 0 {
			return s, fresh
		}
	}
	return "", nil
}
