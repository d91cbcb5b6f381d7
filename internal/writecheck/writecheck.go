// Package writecheck decides, before a shell command line runs, whether it
// may write outside a list of scratch paths: the ask permission mode runs
// such a line only after the user agrees. It parses the line with
// mvdan.cc/sh and walks all of it (pipelines, lists, subshells, command and
// process substitutions, functions, `bash -c` and `eval` strings), following
// `cd` to resolve relative paths. It is a consent check, not the guard: the
// sandbox's mounts still decide what can be written at all. Whatever it
// cannot know without running (a variable, a parse error, an unknown
// command) counts as a possible write.
package writecheck

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Checker holds what a classification depends on. The zero value has an
// empty scratch list: every write asks.
type Checker struct {
	// Scratch lists absolute paths as commands see them (directories or
	// files); writes at or below them need no asking.
	Scratch []string
	// Env gives the variables whose value is known before anything runs
	// (HOME for ~, TMPDIR); any other expansion is unknown.
	Env map[string]string
	// Shadowed, when set, reports paths under a scratch path that lead
	// somewhere else: a project under the host's /tmp is bound at its own
	// path over the sandbox's private /tmp. They are not scratch.
	Shadowed func(path string) bool
}

// Reason is one part of a command line that may write outside the scratch
// list.
type Reason struct {
	// Word is what "always for this command" remembers: the command word
	// ("rm"; "git commit" for tools whose subcommand says what they do;
	// ">" for a redirection of a compound command).
	Word string
	// Why says what it may write, in one line.
	Why string
}

// maxDepth bounds the recursion into `bash -c`, `eval` and trap strings.
const maxDepth = 4

// Check returns why cmd, run in the directory cwd (as commands see it;
// "" when unknown, so relative paths count as outside the scratch list),
// may write outside the scratch list: one Reason per part, in order. None
// means the line only reads or writes scratch paths.
func (c Checker) Check(cmd, cwd string) []Reason {
	w := &walker{c: &c}
	w.script(cmd, cwdSet{cwd}, 0)
	return w.reasons
}

// InScratch reports whether path (absolute, as commands see it) is at or
// below a scratch path, or one of the harmless sinks (/dev/null, …).
func (c Checker) InScratch(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	if sinks[path] {
		return true
	}
	if c.Shadowed != nil && c.Shadowed(path) {
		return false
	}
	for _, s := range c.Scratch {
		if within(path, s) {
			return true
		}
	}
	return false
}

// sinks are files a write to which changes nothing that lasts.
var sinks = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/fd/1": true, "/dev/fd/2": true}

