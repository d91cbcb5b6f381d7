package repoguard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Mercurial reads a repository's .hg/hgrc on every command: its [hooks]
// run programs (pre-status runs on a plain `hg status`), its [extensions]
// load Python files, and %include pulls in any other file. hgrc-not-shared
// and sharedpath (a repository made by `hg share`) make hg read another
// repository's configuration. They are the Mercurial counterparts of git's
// control files: an existing one is mounted read-only, a missing one that
// appears is removed after the command, and in-process writes are refused.
var HgControlFiles = []string{"hgrc", "hgrc-not-shared", "sharedpath"}

// HgNamedPaths lists the files (clean, absolute) the hgrc and
// hgrc-not-shared of the .hg directory hgDir name, whose worktree is
// worktree: %include files (relative to the including file), and in any
// section but [paths] a value whose first word is a path: a hook script
// (python:file.py:func too), an extension's Python file, a merge tool,
// an editor. hg runs or loads each (see protectConfigPaths for git).
func HgNamedPaths(hgDir, worktree string) []string {
	var out []string
	addPath := func(p, rel string) {
		p = strings.Trim(p, `"'`)
		if p == "" || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") {
			return
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(rel, p)
		}
		if p = filepath.Clean(p); !within(worktree, p) && !slices.Contains(out, p) {
			out = append(out, p) // not the worktree or above: see configNamedPaths
		}
	}
	for _, name := range []string{"hgrc", "hgrc-not-shared"} {
		file := filepath.Join(hgDir, name)
		b, err := ReadControlFile(file)
		if err != nil {
			continue
		}
		section := ""
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || line[0] == ' ' || line[0] == '\t' {
				continue // a continuation line: part of the value above
			}
			line = strings.TrimSpace(line)
			switch {
			case line == "" || line[0] == '#' || line[0] == ';':
			case strings.HasPrefix(line, "%include"):
				addPath(strings.TrimSpace(strings.TrimPrefix(line, "%include")), filepath.Dir(file))
			case line[0] == '[':
				if end := strings.IndexByte(line, ']'); end > 0 {
					section = strings.ToLower(strings.TrimSpace(line[1:end]))
				}
			case section != "paths":
				_, val, ok := strings.Cut(line, "=")
				if !ok {
					continue
				}
				val = strings.TrimPrefix(strings.TrimSpace(val), "!")
				if py, ok := strings.CutPrefix(val, "python:"); ok {
					if i := strings.LastIndexByte(py, ':'); i > 0 {
						py = py[:i]
					}
					val = py
				}
				if fields := strings.Fields(val); len(fields) > 0 && strings.Contains(fields[0], "/") {
					addPath(fields[0], worktree)
				}
			}
		}
	}
	return out
}

// maxControlFile bounds what is read of a control or state file.
const maxControlFile = 16 << 20

// ReadControlFile reads a file a command could have planted: only a
// regular file, opened without following a link and without blocking on a
// FIFO, up to maxControlFile. A missing file is os.ErrNotExist.
func ReadControlFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot open it: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is a %s", st.Mode().Type())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxControlFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxControlFile {
		return nil, fmt.Errorf("it is larger than %d bytes", maxControlFile)
	}
	return b, nil
}

// seqStates are a git directory's rebase and cherry-pick state, which
// `git rebase --continue` and `git cherry-pick --continue` on the host
// carry on with: the todo list's exec lines run shell commands, and a
// merge strategy that is not git's own runs `git-merge-<name>` (a name
// with slashes is a path into the project).
var seqStates = []string{"rebase-merge", "rebase-apply", "sequencer"}

// builtinStrategies are the merge strategies git implements itself.
var builtinStrategies = map[string]bool{"ort": true, "recursive": true, "resolve": true, "octopus": true, "ours": true, "subtree": true}

// stateRuns lists what the rebase or sequencer state at dir would make
// git on the host run ("exec make test", "merge strategy ../evil"); a state
// that is not a plain directory of plain files is one item itself. nil when
// there is no state or it runs nothing.
func stateRuns(dir string) []string {
	typ, err := lstatType(dir)
	if err != nil {
		return nil
	}
	if !typ.IsDir() {
		return []string{filepath.Base(dir) + " is not a directory (git would follow it)"}
	}
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, todo := range []string{"git-rebase-todo", "todo"} {
		b, err := ReadControlFile(filepath.Join(dir, todo))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			add(todo + ": " + err.Error())
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			word, rest, _ := strings.Cut(line, " ")
			if word == "exec" || word == "x" {
				add("exec " + strings.TrimSpace(rest))
			}
		}
	}
	if b, err := ReadControlFile(filepath.Join(dir, "strategy")); err == nil {
		if s := strings.TrimSpace(string(b)); s != "" && !builtinStrategies[s] {
			add("merge strategy " + s)
		}
	} else if !os.IsNotExist(err) {
		add("strategy: " + err.Error())
	}
	if b, err := ReadControlFile(filepath.Join(dir, "opts")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 64*1024), maxControlFile)
		for sc.Scan() {
			key, val, ok := strings.Cut(sc.Text(), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), "strategy") {
				continue
			}
			if s := strings.Trim(strings.TrimSpace(val), `"`); !builtinStrategies[s] {
				add("merge strategy " + s)
			}
		}
	} else if !os.IsNotExist(err) {
		add("opts: " + err.Error())
	}
	return out
}
