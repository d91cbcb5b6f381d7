// Package writecheck decides, before a shell command line runs, whether it
// may write outside a list of scratch paths: the ask permission mode runs
// such a line only after the user agrees. It parses the line with
// mvdan.cc/sh and walks all of it (pipelines, lists, subshells, command and
// process substitutions, functions, `bash -c` and `eval` strings), following
// `cd` to resolve relative paths. It is a consent check, not the guard: the
// sandbox's mounts still decide what can be written at all. Whatever it
// cannot know without running (a variable, a parse error, an unknown
// command) counts as a possible write. The session is one persistent
// shell and lines are checked one at a time, so what a line leaves set for
// later ones (a function named like a command, a trap that changes
// directory, IFS, shell options) asks too.
//
// A path counts as scratch by where its symbolic links lead (read on the
// host, see Checker.HostPath): a link under a scratch path that leads out
// of it (one a tar or unzip archive extracted there brings) asks.
package writecheck

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
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
	// HostPath maps a path as commands see it to the host file where its
	// symbolic links are read (nil: the same path). Commands write there,
	// so every link is hostile: it is read, never followed by the host.
	HostPath func(path string) string
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
// below a scratch path once its symbolic links are followed, or one of the
// harmless sinks (/dev/null, …). The scratch paths themselves are taken as
// written: a command may have replaced one with a link.
func (c Checker) InScratch(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	if sinks[filepath.Clean(path)] && !strings.Contains(path, "..") {
		return true
	}
	real, ok := c.resolve(path)
	if !ok || (c.Shadowed != nil && c.Shadowed(real)) {
		return false
	}
	for _, s := range c.Scratch {
		if within(real, s) {
			return true
		}
	}
	return false
}

// maxLinks is how many symbolic links resolve follows (Linux's limit).
const maxLinks = 40

// resolve is the path (as commands see it) the kernel would reach for the
// absolute path p: each component is looked at on the host with Lstat and
// a link's target is read, never followed, then walked the same way
// (".." after a link leaves the link's target). Components that do not
// exist are kept as written (mkdir -p makes them plain directories). It
// reports false when a component cannot be read or links nest too deep.
func (c Checker) resolve(p string) (string, bool) {
	host := c.HostPath
	if host == nil {
		host = func(p string) string { return p }
	}
	done, rest, links := "/", strings.Split(p, "/"), 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, name)
		fi, err := os.Lstat(host(next))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			done = next
		case err != nil:
			return "", false
		case fi.Mode()&fs.ModeSymlink == 0:
			done = next
		default:
			target, err := os.Readlink(host(next))
			if links++; err != nil || links > maxLinks {
				return "", false
			}
			if filepath.IsAbs(target) {
				done = "/"
			}
			rest = append(strings.Split(target, "/"), rest...)
		}
	}
	return done, true
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
	// funcs are the functions declared earlier in the line (their bodies
	// were checked): true for one that may change directory.
	funcs  map[string]bool
	unset  map[string]bool // known variables the line assigns: unknown from then on
	refs   map[string]bool // names declared -n: assigning one assigns the variable it names
	nums   map[string]bool // variables the line gave a number (arithmetic may read them)
	ifsSet bool            // the line assigns IFS: unquoted expansions split unknowably
	trials int             // how deep in trial passes (walker.probe) this walker is
	// unnumber ends a maybe part begun with no number known (made once).
	unnumber func()
}

func (w *walker) ask(word, why string) {
	r := Reason{Word: word, Why: why}
	if !slices.Contains(w.reasons, r) {
		w.reasons = append(w.reasons, r)
	}
}

// script parses and checks one piece of shell code and returns the
// directories it may end in.
func (w *walker) script(code string, cwds cwdSet, depth int) cwdSet {
	if depth > maxDepth {
		w.ask(firstWord(code), "nests shell code too deep to check")
		return cwds.union(cwdSet{""})
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(code), "")
	if err != nil {
		w.ask(firstWord(code), "is in a line that cannot be parsed ("+err.Error()+"), so it is not known what it writes")
		return cwds.union(cwdSet{""})
	}
	return w.stmts(f.Stmts, cwds, depth)
}

