// Package writecheck decides, before a shell command line runs, whether it
// may write outside a list of scratch paths: ask mode runs such a line only
// after the user agrees. A consent check, not the guard (the sandbox decides
// what can be written at all), it stays small: it parses the line with
// mvdan.cc/sh, finds every simple command and redirection in it (also in
// substitutions, functions, loops, `bash -c` and `eval` strings), and lets
// a command run unasked only when it is known to only read (commands.go) or
// is a file writer whose paths all lie in the scratch list, by where their
// symbolic links lead. Everything else asks, and so does what cannot be
// known before the line runs (a variable, a glob, a parse error).
package writecheck

import (
	"errors"
	"io/fs"
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

// Check returns why cmd, run in the directory cwd (as commands see it;
// "" when unknown, so relative paths count as outside the scratch list),
// may write outside the scratch list: one Reason per part, in order. None
// means the line only reads or writes scratch paths.
func (c Checker) Check(cmd, cwd string) []Reason {
	// A variable the line names other than as $NAME (read NAME) is unknown.
	env := map[string]string{}
	for k, v := range c.Env {
		if strings.Count(cmd, k) == strings.Count(cmd, "$"+k)+strings.Count(cmd, "${"+k+"}") {
			env[k] = v
		}
	}
	w := &walker{c: &c, env: env}
	w.script(cmd, cwd, 0)
	return w.reasons
}

// InScratch reports whether path (absolute, as commands see it) is at or
// below a scratch path (taken as written) once its symbolic links are
// followed, or one of the harmless sinks (/dev/null, …).
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

// resolve is the path the kernel would reach for the absolute path p: each
// component is Lstat'ed on the host, a link's target read (never followed)
// and walked the same way; missing components are kept as written. It
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
	env     map[string]string
	funcs   map[string]bool // functions the line defines (their bodies are checked there)
	reasons []Reason
}

func (w *walker) ask(word, why string) {
	r := Reason{Word: word, Why: why}
	if !slices.Contains(w.reasons, r) {
		w.reasons = append(w.reasons, r)
	}
}

// maxDepth bounds the recursion into `bash -c` and `eval` strings.
const maxDepth = 4

// script parses and checks one piece of shell code run in cwd and returns
// the directory it leaves the shell in ("" when not known).
func (w *walker) script(code, cwd string, depth int) string {
	first := append(strings.Fields(code), "?")[0] // the word a failure is remembered by
	if depth > maxDepth {
		w.ask(first, "nests shell code too deep to check")
		return ""
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(code), "")
	if err != nil {
		w.ask(first, "is in a line that cannot be parsed ("+err.Error()+"), so it is not known what it writes")
		return ""
	}
	return w.list(f.Stmts, cwd, depth)
}

// list checks statements run in turn. One that changes directory may fail
// before it does: the next runs where it is not known.
func (w *walker) list(stmts []*syntax.Stmt, cwd string, depth int) string {
	for i, s := range stmts {
		after := w.stmt(s, cwd, depth)
		if after != cwd && i < len(stmts)-1 {
			after = ""
		}
		cwd = after
	}
	return cwd
}

// stmt checks a statement; it returns the directory it leaves when it succeeds.
func (w *walker) stmt(s *syntax.Stmt, cwd string, depth int) string {
	word := ">"
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
		if args := w.words(call.Args); args[0].known && args[0].s != "" {
			word = askWord(args)
		}
	}
	for _, r := range s.Redirs {
		w.redirect(r, word, cwd, depth)
	}
	after := w.command(s.Cmd, cwd, depth)
	if (s.Background || s.Negated || s.Coprocess) && after != cwd {
		return "" // run elsewhere, or "succeeds" when it failed
	}
	return after
}

