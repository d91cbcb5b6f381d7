package router

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxNesting bounds how deep Commands looks into `bash -c '...'` and `eval`
// strings nested inside each other.
const maxNesting = 8

// Commands returns the name of every command line would run, in source order:
// the command word of each simple command of a compound line (lists,
// pipelines, subshells, conditionals, loops, function bodies, command and
// process substitutions), also looking through wrappers that run their
// arguments as a command (`bash -c STR`, `bash CMD ...`, `sh`, `env`, `exec`,
// `command`, `nohup`, `time`, `sudo`, `xargs`, `timeout`, `nice`, `eval`).
// A command word that is not a plain literal (`$CMD`) is reported as written.
// When line is not valid shell syntax (an Agent Shell command with an
// unclosed quote, say), only its first word is reported.
func Commands(line string) []string {
	var c collector
	c.script(line, 0)
	if len(c.out) == 0 {
		if w := FirstWord(line); w != "" {
			c.out = append(c.out, w)
		}
	}
	return c.out
}

type collector struct {
	out []string
}

func (c *collector) script(src string, depth int) {
	if depth > maxNesting {
		return
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		if w := FirstWord(src); w != "" {
			c.out = append(c.out, w)
		}
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			c.call(call.Args, depth)
		}
		return true
	})
}

// call records args[0] and follows wrappers into the command they run.
func (c *collector) call(args []*syntax.Word, depth int) {
	if len(args) == 0 || depth > maxNesting {
		return
	}
	name, _ := literal(args[0])
	c.out = append(c.out, name)
	rest := args[1:]
	switch path.Base(name) {
	case "bash", "sh", "zsh", "dash", "ksh":
		c.shell(rest, depth)
	case "eval":
		var parts []string
		for _, w := range rest {
			s, _ := literal(w)
			parts = append(parts, s)
		}
		c.script(strings.Join(parts, " "), depth+1)
	case "env":
		i := 0
		for ; i < len(rest); i++ {
			s, _ := literal(rest[i])
			if s == "-u" || s == "-C" || s == "--unset" || s == "--chdir" {
				i++
				continue
			}
			if strings.HasPrefix(s, "-") || strings.Contains(s, "=") {
				continue
			}
			break
		}
		c.wrapped(rest, i, depth)
	case "exec", "command", "builtin", "nohup", "time", "sudo", "doas", "setsid", "stdbuf", "nice", "ionice", "chrt":
		c.wrapped(rest, skipOptions(rest, "-n", "-u", "-g", "-c", "-a"), depth)
	case "timeout":
		i := skipOptions(rest, "-s", "-k", "--signal", "--kill-after")
		c.wrapped(rest, i+1, depth) // the duration
	case "xargs":
		c.wrapped(rest, skipOptions(rest, "-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"), depth)
	}
}

func (c *collector) wrapped(args []*syntax.Word, from, depth int) {
	if from < len(args) {
		c.call(args[from:], depth+1)
	}
}

// shell handles the arguments of a shell program: `-c STR` runs STR, the first
// non-option argument is a script or (for the Agent Shell's `bash <command>`
// wrapper) a command.
func (c *collector) shell(args []*syntax.Word, depth int) {
	for i := 0; i < len(args); i++ {
		s, _ := literal(args[i])
		if s == "--" {
			c.wrapped(args, i+1, depth)
			return
		}
		if strings.HasPrefix(s, "--") {
			continue // --norc, --login, --help, ...
		}
		if strings.HasPrefix(s, "-") && len(s) > 1 {
			if strings.ContainsRune(s[1:], 'c') && i+1 < len(args) {
				script, _ := literal(args[i+1])
				c.script(script, depth+1)
				return
			}
			if s == "-o" || s == "-O" {
				i++
			}
			continue
		}
		c.wrapped(args, i, depth)
		return
	}
}

// skipOptions returns the index of the first argument that is not an option;
// options listed in withValue consume the next argument too.
func skipOptions(args []*syntax.Word, withValue ...string) int {
	i := 0
	for ; i < len(args); i++ {
		s, _ := literal(args[i])
		if s == "--" {
			return i + 1
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			return i
		}
		for _, o := range withValue {
			if s == o {
				i++
				break
			}
		}
	}
	return i
}

// literal returns the value of w after quote removal and whether w was a
// plain literal. For words with expansions it returns the source text.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	if !appendLiteral(&b, w.Parts, false) {
		var src strings.Builder
		if err := syntax.NewPrinter().Print(&src, w); err != nil {
			return b.String(), false
		}
		return src.String(), false
	}
	return b.String(), true
}

func appendLiteral(b *strings.Builder, parts []syntax.WordPart, quoted bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, quoted))
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar || !appendLiteral(b, p.Parts, true) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// unescape removes shell backslash escapes from a literal: every escape
// outside quotes, only \" \\ \$ \` inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			next := s[i+1]
			if !quoted || strings.IndexByte("\"\\$`", next) >= 0 {
				b.WriteByte(next)
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