// elsewhere is a directory no command line names: code that, started
// there, ends anywhere else changes directory.
const elsewhere = "/\x00elsewhere"

// moves reports whether stmts, run from elsewhere, may end in another
// directory. It checks them with a throwaway walker.
func (w *walker) moves(stmts []*syntax.Stmt, depth int) bool {
	probe := w.probe()
	return probe == nil || !slices.Equal(probe.stmts(stmts, cwdSet{elsewhere}, depth), cwdSet{elsewhere})
}

// maxTrials bounds nested trial passes: each loop or function inside one
// makes another, so they would double with every level.
const maxTrials = 2

// probe is a throwaway walker for a trial pass, or nil past maxTrials (the
// caller then assumes the worst).
func (w *walker) probe() *walker {
	if w.trials >= maxTrials {
		return nil
	}
	return &walker{c: w.c, funcs: maps.Clone(w.funcs), unset: maps.Clone(w.unset), refs: w.refs, nums: maps.Clone(w.nums),
		ifsSet: w.ifsSet, trials: w.trials + 1}
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

// maxCwds bounds a cwdSet: `cd a; cd b; …` doubles it with each cd (either
// may fail), so past this many directories it becomes "not known".
const maxCwds = 16

func (s cwdSet) union(o cwdSet) cwdSet {
	out := slices.Clone(s)
	for _, d := range o {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if len(out) > maxCwds {
		return cwdSet{""}
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
		if a := w.arg(call.Args[0]); a.known && a.s != "" {
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
	if s.Negated {
		// ! X succeeds when X failed, maybe before its cd (! cd /nope).
		return cwds.union(w.command(s.Cmd, cwds, depth))
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
			after := w.stmt(x.X, cwds, depth)
			defer w.maybe()()
			return w.stmt(x.Y, after, depth)
		case syntax.OrStmt:
			// Y runs when X failed, possibly half-way (cd a && false || …).
			ok := w.stmt(x.X, cwds, depth)
			defer w.maybe()()
			return w.stmt(x.Y, cwds.union(ok), depth).union(ok)
		default: // pipelines: every part runs in a subshell, the last one
			// in the shell itself under shopt -s lastpipe.
			defer w.maybe()()
			w.stmt(x.X, cwds, depth)
			return cwds.union(w.stmt(x.Y, cwds, depth))
		}
	case *syntax.Subshell:
		defer w.maybe()()
		w.stmts(x.Stmts, cwds, depth)
		return cwds
	case *syntax.Block:
		return w.stmts(x.Stmts, cwds, depth)
	case *syntax.IfClause:
		defer w.maybe()()
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
			if it.Name != nil {
				w.setVar(it.Name.Value, "for", true)
				num := len(it.Items) > 0
				for _, a := range w.args(it.Items) {
					num = num && a.known && isNumber(a.s)
				}
				w.setNum(it.Name.Value, num) // for i in 1 2 3: ${a[i]} reads a number
			}
		} else {
			w.exprs(x.Loop, cwds, depth)
		}
		return w.loop(cwds, depth, nil, x.Do)
	case *syntax.CaseClause:
		w.substs([]*syntax.Word{x.Word}, cwds, depth)
		defer w.maybe()()
		out := cwds
		for _, it := range x.Items {
			w.substs(it.Patterns, cwds, depth)
			out = out.union(w.stmts(it.Stmts, cwds, depth))
		}
		return out
	case *syntax.FuncDecl:
		// The body runs when the function is called, from wherever the
		// shell is then: relative paths in it are not known.
		end := w.maybe()
		w.stmt(x.Body, cwdSet{""}, depth)
		end()
		if n := x.Name; n != nil && (readOnly[commandName(n.Value)] || handlers[commandName(n.Value)] != nil || strings.Contains(n.Value, "/")) {
			// The session is one shell: later command lines run it in the
			// command's place, and this check does not know it there.
			w.ask(x.Name.Value+"()", "defines a function named like the command "+x.Name.Value+", which this and later command lines run in its place")
		}
		if x.Name != nil {
			if w.funcs == nil {
				w.funcs = map[string]bool{}
			}
			w.funcs[x.Name.Value] = w.moves([]*syntax.Stmt{x.Body}, depth)
		}
		return cwds
	case *syntax.DeclClause:
		w.decl(x, cwds, depth)
		return cwds
	case *syntax.TimeClause:
		if x.Stmt != nil {
			return w.stmt(x.Stmt, cwds, depth)
		}
		return cwds
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		w.exprs(x, cwds, depth)
		return cwds
	case *syntax.CoprocClause:
		// coproc NAME sets NAME to its descriptors and NAME_PID (coproc
		// TMPDIR { …; } makes $TMPDIR a number, a relative path).
		name := "COPROC"
		if x.Name != nil {
			name = x.Name.Lit()
		}
		w.setVar(name, "coproc", true)
		w.setVar(name+"_PID", "coproc", true)
		w.stmt(x.Stmt, cwds, depth)
		return cwds
	}
	w.ask("?", "uses shell syntax this check does not know")
	return cwds
}

// loop checks a loop's condition and body; a body that changes directory
// may run again from where it went, so its relative paths are then unknown.
// The same goes for a variable the body stops giving a number: the
// condition reads it again.
func (w *walker) loop(cwds cwdSet, depth int, cond, body []*syntax.Stmt) cwdSet {
	defer w.maybe()()
	start := cwds
	probe := w.probe()
	if probe == nil {
		start = cwds.union(cwdSet{""})
		clear(w.nums)
	} else {
		if after := probe.stmts(body, probe.stmts(cond, cwds, depth), depth); !slices.Equal(after, cwds) {
			start = cwds.union(after).union(cwdSet{""})
		}
		for name, num := range probe.nums {
			if !num {
				w.setNum(name, false)
			}
		}
	}
	return w.stmts(body, w.stmts(cond, start, depth), depth).union(start)
}

// maybe starts a part of the line that may not run (a branch, a loop body,
// a subshell's effect on the shell): a variable it gives a number may not
// hold one after it. The returned function ends the part.
func (w *walker) maybe() func() {
	if len(w.nums) == 0 { // the common case, without allocating
		if w.unnumber == nil {
			w.unnumber = func() {
				for name := range w.nums {
					w.nums[name] = false
				}
			}
		}
		return w.unnumber
	}
	before := maps.Clone(w.nums)
	return func() {
		for name, num := range w.nums {
			if num && !before[name] {
				w.nums[name] = false
			}
		}
	}
}

// substs checks the command and process substitutions inside words (each
// runs in a subshell) and the variables they assign (${X:=v}, $((X=1))).
func (w *walker) substs(words []*syntax.Word, cwds cwdSet, depth int) {
	for _, word := range words {
		if word != nil && !plain(word) {
			w.exprs(word, cwds, depth)
		}
	}
}

// plain reports whether a word is only literal text (most are): it holds
// nothing for exprs to find.
func plain(word *syntax.Word) bool {
	for _, p := range word.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// exprs checks the substitutions, assignments and arithmetic inside a
// node: words, arithmetic and test expressions.
func (w *walker) exprs(n syntax.Node, cwds cwdSet, depth int) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			end := w.maybe()
			w.stmts(x.Stmts, cwds, depth)
			end()
			return false
		case *syntax.ProcSubst:
			end := w.maybe()
			w.stmts(x.Stmts, cwds, depth)
			end()
			return false
		case *syntax.ArithmExp:
			w.arith(x.X)
		case *syntax.ArithmCmd:
			w.arith(x.X)
		case *syntax.LetClause:
			for _, e := range x.Exprs {
				w.arith(e)
			}
		case *syntax.CStyleLoop:
			w.arith(x.Init)
			w.arith(x.Cond)
			w.arith(x.Post)
		case *syntax.UnaryTest:
			if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
				if wd, ok := x.X.(*syntax.Word); ok {
					w.varTest(w.arg(wd), "[[")
				}
			}
		case *syntax.BinaryTest:
			if x.Op >= syntax.TsEql && x.Op <= syntax.TsGtr { // [[ a -eq b ]] evaluates both
				for _, t := range []syntax.TestExpr{x.X, x.Y} {
					if wd, ok := t.(*syntax.Word); ok {
						w.arith(wd)
					}
				}
			}
		case *syntax.ParamExp:
			if x.Exp != nil && (x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull) && x.Param != nil {
				w.setVar(x.Param.Value, "", true)
			}
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps && strings.Contains(x.Exp.Word.Lit(), "P") {
				w.ask("${@P}", "expands a value as a prompt, which runs the command substitutions in it")
			}
			if x.Excl && x.Names == 0 && (x.Index == nil || !isAll(x.Index)) && x.Param != nil {
				if _, ok := w.known(x.Param.Value); !ok {
					w.ask("${!x}", "expands the variable ${"+x.Param.Value+"} names, whose subscript (a[$(cmd)]) would run commands")
				}
			}
			if x.Index != nil && !isAll(x.Index) {
				w.arith(x.Index)
			}
			if x.Slice != nil {
				w.arith(x.Slice.Offset)
				w.arith(x.Slice.Length)
			}
		}
		return true
	})
}

