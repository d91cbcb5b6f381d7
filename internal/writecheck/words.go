package writecheck

import (
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// arg is one word of a command after brace expansion.
type arg struct {
	s     string // the value, when known
	known bool   // false: it depends on something run or set at run time
	glob  bool   // has unquoted pattern characters: it names whatever matches
	src   string // as written, for messages ("" : print node)
	node  *syntax.Word
}

// text is the word as written, for messages.
func (a arg) text() string {
	switch {
	case a.src != "":
		return a.src
	case a.node != nil:
		return printWord(a.node)
	}
	return a.s
}

// unknownArg stands for a word supplied at run time (xargs' input, find's {}).
var unknownArg = arg{src: "{}"}

// args expands the braces of words and evaluates each word that is known
// without running anything.
func (w *walker) args(words []*syntax.Word) []arg {
	out := make([]arg, 0, len(words))
	for _, word := range words {
		if !syntax.SplitBraces(word) {
			out = append(out, w.arg(word))
			continue
		}
		for x, err := range expand.BracesSeq(nil, word) {
			if err != nil {
				out = append(out, arg{node: word})
				break
			}
			out = append(out, w.arg(x))
		}
	}
	return out
}

// arg evaluates one word: literals, quotes, a leading ~ and the known
// variables. Anything else makes it unknown.
func (w *walker) arg(word *syntax.Word) arg {
	if word == nil {
		return arg{}
	}
	a := arg{known: true, node: word}
	var b strings.Builder
	for i, part := range word.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				name, rest, _ := strings.Cut(v[1:], "/")
				home, ok := w.known("HOME")
				if name != "" || !ok || (len(word.Parts) > 1 && !strings.Contains(v, "/")) {
					return arg{node: word} // ~user, ~+, or HOME not known
				}
				v = home
				if strings.Contains(x.Value, "/") {
					v += "/" + unescape(rest)
				}
				a.glob = a.glob || strings.ContainsAny(rest, "*?[")
				b.WriteString(v)
				continue
			}
			if strings.ContainsAny(v, "*?[") {
				a.glob = true
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				return arg{node: word}
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			for _, p := range x.Parts {
				switch y := p.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeDouble(y.Value))
				case *syntax.ParamExp:
					v, ok := w.param(y)
					if !ok {
						return arg{node: word}
					}
					b.WriteString(v)
				default:
					return arg{node: word}
				}
			}
		case *syntax.ParamExp:
			v, ok := w.param(x)
			if !ok || strings.ContainsAny(v, " \t\n*?[") {
				return arg{node: word} // split or globbed at run time
			}
			b.WriteString(v)
		default:
			return arg{node: word}
		}
	}
	a.s = b.String()
	return a
}

// known is the value of a variable known before the line runs and not
// assigned in it.
func (w *walker) known(name string) (string, bool) {
	if w.unset[name] {
		return "", false
	}
	v, ok := w.c.Env[name]
	return v, ok && v != ""
}

func (w *walker) param(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.IsSet || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil || len(p.Modifiers) > 0 || p.Flags != nil {
		return "", false
	}
	return w.known(p.Param.Value)
}

// unescape removes the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDouble removes the backslashes that double quotes honour.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// scratch reports whether a written path is in the scratch list from every
// directory the command may run in. A pattern counts by the directory its
// matches lie in (the part before the first pattern character).
func (w *walker) scratch(a arg, cwds cwdSet) bool {
	if !a.known || a.s == "" {
		return false
	}
	p := a.s
	if a.glob {
		i := strings.IndexAny(p, "*?[")
		if strings.Contains(p[i:], "..") {
			return false
		}
		j := strings.LastIndexByte(p[:i], '/')
		if j < 0 {
			p = "."
		} else {
			p = p[:j+1] + "."
		}
	}
	if filepath.IsAbs(p) {
		return w.c.InScratch(p)
	}
	for _, d := range cwds {
		if d == "" || !w.c.InScratch(filepath.Join(d, p)) {
			return false
		}
	}
	return len(cwds) > 0
}

// commandName is the word a command is known by: the name as written,
// with the standard binary directories dropped (/usr/bin/rm is rm; ./rm
// is not).
func commandName(s string) string {
	for _, d := range []string{"/usr/local/bin/", "/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"} {
		if rest, ok := strings.CutPrefix(s, d); ok && rest != "" && !strings.Contains(rest, "/") {
			return rest
		}
	}
	return s
}
