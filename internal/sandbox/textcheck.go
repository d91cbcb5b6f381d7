package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/synapse-agent/synapse/internal/command"
)

// maxTextDepth bounds the recursion into `bash -c` and `eval` strings.
const maxTextDepth = 4

// interpreters whose -c/-e code strings are scanned for quoted path literals.
var interpreters = map[string]bool{"python": true, "python3": true, "python2": true, "perl": true, "ruby": true, "node": true, "php": true}

var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true}

// quotedPath is compiled on first use, not at every start.
var quotedPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']([~/][^"']*)["']`) })

// checkCommandText parses cmd and reports a blocked result when a word of it
// (an argument, a redirection target, the code of `bash -c`/`eval`, a quoted
// path in a `python -c` string) names a blacklisted path, following `cd` to
// resolve relative paths. It is a friendly early refusal; the mounts remain
// the guard for whatever it cannot see (variables, generated names).
// stable is what a sandbox keeps from one check to the next (nil: nothing).
func checkCommandText(cmd, cwd, home string, rules []rule, stable *stableDirs) (command.Result, bool) {
	if len(rules) == 0 {
		return command.Result{}, false
	}
	rs := &resolver{home: home, stable: stable}
	entry, path, ok := textHit(cmd, cwd, rs, rules, 0)
	if !ok {
		return command.Result{}, false
	}
	return blockedResult("command touches a blacklisted path: "+path, entry), true
}

func blockedResult(reason, resource string) command.Result {
	return command.Result{
		Stderr:          fmt.Sprintf("sandbox: blocked: %s (rule %s)\n", reason, resource),
		ExitCode:        1,
		Blocked:         true,
		BlockedReason:   reason,
		BlockedResource: resource,
	}
}

func textHit(cmd, cwd string, rs *resolver, rules []rule, depth int) (entry, path string, hit bool) {
	home := rs.home
	if depth > maxTextDepth {
		return "", "", false
	}
	parser := syntax.NewParser
	if depth == 0 && rs.stable != nil {
		parser = rs.stable.parser
	}
	f, err := parser().Parse(strings.NewReader(cmd), "")
	if err != nil {
		return "", "", false // unparsable: the shell will reject it, the mounts guard it
	}
	check := func(p string) bool {
		if p == "" {
			return false
		}
		if e, ap, ok := pathHit(p, cwd, rs, rules); ok {
			entry, path, hit = e, ap, true
			return true
		}
		return false
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if hit {
			return false
		}
		switch x := n.(type) {
		case *syntax.Redirect:
			if x.Word != nil {
				if s, ok := wordText(x.Word, home); ok {
					check(s)
				}
			}
		case *syntax.CallExpr:
			var args []string
			for _, w := range x.Args {
				s, ok := wordText(w, home)
				if !ok {
					s = "\x00" // unknown: never a path, keeps positions
				}
				args = append(args, s)
			}
			for _, a := range args {
				if check(a) {
					return false
				}
				if _, v, ok := strings.Cut(a, "="); ok && check(v) {
					return false
				}
			}
			if len(args) == 0 {
				return true
			}
			name := filepath.Base(args[0])
			switch {
			case name == "cd":
				switch {
				case len(args) == 1:
					cwd = home
				case args[1] != "\x00" && args[1] != "-":
					cwd = absPath(args[1], cwd)
				}
			case name == "eval":
				if e, p, ok := textHit(strings.Join(args[1:], " "), cwd, rs, rules, depth+1); ok {
					entry, path, hit = e, p, true
					return false
				}
			case shells[name]:
				for i := 1; i+1 < len(args); i++ {
					if strings.HasPrefix(args[i], "-") && !strings.HasPrefix(args[i], "--") && strings.Contains(args[i], "c") {
						if e, p, ok := textHit(args[i+1], cwd, rs, rules, depth+1); ok {
							entry, path, hit = e, p, true
							return false
						}
						break
					}
				}
			case interpreters[strings.TrimRight(name, "0123456789.")] || interpreters[name]:
				for _, a := range args[1:] {
					for _, m := range quotedPath().FindAllStringSubmatch(a, -1) {
						if check(expandHome(m[1], home)) {
							return false
						}
					}
				}
			}
		}
		return true
	})
	return entry, path, hit
}