// varTest checks the operand of -v: a name whose subscript bash evaluates
// as arithmetic, so a value known only when it runs may run commands.
func (w *walker) varTest(a arg, word string) {
	base, sub, ok := strings.Cut(a.s, "[")
	if !a.known || !isName(base) || ok && !isNumber(strings.TrimSuffix(sub, "]")) {
		w.ask(word, "tests whether "+a.text()+" is set: a subscript in it (a[$(cmd)]) would run commands")
	}
}

// isAll reports whether an index is @ or * (all the elements).
func isAll(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	return ok && (wd.Lit() == "@" || wd.Lit() == "*")
}

// arith checks an arithmetic expression in the order bash evaluates it.
// bash evaluates a variable's value as an expression in turn, and an array
// subscript in that runs command substitutions (x='a[$(cmd)]'; $((x))):
// a value not known to be a number asks. Variables assigned by arithmetic
// hold numbers from then on.
func (w *walker) arith(x syntax.ArithmExpr) {
	switch y := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if y.Op == syntax.Assgn || y.Op >= syntax.AddAssgn && y.Op <= syntax.PowAssgn {
			w.arith(y.Y)
			if y.Op != syntax.Assgn {
				w.arith(y.X) // x += 1 reads x
			}
			w.arithTarget(y.X)
			return
		}
		w.arith(y.X)
		w.arith(y.Y)
	case *syntax.UnaryArithm:
		w.arith(y.X)
		if y.Op == syntax.Inc || y.Op == syntax.Dec {
			w.arithTarget(y.X)
		}
	case *syntax.ParenArithm:
		w.arith(y.X)
	case *syntax.Word:
		if !w.number(y) {
			w.ask("$((", "evaluates "+printWord(y)+" as arithmetic: a value such as a[$(cmd)] would run the command")
		}
	default:
		w.ask("$((", "uses arithmetic this check does not read")
	}
}

