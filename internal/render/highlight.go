package render

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The renderer's own highlighter for fenced code: keywords, strings,
// comments, numbers and called names of a handful of languages, one line
// at a time. It replaces a general highlighting library whose package
// initialisation (every lexer and style registered at start-up) cost
// megabytes and tens of milliseconds in every process, `--version` and
// headless runs included; this costs nothing until code is rendered.

// SGR codes of code tokens.
const (
	sgrKeyword = "\x1b[96m" // bright cyan
	sgrString  = "\x1b[32m"
	sgrNumber  = "\x1b[35m"
	sgrComment = "\x1b[90m" // bright black
	sgrCall    = "\x1b[93m" // bright yellow: a name followed by "("
	sgrAdded   = "\x1b[32m" // diff
	sgrRemoved = "\x1b[31m"
)

// codeLang is what the highlighter knows of one language.
type codeLang struct {
	keywords     map[string]bool
	lineComments []string  // "//", "#", "--"
	block        [2]string // a block comment's ends, when it has one
	quotes       string    // characters that open a string
	diff         bool      // a diff: whole lines coloured by their sign
}

// Keywords of the languages, as one string each (split when a block in
// that language is first rendered).
const (
	kwGo     = "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota"
	kwPython = "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False self"
	kwJS     = "async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield null undefined true false"
	kwTS     = kwJS + " abstract as declare enum implements interface keyof namespace private protected public readonly type"
	kwShell  = "if then else elif fi case esac for while until do done in function select time return local export readonly declare unset set shift exit break continue true false"
	kwRust   = "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err"
	kwC      = "auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while bool true false NULL nullptr class namespace template typename public private protected virtual new delete this using"
	kwJava   = "abstract assert boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long native new package private protected public return short static super switch synchronized this throw throws transient try void volatile while var record true false null"
	kwRuby   = "alias and begin break case class def defined? do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require attr_accessor"
	kwSQL    = "select from where and or not insert into values update set delete create table index view drop alter add primary key foreign references join left right inner outer on group by order having limit offset as distinct union all null is in like between case when then else end begin commit rollback"
	kwYAML   = "true false null yes no on off"
	kwJSON   = "true false null"
	kwDocker = "FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL AS"
)

// langFor returns the highlighter's language for a fence's info string,
// or nil (the block is shown in one colour).
func langFor(name string) *codeLang {
	mk := func(kw string, comments []string, block [2]string, quotes string) *codeLang {
		l := &codeLang{keywords: map[string]bool{}, lineComments: comments, block: block, quotes: quotes}
		for _, k := range strings.Fields(kw) {
			l.keywords[k] = true
		}
		return l
	}
	slash, cblock := []string{"//"}, [2]string{"/*", "*/"}
	hash := []string{"#"}
	switch strings.ToLower(name) {
	case "go", "golang":
		return mk(kwGo, slash, cblock, "\"'`")
	case "python", "py", "python3":
		return mk(kwPython, hash, [2]string{}, "\"'")
	case "javascript", "js", "jsx", "mjs", "cjs":
		return mk(kwJS, slash, cblock, "\"'`")
	case "typescript", "ts", "tsx":
		return mk(kwTS, slash, cblock, "\"'`")
	case "bash", "sh", "shell", "zsh", "console", "shell-session", "fish":
		return mk(kwShell, hash, [2]string{}, "\"'")
	case "rust", "rs":
		return mk(kwRust, slash, cblock, "\"")
	case "c", "h", "cpp", "c++", "cc", "hpp", "cxx", "objc", "csharp", "cs", "c#":
		return mk(kwC, slash, cblock, "\"'")
	case "java", "kotlin", "kt", "scala", "swift":
		return mk(kwJava, slash, cblock, "\"'")
	case "ruby", "rb":
		return mk(kwRuby, hash, [2]string{}, "\"'")
	case "sql", "postgres", "postgresql", "mysql", "sqlite":
		l := mk(kwSQL, []string{"--"}, cblock, "'\"")
		for k := range l.keywords {
			l.keywords[strings.ToUpper(k)] = true
		}
		return l
	case "yaml", "yml":
		return mk(kwYAML, hash, [2]string{}, "\"'")
	case "json", "jsonc", "json5":
		return mk(kwJSON, slash, cblock, "\"")
	case "toml", "ini", "conf", "cfg", "properties", "dotenv", "env":
		return mk(kwJSON, []string{"#", ";"}, [2]string{}, "\"'")
	case "dockerfile", "docker", "containerfile":
		return mk(kwDocker, hash, [2]string{}, "\"'")
	case "make", "makefile", "mk":
		return mk("ifeq ifneq ifdef ifndef else endif include define endef export", hash, [2]string{}, "\"'")
	case "html", "xml", "svg", "vue":
		return mk("", nil, [2]string{"<!--", "-->"}, "\"'")
	case "css", "scss", "less":
		return mk("", nil, cblock, "\"'")
	case "lua":
		return mk("and break do else elseif end false for function goto if in local nil not or repeat return then true until while", []string{"--"}, [2]string{}, "\"'")
	case "diff", "patch", "udiff":
		return &codeLang{diff: true}
	}
	return nil
}