// wordText flattens a word whose value is known without running anything:
// literals, quotes, a leading unquoted `~`, and $HOME. Anything else (other
// variables, command substitutions) makes it unknown.
func wordText(w *syntax.Word, home string) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 && home != "" && (v == "~" || strings.HasPrefix(v, "~/")) {
				v = home + v[1:] // keep a trailing slash: `~/".ssh"`
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, ip := range x.Parts {
				switch y := ip.(type) {
				case *syntax.Lit:
					b.WriteString(y.Value)
				case *syntax.ParamExp:
					if !isHomeParam(y) {
						return "", false
					}
					b.WriteString(home)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			if !isHomeParam(x) {
				return "", false
			}
			b.WriteString(home)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func isHomeParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "HOME" && !p.Excl && !p.Length && !p.Width &&
		p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.NestedParam == nil
}

func absPath(p, cwd string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if cwd == "" {
		cwd = "/"
	}
	return filepath.Join(cwd, p)
}

// pathHit reports whether p, taken as a path relative to cwd, is covered by a
// blacklist rule, before or after resolving symlinks.
func pathHit(p, cwd string, rs *resolver, rules []rule) (entry, abs string, ok bool) {
	if strings.ContainsAny(p, "\x00\n") {
		return "", "", false
	}
	abs = absPath(p, cwd)
	if e, ok := matchRules(rules, abs); ok {
		return e, abs, true
	}
	if r := rs.resolve(abs); r != abs {
		if e, ok := matchRules(rules, r); ok {
			return e, abs, true
		}
	}
	return "", "", false
}

// resolver gives resolvePath's answers for one check of a command's text.
// resolvePath stats every component of a path, and the words of a command
// share their directories (mostly its cwd, deep in a workspace): resolving
// each directory once per check saves about twenty stats for `echo hi`
// (issue 30). From one command to the next only what stable keeps is
// kept: the next command may change the links below a writable root.
type resolver struct {
	home   string
	dirs   map[string]string // a directory and what resolvePath makes of it
	stable *stableDirs       // nil: nothing kept between checks
}

// stableDirs keeps, for one sandbox, what directories no command can change
// resolve to: those outside its writable roots (the roots themselves
// included, which no command can rename or replace: a mount point under
// bwrap, in a directory it cannot write under Landlock) that resolve to
// themselves (no link whose target could lie in a writable root). The
// words of a command are mostly in its cwd, deep below such directories:
// their stats were most of the check (issue 30).
type stableDirs struct {
	roots []string          // where commands can write
	dirs  map[string]string // directory -> what resolvePath makes of it (itself)
	p     *syntax.Parser    // the checks' own (made anew, one was most of their allocations)
}

// parser is the checks' parser, for the command itself (not the code of a
// `bash -c` in it, parsed while the command's tree is walked).
func (s *stableDirs) parser(...syntax.ParserOption) *syntax.Parser {
	if s.p == nil {
		s.p = syntax.NewParser()
	}
	return s.p
}

// maxStableDirs bounds what a sandbox keeps: enough for the directories
// of a session's commands.
const maxStableDirs = 4096

func (s *stableDirs) get(dir string) (string, bool) {
	if s == nil {
		return "", false
	}
	rd, ok := s.dirs[dir]
	return rd, ok
}

func (s *stableDirs) put(dir, rd string) {
	if s == nil || rd != dir || len(s.dirs) >= maxStableDirs {
		return
	}
	for _, w := range s.roots {
		if dir != w && within(dir, w) {
			return
		}
	}
	if s.dirs == nil {
		s.dirs = map[string]string{}
	}
	s.dirs[dir] = rd
}

// resolve returns resolvePath(abs, "/", home) for a clean absolute path: the
// resolved parent and the last name, unless that name is a symbolic link,
// which resolvePath follows (or, dangling, keeps).
func (r *resolver) resolve(abs string) string {
	dir := filepath.Dir(abs)
	if dir == abs {
		return resolvePath(abs, "/", r.home)
	}
	rd, ok := r.dirs[dir]
	if !ok {
		if rd, ok = r.stable.get(dir); !ok {
			rd = r.resolve(dir)
			r.stable.put(dir, rd)
		}
		if r.dirs == nil {
			r.dirs = map[string]string{}
		}
		r.dirs[dir] = rd
	}
	p := filepath.Join(rd, filepath.Base(abs))
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return resolvePath(abs, "/", r.home)
	}
	return p
}