// number reports whether a word in arithmetic is known to be a number: a
// numeric literal, a variable the line gave a number, ${#x}, $#, $?, $$, $!.
func (w *walker) number(wd *syntax.Word) bool {
	if len(wd.Parts) != 1 {
		return false
	}
	switch p := wd.Parts[0].(type) {
	case *syntax.Lit:
		return isNumber(p.Value) || w.numeric(p.Value)
	case *syntax.ParamExp:
		if p.Param == nil || p.Excl || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || len(p.Modifiers) > 0 {
			return false
		}
		return p.Length || len(p.Param.Value) == 1 && strings.Contains("#?$!", p.Param.Value) || w.numeric(p.Param.Value)
	}
	return false
}

// numberValue reports whether an assigned value is a number: a numeric
// literal or an arithmetic expansion ($((n + 1))).
func (w *walker) numberValue(word *syntax.Word) bool {
	if len(word.Parts) == 1 {
		if _, ok := word.Parts[0].(*syntax.ArithmExp); ok {
			return true
		}
	}
	v := w.arg(word)
	return v.known && isNumber(v.s)
}

func isNumber(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9' && strings.Trim(s, "0123456789abcdefABCDEFxX#") == ""
}

// numeric reports whether the variable name holds a number: the line gave
// it one, or it is known to.
func (w *walker) numeric(name string) bool {
	if w.nums[name] {
		return true
	}
	v, ok := w.known(name)
	return ok && isNumber(v)
}

