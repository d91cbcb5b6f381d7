package writecheck

import (
	"regexp"
	"strings"
)

func sed(c *cmd) cwdSet {
	opts, ops := parse(c.args, "efl", "--expression", "--file", "--line-length")
	inPlace := has(opts, "-i", "--in-place")
	// -i.bak is parsed as -i then -. -b -a -k: find it in the words.
	for _, a := range c.args {
		if a.known && strings.HasPrefix(a.s, "-") && !strings.HasPrefix(a.s, "--") && strings.Contains(a.s, "i") {
			if before, _, _ := strings.Cut(a.s[1:], "i"); strings.Trim(before, "nrEsuz") == "" {
				inPlace = true
			}
		}
	}
	scripts := vals(opts, "-e", "--expression")
	files := ops
	if len(scripts) == 0 && len(vals(opts, "-f", "--file")) == 0 && len(ops) > 0 {
		scripts, files = ops[:1], ops[1:]
	}
	if len(vals(opts, "-f", "--file")) > 0 {
		c.ask("runs a sed script from a file")
	}
	for _, s := range scripts {
		if !s.known {
			c.ask("its script is known only when it runs (" + s.text() + ")")
			continue
		}
		written, runs := sedScript(s.s)
		if runs {
			c.ask("its script may run a command, or cannot be read (" + s.text() + ")")
		}
		for _, f := range written {
			c.writes(literal(f))
		}
	}
	if inPlace {
		if len(files) == 0 {
			files = append(files, arg{src: "its files"})
		}
		c.writes(files...)
	}
	return c.cwds
}