func (w *walker) command(cmd syntax.Command, cwd string, depth int) string {
	switch x := cmd.(type) {
	case nil:
		return cwd
	case *syntax.CallExpr:
		return w.call(x, cwd, depth)
	case *syntax.BinaryCmd:
		left := w.stmt(x.X, cwd, depth)
		switch x.Op {
		case syntax.AndStmt: // Y runs where X left the shell
			return w.stmt(x.Y, left, depth)
		case syntax.OrStmt: // Y runs when X failed, maybe after its cd
			from := cwd
			if left != cwd {
				from = ""
			}
			if right := w.stmt(x.Y, from, depth); right != left {
				return ""
			}
			return left
		}
		w.stmt(x.Y, cwd, depth) // a pipeline: each part in a subshell
		return cwd
	case *syntax.Subshell:
		w.list(x.Stmts, cwd, depth)
		return cwd
	case *syntax.Block:
		return w.list(x.Stmts, cwd, depth)
	case *syntax.FuncDecl:
		w.ask(x.Name.Value+"()", "defines a function, which this and later command lines may run in a command's place")
		if w.funcs == nil {
			w.funcs = map[string]bool{}
		}
		w.funcs[x.Name.Value] = true
		w.region(x.Body, "", depth)
		return cwd
	}
	return w.region(cmd, cwd, depth)
}

// region checks every statement inside n as run in cwd, or where it is not
// known when n may change directory (a loop runs again from where it went).
func (w *walker) region(n syntax.Node, cwd string, depth int) string {
	if w.moves(n) {
		cwd = ""
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Stmt:
			w.stmt(x, cwd, depth)
			return false
		case *syntax.DeclClause:
			w.decl(x)
		}
		return true
	})
	return cwd
}

// moves reports whether n holds a command that may change directory.
func (w *walker) moves(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			a := w.word(c.Args[0])
			found = found || !a.known || movers[a.s] || w.funcs[a.s]
		}
		return !found
	})
	return found
}

// movers may change the shell's directory, or run what may (eval, source).
var movers = set("cd", "pushd", "popd", "eval", "source", ".", "command", "builtin")

// call checks a simple command and returns the directory it leaves.
func (w *walker) call(x *syntax.CallExpr, cwd string, depth int) string {
	for _, a := range x.Assigns {
		// IFS=, read a b splits only read's input.
		if a.Name != nil && (len(x.Args) == 0 || a.Name.Value != "IFS") {
			w.setVar(a.Name.Value, "")
		}
		w.region(a, cwd, depth)
		if a.Value != nil && a.Name != nil {
			w.code(w.word(a.Value), a.Name.Value+"=")
		}
	}
	for _, a := range x.Args {
		w.region(a, cwd, depth)
	}
	return w.run(w.words(x.Args), cwd, depth)
}

// code asks for a value holding shell code the line does not run: bash runs
// a[$(cmd)] in a value it evaluates as arithmetic, a name or a prompt.
func (w *walker) code(a arg, word string) {
	if a.known && (strings.Contains(a.s, "$(") || strings.Contains(a.s, "`")) {
		w.ask(word, "passes the shell code in "+a.s+", which bash may run when it evaluates the value")
	}
}

// decl checks declare, local, export, readonly and typeset.
func (w *walker) decl(x *syntax.DeclClause) {
	variant := x.Variant.Value
	for _, a := range x.Args {
		v := w.word(a.Value)
		w.code(v, variant)
		switch {
		case a.Name != nil:
			w.setVar(a.Name.Value, variant)
		case !v.known:
			w.ask(variant, "declares a variable named only when it runs ("+v.s+")")
		case strings.HasPrefix(v.s, "-") || strings.HasPrefix(v.s, "+"):
			if strings.Trim(v.s[1:], "xrgaAp") != "" {
				w.ask(variant, "takes "+v.s+" (references, integers, functions): later lines then evaluate what they assign")
			}
		default:
			w.setVar(varName(v.s), variant)
		}
	}
}

// varName is the variable a NAME, NAME=value or NAME[i]=value word names.
func varName(s string) string {
	if i := strings.IndexAny(s, "=[+"); i >= 0 {
		return s[:i]
	}
	return s
}

// dangerous variables change what later commands run or read as options,
// or where ~, $TMPDIR and cd lead: assigning one asks.
var dangerous = set(
	"PATH", "EXECIGNORE", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS", "HOME", "TMPDIR", "CDPATH", "PWD",
	"IFS", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "BROWSER", "SSH_ASKPASS", "LESSOPEN", "LESSCLOSE", "GCONV_PATH",
	"XDG_CONFIG_HOME", "POSIXLY_CORRECT", "RIPGREP_CONFIG_PATH", "TAR_OPTIONS", "UNZIP", "UNZIPOPT", "GOTOOLCHAIN",
	"GOFLAGS", "GOENV", "GOMODCACHE", "GOPATH", "XZ_OPT", "XZ_DEFAULTS", "NODE_OPTIONS", "PYTHONPATH", "PYTHONHOME",
	"PYTHONSTARTUP", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
)