// arithTarget notes the variable an arithmetic assignment assigns (a
// number, from then on).
func (w *walker) arithTarget(x syntax.ArithmExpr) {
	wd, ok := x.(*syntax.Word)
	if !ok || len(wd.Parts) != 1 {
		w.ask("$((", "assigns a variable named only when it runs")
		return
	}
	switch p := wd.Parts[0].(type) {
	case *syntax.Lit:
		w.setVar(p.Value, "", true)
		w.setNum(p.Value, true)
		return
	case *syntax.ParamExp: // a[i]=…: the index was checked with the value
		if p.Param != nil && p.Index != nil {
			w.arith(p.Index)
			w.setVar(p.Param.Value, "", true)
			return
		}
	}
	w.ask("$((", "assigns a variable named only when it runs")
}

func (w *walker) setNum(name string, num bool) {
	if w.nums == nil {
		w.nums = map[string]bool{}
	}
	w.nums[name] = num
}

// dangerousVars change which program a later command runs, what it reads
// as its options or configuration, or where ~, $TMPDIR and relative cd
// lead: assigning one asks. Names with a prefix in dangerousPrefixes do too.
// PWD is what the shell reports as its directory after a line, the one
// the next line is checked in: PWD=/tmp leaves the shell where it was.
var dangerousVars = set(
	"PATH", "EXECIGNORE", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "HOME", "TMPDIR", "CDPATH", "PWD",
	"PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "GCONV_PATH",
	"XDG_CONFIG_HOME", "POSIXLY_CORRECT", "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "UNZIP", "UNZIPOPT", "GOTOOLCHAIN",
	"GOFLAGS", "GOENV", "GOMODCACHE", "GOPATH", "XZ_OPT", "XZ_DEFAULTS", "NODE_OPTIONS", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "RUBYOPT",
	"RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
)

// dangerousPrefixes: BASH_ covers BASH_ENV, BASH_CMDS (BASH_CMDS[ls]=/tmp/x
// makes ls run /tmp/x), BASH_ALIASES and exported functions (BASH_FUNC_).
var dangerousPrefixes = []string{"LD_", "GIT_", "BASH_"}

