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
	// loose: not known, and it may be an option ("-o/x") or split into
	// several words when it runs; a known literal start that is no dash,
	// with every expansion quoted, makes one word that is no option.
	loose bool
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

// inputWords stands for words read at run time and appended or put in
// place (xargs' input, fd's {}): they may be options or several words.
var inputWords = arg{src: "{}", loose: true}

// foundPath stands for a path found at run time (find's {}): one word that
// starts with a starting point.
var foundPath = arg{src: "{}"}

// maxWords bounds the words braces expand to in one command (each word
// may give 16Ki): past it the rest stands as words not known.
const maxWords = 4096

// args expands the braces of words and evaluates each word that is known
// without running anything.
func (w *walker) args(words []*syntax.Word) []arg {
	out := make([]arg, 0, len(words))
	for _, word := range words {
		switch {
		case !syntax.SplitBraces(word):
			out = append(out, w.arg(word))
		case len(out) >= maxWords:
			out = append(out, arg{node: word, loose: true}) // too many words to list
		default:
			for x, err := range expand.BracesSeq(nil, word) {
				if err != nil || len(out) >= maxWords {
					out = append(out, arg{node: word, loose: true})
					break
				}
				out = append(out, w.arg(x))
			}
		}
	}
	return out
}

// arg evaluates one word: literals, quotes, a leading ~ (or one after the
// = of a NAME=value word, and after its colons) and the known variables.
// Anything else makes it unknown.
func (w *walker) arg(word *syntax.Word) arg {
	if word == nil {
		return arg{}
	}
	a := arg{known: true, node: word}
	var b strings.Builder
	unknown := func() arg {
		lead := b.String()
		if lead == "" && w.pid(word) {
			return arg{node: word} // $! $$ $? $#: digits, one word
		}
		return arg{node: word, loose: lead == "" || lead[0] == '-' || w.splits(word)}
	}
	for i, part := range word.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			v := x.Value
			if i == 0 {
				var ok bool
				if v, ok = w.tilde(v, len(word.Parts) == 1); !ok {
					return arg{node: word, loose: w.splits(word)} // ~user, ~+, or HOME not known
				}
			}
			if strings.ContainsAny(v, "*?[") {
				a.glob = true
			}
			b.WriteString(unescape(v))
		case *syntax.SglQuoted:
			if x.Dollar && strings.Contains(x.Value, `\`) {
				return unknown()
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
						return unknown()
					}
					b.WriteString(v)
				default:
					return unknown()
				}
			}
		case *syntax.ParamExp:
			v, ok := w.param(x)
			if !ok || w.ifsSet || strings.ContainsAny(v, " \t\n*?[") {
				return unknown() // split or globbed at run time
			}
			b.WriteString(v)
		default:
			return unknown()
		}
	}
	a.s = b.String()
	return a
}

// tilde expands the ~ of a word's first literal: at its start, and in a
// NAME=value word after the = and the colons (bash does so in any such
// word: dd of=~/x). A ~ it cannot expand (~user, ~+, HOME not known)
// makes it fail. whole says the literal is the whole word.
func (w *walker) tilde(v string, whole bool) (string, bool) {
	if !strings.Contains(v, "~") {
		return v, true
	}
	prefix, rest := "", v
	if !strings.HasPrefix(v, "~") {
		name, val, ok := strings.Cut(v, "=")
		if !ok || !isName(name) || !strings.Contains(val, "~") {
			return v, true
		}
		prefix, rest = name+"=", val
	}
	parts := []string{rest}
	if prefix != "" {
		parts = strings.Split(rest, ":")
	}
	for i, p := range parts {
		if !strings.HasPrefix(p, "~") {
			continue
		}
		name, tail, slash := strings.Cut(p[1:], "/")
		home, ok := w.known("HOME")
		// The last part's ~ may go on in a quoted part (~"user").
		if name != "" || !ok || (i == len(parts)-1 && !whole && !slash) {
			return "", false
		}
		if slash {
			home += "/" + tail
		}
		parts[i] = home
	}
	return prefix + strings.Join(parts, ":"), true
}

func isName(s string) bool {
	for i, c := range s {
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return s != ""
}

// pid reports whether a word is one of the shell's numeric parameters
// ($! $$ $? $#), which expand to digits: one word, no option (unless IFS
// holds digits).
func (w *walker) pid(word *syntax.Word) bool {
	if len(word.Parts) != 1 || w.ifsSet {
		return false
	}
	p, ok := word.Parts[0].(*syntax.ParamExp)
	return ok && p.Param != nil && len(p.Param.Value) == 1 && strings.Contains("!$?#", p.Param.Value) &&
		!p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil
}

// splits reports whether a word has an unquoted expansion that is not
// known: it may become several words.
func (w *walker) splits(word *syntax.Word) bool {
	for _, part := range word.Parts {
		switch x := part.(type) {
		case *syntax.Lit, *syntax.SglQuoted, *syntax.DblQuoted, *syntax.ProcSubst:
		case *syntax.ArithmExp:
			if w.ifsSet {
				return true // digits can be field separators
			}
		case *syntax.ParamExp:
			if w.pid(&syntax.Word{Parts: []syntax.WordPart{x}}) {
				continue
			}
			if v, ok := w.param(x); !ok || w.ifsSet || strings.ContainsAny(v, " \t\n*?[") {
				return true
			}
		default:
			return true
		}
	}
	return false
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
		// Not filepath.Join: ".." after a link in d leaves the link's target.
		if d == "" || !w.c.InScratch(d+"/"+p) {
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