// sedScript reads a GNU sed script for the files its w and W commands and
// s///w flags write, and reports whether it runs commands (e, s///e) or
// holds something it cannot read, which counts as running one.
func sedScript(s string) (files []string, runs bool) {
	i := 0
	// toEOL returns the rest of the line (a file name, text, a command).
	toEOL := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		out := s[i : i+j]
		i += j
		return out
	}
	skipBlank := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited skips past text ended by an unescaped delim.
	delimited := func(delim byte) bool {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case delim:
				i++
				return true
			}
		}
		return false
	}
	// regex skips past a regular expression ended by an unescaped delim;
	// a bracket expression may hold the delim ([/]), as in GNU sed.
	regex := func(delim byte) bool {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '[':
				j := i + 1
				if j < len(s) && s[j] == '^' {
					j++
				}
				if j < len(s) && s[j] == ']' {
					j++ // a ] first is one of the characters
				}
				for j < len(s) && s[j] != ']' {
					if s[j] == '[' && j+1 < len(s) && strings.IndexByte(":.=", s[j+1]) >= 0 {
						end := strings.Index(s[j+2:], string(s[j+1])+"]") // [:alpha:] [.x.] [=x=]
						if end < 0 {
							return false
						}
						j += end + 4
						continue
					}
					j++
				}
				if j >= len(s) {
					return false
				}
				i = j
			case delim:
				i++
				return true
			}
		}
		return false
	}
	digits := func() {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	// address skips one address; it reports false on a malformed one.
	address := func(second bool) bool {
		switch {
		case i >= len(s):
		case s[i] >= '0' && s[i] <= '9':
			digits()
			if i < len(s) && s[i] == '~' {
				i++
				digits()
			}
		case s[i] == '$':
			i++
		case s[i] == '/':
			i++
			if !regex('/') {
				return false
			}
		case s[i] == '\\' && i+1 < len(s):
			i += 2
			if !regex(s[i-1]) {
				return false
			}
		case second && (s[i] == '+' || s[i] == '~'):
			i++
			digits()
			return true
		default:
			return true
		}
		for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for i < len(s) {
		skipBlank()
		if i >= len(s) {
			break
		}
		switch s[i] {
		case ';', '\n', '}':
			i++
			continue
		case '#':
			toEOL()
			continue
		}
		if !address(false) {
			return files, true
		}
		skipBlank()
		if i < len(s) && s[i] == ',' {
			i++
			skipBlank()
			if !address(true) {
				return files, true
			}
		}
		skipBlank()
		for i < len(s) && (s[i] == '!' || s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return files, true // an address without a command
		}
		ch := s[i]
		i++
		switch {
		case ch == '{':
			continue // a command may follow at once
		case strings.IndexByte("=dDgGhHnNpPxzF", ch) >= 0:
		case strings.IndexByte("lLqQ", ch) >= 0:
			skipBlank()
			digits()
		case ch == ':' || ch == 'b' || ch == 't' || ch == 'T' || ch == 'v':
			// A label: up to ; or the line's end.
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		case ch == 'a' || ch == 'i' || ch == 'c':
			// Text up to the line's end; a line ending in \ goes on.
			for {
				line := toEOL()
				if !strings.HasSuffix(line, `\`) || strings.HasSuffix(line, `\\`) || i >= len(s) {
					break
				}
				i++ // the newline
			}
		case ch == 'r' || ch == 'R':
			toEOL()
		case ch == 'w' || ch == 'W':
			skipBlank()
			files = append(files, toEOL())
		case ch == 'e':
			return files, true
		case ch == 's' || ch == 'y':
			if i >= len(s) || s[i] == '\n' || s[i] == '\\' {
				return files, true
			}
			delim := s[i]
			i++
			if ch == 's' && !regex(delim) || ch == 'y' && !delimited(delim) || !delimited(delim) {
				return files, true
			}
			if ch == 'y' {
				break
			}
		flags:
			for i < len(s) {
				switch f := s[i]; {
				case strings.IndexByte("gpiImM0123456789", f) >= 0:
					i++
				case f == 'e':
					return files, true
				case f == 'w':
					i++
					skipBlank()
					files = append(files, toEOL())
					break flags
				default:
					break flags
				}
			}
		default:
			return files, true
		}
		// What may follow a command: blanks, then ; } # or the line's end.
		skipBlank()
		if i < len(s) && strings.IndexByte(";\n}#", s[i]) < 0 {
			return files, true
		}
	}
	return files, false
}

// awkWrites finds output redirections, pipes to and from commands
// (| getline, |& getline), system(), and gawk's @ directives and indirect
// calls (@load, @include, @f() with f = "system") in an awk program. It
// errs towards finding one (print (a > b) asks).
var awkWrites = regexp.MustCompile(`system\s*\(|\|&?\s*getline|\bprintf?\b[^;{}\n]*(>|\|)|@\s*[A-Za-z_]|\bfflush\b`)

func awk(c *cmd) cwdSet {
	opts, ops := parse(c.args, "fvFiElWe", "--file", "--assign", "--field-separator", "--include", "--exec", "--load", "--source")
	if len(vals(opts, "-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load")) > 0 {
		c.ask("runs an awk program from a file")
		return c.cwds
	}
	// gawk's profile, variable dump and pretty print write files (awkprof.out
	// …); its debugger reads commands.
	if has(opts, "-p", "--profile", "-d", "--dump-variables", "-o", "--pretty-print", "-D", "--debug") {
		c.ask("writes a profile or dump file, or runs the debugger")
		return c.cwds
	}
	for _, v := range vals(opts, "-W") {
		if !v.known || v.s != "version" && v.s != "v" && v.s != "usage" {
			c.ask("takes -W " + v.text() + " (gawk and mawk options that may run programs or write files)")
			return c.cwds
		}
	}
	// -e/--source give program text; without them the first operand is the
	// program. With them, check the first operand too: a gawk that stops at
	// it reads it as the program.
	progs := vals(opts, "-e", "--source")
	if len(ops) > 0 {
		progs = append(progs, ops[0])
	}
	for _, p := range progs {
		// A backslash-newline goes on with the statement: print x \<NL> > "f".
		if !p.known || awkWrites.MatchString(strings.ReplaceAll(p.s, "\\\n", " ")) {
			c.ask("its program may write a file or run a command")
			break
		}
	}
	return c.cwds
}