// dangerousPrefixes: BASH_ covers BASH_ENV, BASH_CMDS[ls]=/tmp/x, BASH_FUNC_.
var dangerousPrefixes = []string{"LD_", "GIT_", "BASH_"}

// setVar asks when word ("" for NAME=) assigns a dangerous variable.
func (w *walker) setVar(name, word string) {
	if !dangerous[name] && !slices.ContainsFunc(dangerousPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return
	}
	if word == "" {
		word = name + "="
	}
	w.ask(word, "sets "+name+", which changes what later commands run or where they write")
}

// redirect checks one redirection of a statement whose command word is word.
func (w *walker) redirect(r *syntax.Redirect, word, cwd string, depth int) {
	w.region(r.Word, cwd, depth)
	if r.Hdoc != nil {
		w.region(r.Hdoc, cwd, depth)
	}
	switch a := w.word(r.Word); {
	case r.Op == syntax.RdrIn || r.Op == syntax.DplIn || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc:
	case r.Op == syntax.DplOut && a.known && strings.Trim(a.s, "0123456789-") == "": // >&2, 2>&1, >&-; `>& f` is &>f
	case !w.scratch(a, cwd):
		w.ask(word, "writes to "+describe(a, cwd))
	}
}

// scratch reports whether the path a is in the scratch list, joined to cwd
// without cleaning: ".." after a link leaves the link's target.
func (w *walker) scratch(a arg, cwd string) bool {
	if !filepath.IsAbs(a.s) {
		a.s, a.known = cwd+"/"+a.s, a.known && cwd != ""
	}
	return a.known && w.c.InScratch(a.s)
}

// describe names a path in a reason.
func describe(a arg, cwd string) string {
	switch {
	case !a.known:
		return a.s + " (known only when it runs)"
	case !filepath.IsAbs(a.s) && cwd == "":
		return a.s + " (in a directory not known before it runs)"
	}
	return a.s + " (outside the scratch list)"
}

// arg is a word's value when known before the line runs, else its source.
type arg struct {
	s     string
	known bool
}

func (w *walker) words(words []*syntax.Word) []arg {
	args := make([]arg, len(words))
	for i, wd := range words {
		args[i] = w.word(wd)
	}
	return args
}

// word expands a word when that is known before the line runs: quotes and
// escapes removed, ~ and env expanded; any other expansion, a glob or braces is not.
func (w *walker) word(word *syntax.Word) arg {
	if word == nil {
		return arg{known: true}
	}
	var b strings.Builder
	if w.parts(&b, word.Parts, false) {
		return arg{s: b.String(), known: true}
	}
	b.Reset()
	_ = syntax.NewPrinter().Print(&b, word) // the source text, for reasons
	return arg{s: b.String()}
}

func (w *walker) parts(b *strings.Builder, parts []syntax.WordPart, quoted bool) bool {
	for i, p := range parts {
		switch x := p.(type) {
		case *syntax.Lit:
			v := x.Value
			if !quoted {
				if i := strings.IndexByte(v, '['); strings.ContainsAny(v, "*?") || i >= 0 && strings.Contains(v[i:], "]") ||
					strings.ContainsAny(v, "{}") && v != "{}" {
					return false // a glob or a brace expansion
				}
				if i == 0 && (v == "~" || strings.HasPrefix(v, "~/")) {
					home, ok := w.env["HOME"]
					if !ok {
						return false
					}
					v = home + v[1:]
				}
			}
			b.WriteString(unescape(v, quoted))
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar || !w.parts(b, x.Parts, true) {
				return false
			}
		case *syntax.ParamExp:
			v, ok := "", false
			if x.Param != nil && !x.Excl && !x.Length && !x.Width && x.Index == nil && x.Slice == nil && x.Repl == nil && x.Exp == nil {
				v, ok = w.env[x.Param.Value]
			}
			if !ok {
				return false
			}
			b.WriteString(v)
		default:
			return false
		}
	}
	return true
}

// unescape removes the backslashes bash removes: before any character
// outside quotes, before $ ` " \ inside double quotes.
func unescape(s string, quoted bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