func within(p, root string) bool {
	root = filepath.Clean(root)
	if !filepath.IsAbs(root) {
		return false
	}
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// walker collects the reasons of one command line.
type walker struct {
	c       *Checker
	reasons []Reason
	funcs   map[string]bool // functions declared earlier in the line (their bodies were checked)
	unset   map[string]bool // known variables the line assigns: unknown from then on
}

func (w *walker) ask(word, why string) {
	r := Reason{Word: word, Why: why}
	if !slices.Contains(w.reasons, r) {
		w.reasons = append(w.reasons, r)
	}
}

// script parses and checks one piece of shell code.
func (w *walker) script(code string, cwds cwdSet, depth int) {
	if depth > maxDepth {
		w.ask(firstWord(code), "nests shell code too deep to check")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(code), "")
	if err != nil {
		w.ask(firstWord(code), "is in a line that cannot be parsed ("+err.Error()+"), so it is not known what it writes")
		return
	}
	w.stmts(f.Stmts, cwds, depth)
}

// firstWord is the first blank-separated word of code (the word a parse
// error is remembered by).
func firstWord(code string) string {
	if f := strings.Fields(code); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// cwdSet is the directories a command may run in at one point of the line
// ("" for one that is not known).
type cwdSet []string

func (s cwdSet) union(o cwdSet) cwdSet {
	out := slices.Clone(s)
	for _, d := range o {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// stmts checks a list run in order. A statement that fails does not stop
// the next one, so after each the directory is where it was or where it
// went. It returns the directories the list may end in.
func (w *walker) stmts(list []*syntax.Stmt, cwds cwdSet, depth int) cwdSet {
	for _, s := range list {
		cwds = cwds.union(w.stmt(s, cwds, depth))
	}
	return cwds
}

// stmt checks one statement and returns the directories it leaves the
// shell in when it succeeds.
func (w *walker) stmt(s *syntax.Stmt, cwds cwdSet, depth int) cwdSet {
	word := ">"
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
		if a := w.arg(call.Args[0]); a.known {
			word = commandName(a.s)
		}
	}
	for _, r := range s.Redirs {
		w.redirect(r, word, cwds, depth)
	}
	if s.Cmd == nil {
		return cwds
	}
	if s.Background || s.Coprocess || s.Disown {
		w.command(s.Cmd, cwds, depth) // its cd happens elsewhere
		return cwds
	}
	return w.command(s.Cmd, cwds, depth)
}

func (w *walker) command(cmd syntax.Command, cwds cwdSet, depth int) cwdSet {
	switch x := cmd.(type) {
	case *syntax.CallExpr:
		return w.call(x, cwds, depth)
	case *syntax.BinaryCmd:
		switch x.Op {
		case syntax.AndStmt:
			// Y runs only once X succeeded; both did when the list succeeds.
			return w.stmt(x.Y, w.stmt(x.X, cwds, depth), depth)
		case syntax.OrStmt:
			// Y runs when X failed, possibly half-way (cd a && false || …).
			ok := w.stmt(x.X, cwds, depth)
			return w.stmt(x.Y, cwds.union(ok), depth).union(ok)
		default: // pipelines: every part runs in a subshell
			w.stmt(x.X, cwds, depth)
			w.stmt(x.Y, cwds, depth)
			return cwds
		}
	case *syntax.Subshell:
		w.stmts(x.Stmts, cwds, depth)
		return cwds
	case *syntax.Block:
		return w.stmts(x.Stmts, cwds, depth)
	case *syntax.IfClause:
		out := cwds
		for c := x; c != nil; c = c.Else {
			after := w.stmts(c.Cond, out, depth)
			out = out.union(after).union(w.stmts(c.Then, after, depth))
		}
		return out
	case *syntax.WhileClause:
		return w.loop(cwds, depth, x.Cond, x.Do)
	case *syntax.ForClause:
		if it, ok := x.Loop.(*syntax.WordIter); ok {
			w.substs(it.Items, cwds, depth)
		} else {
			w.substs(nodeWords(x.Loop), cwds, depth)
		}
		return w.loop(cwds, depth, nil, x.Do)
	case *syntax.CaseClause:
		w.substs([]*syntax.Word{x.Word}, cwds, depth)
		out := cwds
		for _, it := range x.Items {
			w.substs(it.Patterns, cwds, depth)
			out = out.union(w.stmts(it.Stmts, cwds, depth))
		}
		return out
	case *syntax.FuncDecl:
		// The body runs when the function is called, from wherever the
		// shell is then: relative paths in it are not known.
		w.stmt(x.Body, cwdSet{""}, depth)
		if x.Name != nil {
			if w.funcs == nil {
				w.funcs = map[string]bool{}
			}
			w.funcs[x.Name.Value] = true
		}
		return cwds
	case *syntax.DeclClause:
		variant := x.Variant.Value
		for _, a := range x.Args {
			w.assign(a, variant, cwds, depth)
		}
		return cwds
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return w.stmt(x.Stmt, cwds, depth)
		}
		return cwds
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		w.substs(nodeWords(x), cwds, depth)
		return cwds
	case *syntax.CoprocClause:
		w.stmt(x.Stmt, cwds, depth)
		return cwds
	}
	w.ask("?", "uses shell syntax this check does not know")
	return cwds
}

// loop checks a loop's condition and body; a body that changes directory
// may run again from where it went, so its relative paths are then unknown.
func (w *walker) loop(cwds cwdSet, depth int, cond, body []*syntax.Stmt) cwdSet {
	probe := &walker{c: w.c, funcs: w.funcs, unset: w.unset}
	after := probe.stmts(body, probe.stmts(cond, cwds, depth), depth)
	start := cwds
	if !slices.Equal(after, cwds) {
		start = cwds.union(after).union(cwdSet{""})
	}
	return w.stmts(body, w.stmts(cond, start, depth), depth).union(start)
}

// nodeWords lists the words inside a node (arithmetic and test
// expressions), for their substitutions.
func nodeWords(n syntax.Node) []*syntax.Word {
	var out []*syntax.Word
	syntax.Walk(n, func(n syntax.Node) bool {
		if wd, ok := n.(*syntax.Word); ok {
			out = append(out, wd)
			return false
		}
		return true
	})
	return out
}

// substs checks the command and process substitutions inside words: each
// runs in a subshell.
func (w *walker) substs(words []*syntax.Word, cwds cwdSet, depth int) {
	for _, word := range words {
		if word == nil {
			continue
		}
		syntax.Walk(word, func(n syntax.Node) bool {
			switch x := n.(type) {
			case *syntax.CmdSubst:
				w.stmts(x.Stmts, cwds, depth)
				return false
			case *syntax.ProcSubst:
				w.stmts(x.Stmts, cwds, depth)
				return false
			}
			return true
		})
	}
}

// dangerousVars change which program a later command runs, or where ~ and
// $TMPDIR lead: assigning one asks.
var dangerousVars = map[string]bool{
	"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "BASH_ENV": true, "ENV": true,
	"PROMPT_COMMAND": true, "PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "HOME": true, "TMPDIR": true,
	"PAGER": true, "GIT_PAGER": true, "EDITOR": true, "VISUAL": true, "GIT_EDITOR": true, "GIT_SSH": true,
	"GIT_SSH_COMMAND": true, "GIT_EXEC_PATH": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true,
	"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true, "GIT_DIR": true,
	"GIT_WORK_TREE": true, "LESSOPEN": true, "LESSCLOSE": true,
}

func (w *walker) assign(a *syntax.Assign, word string, cwds cwdSet, depth int) {
	if a.Value != nil {
		w.substs([]*syntax.Word{a.Value}, cwds, depth)
	}
	if a.Array != nil {
		w.substs(nodeWords(a.Array), cwds, depth)
	}
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	if dangerousVars[name] || strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "GIT_CONFIG_") {
		if word == "" {
			word = name + "="
		}
		w.ask(word, "sets "+name+", which changes what later commands run or where they write")
	}
	if _, ok := w.c.Env[name]; ok {
		if w.unset == nil {
			w.unset = map[string]bool{}
		}
		w.unset[name] = true
	}
}

// redirect checks one redirection of a statement whose command word is word.
func (w *walker) redirect(r *syntax.Redirect, word string, cwds cwdSet, depth int) {
	w.substs([]*syntax.Word{r.Word, r.Hdoc}, cwds, depth)
	switch r.Op {
	case syntax.RdrIn, syntax.DplIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	case syntax.DplOut:
		// >&2, >&-, 2>&1: a descriptor; `>& file` is bash's &>file.
		if a := w.arg(r.Word); a.known && isFD(a.s) {
			return
		}
	}
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		w.ask(word, "opens a descriptor named by a variable ("+printWord(r.Word)+")")
		return
	}
	a := w.arg(r.Word)
	if !w.scratch(a, cwds) {
		w.ask(word, "writes to "+describe(a, cwds))
	}
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true // >&- closes
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// describe names a target in a reason.
func describe(a arg, cwds cwdSet) string {
	if !a.known {
		return a.text() + " (known only when it runs)"
	}
	if !filepath.IsAbs(a.s) && slices.Contains(cwds, "") {
		return a.s + " (in a directory not known before it runs)"
	}
	return a.s + " (outside the scratch list)"
}

func printWord(word *syntax.Word) string {
	if word == nil {
		return ""
	}
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, word); err != nil {
		return fmt.Sprintf("%v", word)
	}
	return b.String()
}