func dangerous(name string) bool {
	if dangerousVars[name] {
		return true
	}
	for _, p := range dangerousPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// assign checks an assignment; persists says it stays in the shell (not
// a NAME=value word before a command's name).
func (w *walker) assign(a *syntax.Assign, word string, persists bool, cwds cwdSet, depth int) {
	if a.Value != nil {
		w.substs([]*syntax.Word{a.Value}, cwds, depth)
	}
	if a.Array != nil {
		w.exprs(a.Array, cwds, depth)
		for _, e := range a.Array.Elems {
			if e.Index != nil {
				w.arith(e.Index)
			}
		}
	}
	if a.Index != nil {
		w.arith(a.Index)
		w.exprs(a.Index, cwds, depth)
	}
	if a.Name == nil {
		return
	}
	w.setVar(a.Name.Value, word, persists)
	if persists && a.Index == nil {
		w.setNum(a.Name.Value, a.Value != nil && w.numberValue(a.Value))
	}
}

// setVar notes that the line assigns the variable name, in a part
// remembered as word ("" for NAME=): a dangerous one asks, a known one is
// unknown from then on. persists says the value stays in the shell after
// the command: the session is one shell, so later command lines see it.
func (w *walker) setVar(name, word string, persists bool) {
	if w.refs[name] {
		if word == "" {
			word = name + "="
		}
		w.ask(word, "assigns through the reference "+name+", to a variable named only when it runs")
	}
	if dangerous(name) {
		if word == "" {
			word = name + "="
		}
		w.ask(word, "sets "+name+", which changes what later commands run or where they write")
	}
	if name == "IFS" {
		w.ifsSet = true
		if persists {
			if word == "" {
				word = name + "="
			}
			w.ask(word, "sets IFS, which changes how this and later command lines split words")
		}
	}
	w.forget(name)
}

// element is the variable of a name that may be an array element
// (a[i]): bash evaluates its subscript as arithmetic when assigning through
// read, printf -v or declare, and a $(cmd) in it runs; a subscript that is
// no number asks.
func (w *walker) element(name, word string) string {
	base, sub, ok := strings.Cut(name, "[")
	if ok && !isNumber(strings.TrimSuffix(sub, "]")) && !w.numeric(strings.TrimSuffix(sub, "]")) {
		w.ask(word, "assigns the array element "+name+", whose subscript is evaluated as arithmetic (a $(cmd) in it runs)")
	}
	return base
}

// forget makes a known variable unknown from here on.
func (w *walker) forget(name string) {
	if _, ok := w.c.Env[name]; ok {
		if w.unset == nil {
			w.unset = map[string]bool{}
		}
		w.unset[name] = true
	}
}

// ref notes a name declared -n (a reference to another variable).
func (w *walker) ref(name string) {
	if w.refs == nil {
		w.refs = map[string]bool{}
	}
	w.refs[name] = true
}

// decl checks declare, local, export, readonly, typeset and nameref. With
// -n a name refers to the variable its value names: assigning through it
// assigns that one.
func (w *walker) decl(x *syntax.DeclClause, cwds cwdSet, depth int) {
	variant := x.Variant.Value
	ref := variant == "nameref"
	for _, a := range x.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if v := w.arg(a.Value); v.known && strings.HasPrefix(v.s, "-") {
				ref = ref || strings.Contains(v.s, "n") && variant != "export" // export -n unexports
				if strings.Contains(v.s, "i") {
					w.ask(variant, "gives variables the integer attribute: assigning one evaluates the value as arithmetic, which can run commands, in later command lines too")
				}
			}
		}
	}
	if ref {
		w.ask(variant, "declares a reference: assigning it, in later command lines too, assigns the variable it names")
	}
	for _, a := range x.Args {
		switch {
		case a.Naked && a.Name == nil && a.Value != nil: // an option, or a word such as "$X" or {PATH,x}=v
			w.substs([]*syntax.Word{a.Value}, cwds, depth)
			for _, v := range w.args([]*syntax.Word{a.Value}) {
				if !v.known {
					w.ask(variant, "declares a variable named only when it runs ("+v.text()+")")
				} else if !strings.HasPrefix(v.s, "-") && !strings.HasPrefix(v.s, "+") {
					name, _, _ := strings.Cut(v.s, "=")
					w.setVar(w.element(name, variant), variant, true)
				}
			}
			continue
		case ref && a.Name != nil:
			w.ref(a.Name.Value)
			if a.Value != nil {
				if v := w.arg(a.Value); v.known {
					w.setVar(v.s, variant, true)
				}
			}
			w.assign(&syntax.Assign{Value: a.Value, Array: a.Array, Index: a.Index}, variant, true, cwds, depth)
			continue
		}
		w.assign(a, variant, true, cwds, depth)
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
	// Braces expand in a redirection too: > {/p/x,} writes /p/x (the empty
	// word drops out).
	for _, a := range w.args([]*syntax.Word{r.Word}) {
		if !w.scratch(a, cwds) {
			w.ask(word, "writes to "+describe(a, cwds))
		}
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