// colour highlights one line of code (no escapes in it; the caller adds
// the reset at the end).
func (l *codeLang) colour(line string) string {
	if l.diff {
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), strings.HasPrefix(line, "@@"):
			return sgrCyan + line + sgrReset
		case strings.HasPrefix(line, "+"):
			return sgrAdded + line + sgrReset
		case strings.HasPrefix(line, "-"):
			return sgrRemoved + line + sgrReset
		}
		return line
	}
	var b strings.Builder
	b.Grow(len(line) + 32)
	paint := func(code, s string) { b.WriteString(code + s + sgrReset) }
	for i := 0; i < len(line); {
		rest := line[i:]
		if c := l.commentAt(rest); c >= 0 {
			paint(sgrComment, rest[:c])
			i += c
			continue
		}
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case strings.ContainsRune(l.quotes, r):
			end := stringEnd(rest, r)
			paint(sgrString, rest[:end])
			i += end
		case unicode.IsDigit(r):
			end := strings.IndexFunc(rest, func(r rune) bool { return !isWordRune(r) && r != '.' })
			if end < 0 {
				end = len(rest)
			}
			paint(sgrNumber, rest[:end])
			i += end
		case isWordRune(r):
			end := strings.IndexFunc(rest, func(r rune) bool { return !isWordRune(r) })
			if end < 0 {
				end = len(rest)
			}
			word := rest[:end]
			switch {
			case l.keywords[word]:
				paint(sgrKeyword, word)
			case strings.HasPrefix(strings.TrimLeft(rest[end:], " "), "("):
				paint(sgrCall, word)
			default:
				b.WriteString(word)
			}
			i += end
		default:
			b.WriteString(rest[:size])
			i += size
		}
	}
	return b.String()
}

// commentAt returns the length of the comment s starts with (a line
// comment takes the rest of the line, a block comment up to its end or the
// end of the line), or -1.
func (l *codeLang) commentAt(s string) int {
	for _, c := range l.lineComments {
		if strings.HasPrefix(s, c) {
			return len(s)
		}
	}
	if l.block[0] != "" && strings.HasPrefix(s, l.block[0]) {
		if end := strings.Index(s[len(l.block[0]):], l.block[1]); end >= 0 {
			return len(l.block[0]) + end + len(l.block[1])
		}
		return len(s)
	}
	return -1
}

// stringEnd returns the length of the string literal s starts with (its
// quote q), up to the closing quote or the end of the line; a backslash
// escapes the next character.
func stringEnd(s string, q rune) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case byte(q):
			return i + 1
		}
	}
	return len(s)
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
