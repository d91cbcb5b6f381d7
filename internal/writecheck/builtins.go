package writecheck

import (
	"slices"
	"strings"
)

// builtins are the shell builtins that assign variables or run commands
// (a variable such as PATH, TMPDIR or IFS decides what later commands run
// or where they write).
var builtins = map[string]func(*cmd) cwdSet{
	"printf": func(c *cmd) cwdSet {
		// printf -v NAME: only a first word is an option.
		if len(c.args) > 0 {
			switch a := c.args[0]; {
			case a.loose:
				c.ask("takes " + a.text() + ", which may be -v, assigning a variable")
			case a.known && a.s == "-v" && len(c.args) > 1:
				c.assigns(c.args[1])
			case a.known && strings.HasPrefix(a.s, "-v"):
				c.assigns(literal(a.s[2:]))
			}
		}
		return c.cwds
	},
	"read": func(c *cmd) cwdSet {
		opts, names := leading(c.args, "adinNptu")
		c.assigns(append(vals(opts, "-a"), names...)...)
		return c.cwds
	},
	"getopts": func(c *cmd) cwdSet {
		if _, ops := parse(c.args, ""); len(ops) > 1 {
			c.assigns(ops[1])
		}
		return c.cwds
	},
	"unset": func(c *cmd) cwdSet {
		// A variable unset is empty from then on; without -v a name may be
		// a function, which a later call then no longer runs.
		opts, names := leading(c.args, "")
		for _, n := range names {
			if !n.known {
				c.ask("unsets a variable named only when it runs")
				continue
			}
			if !has(opts, "-v") {
				delete(c.w.funcs, n.s)
			}
			if !has(opts, "-f") {
				c.w.forget(c.w.element(n.s, c.name))
			}
		}
		return c.cwds
	},
	"set": func(c *cmd) cwdSet {
		// set -k puts NAME=value words after a command's name in its
		// environment (git status GIT_DIR=…); -o posix changes how later
		// lines expand words.
		for i := 0; i < len(c.args); i++ {
			a := c.args[i]
			switch {
			case !a.known:
				c.ask("takes " + a.text() + ", which may be an option when it runs")
				return c.cwds
			case a.s == "--" || a.s == "-" || !strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "+"):
				return c.cwds // the positional parameters follow
			case a.s[0] == '-' && strings.Contains(a.s, "k"):
				c.ask("puts NAME=value words after a command in its environment (set -k)")
				return c.cwds
			case strings.HasSuffix(a.s, "o") && i+1 < len(c.args):
				i++
				if n := c.args[i]; a.s[0] == '-' && (!n.known || n.s == "keyword" || n.s == "posix") {
					c.ask("sets the shell option " + n.text() + ", which changes how this and later command lines run")
					return c.cwds
				}
			}
		}
		return c.cwds
	},
	"declare": declare, "local": declare, "typeset": declare, "export": declare, "readonly": declare,
	"let": func(c *cmd) cwdSet {
		// The shell parses let as arithmetic; reached as a word (builtin
		// let) its assignments are not read.
		for _, a := range c.args {
			if !a.known || strings.ContainsAny(a.s, "=") || strings.Contains(a.s, "++") || strings.Contains(a.s, "--") {
				c.ask("assigns variables")
				break
			}
		}
		return c.cwds
	},
	"jobs": func(c *cmd) cwdSet {
		// jobs -x COMMAND runs it, job specs replaced by process groups.
		if opts, rest := leading(c.args, ""); has(opts, "-x") {
			return c.w.run(rest, c.cwds, c.depth, false)
		}
		return c.cwds
	},
	"wait": func(c *cmd) cwdSet {
		// wait -p NAME puts a job's process id in NAME.
		opts, _ := leading(c.args, "p")
		c.assigns(vals(opts, "-p")...)
		return c.cwds
	},
	"compgen": completion, "complete": completion,
	"test": testCmd, "[": testCmd,
	"shopt": func(c *cmd) cwdSet {
		// In this and later command lines, cdable_vars makes cd NAME go to
		// $NAME, and nullglob drops a pattern that matches nothing, which
		// moves the words after it: sort -o /tmp/x* f writes f.
		for _, a := range c.args {
			if !a.known || (a.s == "cdable_vars" || a.s == "nullglob") && !hasWord(c.args, "-u", "-p", "-q") {
				c.ask("sets the shell option " + a.text() + ", which changes where cd goes or which word is which")
				break
			}
		}
		return c.cwds
	},
}

func hasWord(args []arg, words ...string) bool {
	for _, a := range args {
		if a.known && slices.Contains(words, a.s) {
			return true
		}
	}
	return false
}

// testCmd: test -v NAME (and -R) evaluates NAME's subscript. A word that
// splits may bring its own -v.
func testCmd(c *cmd) cwdSet {
	for i, a := range c.args {
		if !a.known && a.node != nil && c.w.splits(a.node) {
			c.ask("takes " + a.text() + ", which may split into -v NAME, whose subscript would run commands")
			return c.cwds
		}
		if a.known && (a.s == "-v" || a.s == "-R") && i+1 < len(c.args) {
			c.w.varTest(c.args[i+1], c.name)
		}
	}
	return c.cwds
}

// completion: compgen -C runs a command for the words (complete -C when
// completing), and -W's word list is expanded like shell words, command
// substitutions included.
func completion(c *cmd) cwdSet {
	opts, _ := parse(c.args, "AGWCFXPSo")
	if has(opts, "-C") {
		c.ask("runs a command to list completions")
	}
	for _, list := range vals(opts, "-W") {
		if !list.known {
			c.ask("expands a word list known only when it runs, command substitutions included")
			continue
		}
		c.w.script(": "+list.s, c.cwds, c.depth+1)
	}
	return c.cwds
}

// declare and the like reached as words (builtin export PATH=…); the
// shell's own declarations are DeclClauses (walker.decl).
func declare(c *cmd) cwdSet {
	ref := false
	for _, a := range c.args {
		if a.known && strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "n") && c.name != "export" { // export -n unexports
			ref = true
			c.ask("declares a reference: assigning it, in later command lines too, assigns the variable it names")
		}
		if a.known && strings.HasPrefix(a.s, "-") && strings.Contains(a.s, "i") {
			c.ask("gives variables the integer attribute: assigning one evaluates the value as arithmetic, which can run commands")
		}
	}
	for _, a := range c.args {
		switch {
		case !a.known:
			c.ask("declares a variable named only when it runs (" + a.text() + ")")
		case strings.HasPrefix(a.s, "-") || strings.HasPrefix(a.s, "+"):
		default:
			name, val, eq := strings.Cut(a.s, "=")
			c.assigns(literal(name))
			if ref && eq {
				c.assigns(literal(val))
			}
			if ref {
				c.w.ref(name)
			}
		}
	}
	return c.cwds
}

// assigns notes variables the command assigns, by name (NAME or
// NAME[index]).
func (c *cmd) assigns(names ...arg) {
	for _, n := range names {
		if !n.known {
			c.ask("assigns a variable named only when it runs (" + n.text() + ")")
			continue
		}
		c.w.setVar(c.w.element(n.s, c.name), c.name, true)
	}
}
