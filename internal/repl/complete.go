package repl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// A mention is @path, or @"path" when the path holds a space: inside the
// quotes \" and \\ stand for " and \, and the quote ends on the same line.
// Tab writes this form and withMentions reads it, and a user can type it
// by hand. ~/ at the start is the home directory in both.

// word is one whitespace-separated word of a prompt, or one @"…" mention
// (which may hold spaces).
type word struct {
	start, end int    // byte range in the text
	mention    bool   // it starts with @
	quoted     bool   // @"…"
	closed     bool   // the quote was closed
	tail       bool   // text follows the closing quote, as in @"a b",
	path       string // a mention's path, unquoted; the word itself otherwise
}

// wordAt reads the word starting at s[i], which is not a space. With open,
// an @" quote not closed by the end of s is a word to the end (Tab
// completes it); without, the quote is no mention and the word ends at the
// next space as any other.
func wordAt(s string, i int, open bool) word {
	if strings.HasPrefix(s[i:], `@"`) {
		w := word{start: i, mention: true, quoted: true}
		var b strings.Builder
		j := i + 2
		for j < len(s) && !w.closed && s[j] != '\n' {
			switch {
			case s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\'):
				b.WriteByte(s[j+1])
				j += 2
			case s[j] == '"':
				w.closed = true
				j++
			default:
				b.WriteByte(s[j])
				j++
			}
		}
		w.path = b.String()
		if w.closed {
			w.end = spaceFrom(s, j)
			w.tail = w.end > j
			return w
		}
		if open && j == len(s) {
			w.end = j
			return w
		}
	}
	w := word{start: i, end: spaceFrom(s, i)}
	w.path = s[i:w.end]
	if strings.HasPrefix(w.path, "@") {
		w.mention, w.path = true, w.path[1:]
	}
	return w
}

// spaceFrom is the offset of the first whitespace in s from i, or len(s).
func spaceFrom(s string, i int) int {
	if k := strings.IndexFunc(s[i:], unicode.IsSpace); k >= 0 {
		return i + k
	}
	return len(s)
}

// words splits s into words (see wordAt).
func words(s string, open bool) []word {
	var out []word
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		w := wordAt(s, i, open)
		out = append(out, w)
		i = w.end
	}
	return out
}

// needsQuotes reports whether path p must be written @"p" to be read back
// whole: it holds whitespace, or starts with a quote (@" opens one).
func needsQuotes(p string) bool {
	return strings.HasPrefix(p, `"`) || strings.IndexFunc(p, unicode.IsSpace) >= 0
}

// mentionOf writes path p as a mention; with open the closing quote is
// left for more to be typed or completed.
func mentionOf(p string, quote, open bool) string {
	if !quote {
		return "@" + p
	}
	m := `@"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p)
	if !open {
		m += `"`
	}
	return m
}

// complete is what Tab does to the line being typed (pos is the cursor's
// byte offset in it): it completes a slash command or a path (also after
// @). It returns the new line and cursor; candidates to choose from go
// under the prompt (es.note).
func (r *REPL) complete(line string, pos int) (string, int) {
	return r.completeTab(line, pos)
}

func (r *REPL) completeTab(line string, pos int) (string, int) {
	before, after := line[:pos], line[pos:]
	w := word{start: len(before), end: len(before)}
	if ws := words(before, true); len(ws) > 0 && ws[len(ws)-1].end == len(before) {
		w = ws[len(ws)-1]
	}
	if w.start == 0 && !w.mention && strings.HasPrefix(w.path, "/") {
		return r.completeCommand(line, pos)
	}
	if w.tail {
		return line, pos // the mention is closed and text follows it
	}
	cands := r.pathCandidates(w.path, w.mention)
	if len(cands) == 0 {
		return line, pos
	}
	// whole is how candidate c is written when chosen; a file is followed
	// by a space, a directory is left open to go into.
	whole := func(c pathCand) string {
		s := c.path
		if w.mention {
			s = mentionOf(c.path, w.quoted || needsQuotes(c.path), false)
		}
		if !c.dir {
			s += " "
		}
		return s
	}
	var repl string
	if len(cands) == 1 && typable(cands[0].path) == len(cands[0].path) {
		repl = whole(cands[0])
	} else {
		// What all candidates share is typed, up to a character that
		// cannot be (a control character in a cloned repository's file
		// name must not get into the prompt, where the terminal shows it).
		paths := make([]string, len(cands))
		for i, c := range cands {
			paths[i] = c.path
		}
		common := commonPrefixOf(paths)
		common = common[:typable(common)]
		if len(common) <= len(w.path) {
			shown := make([]string, 0, len(cands))
			for _, c := range cands {
				s := strings.TrimSuffix(whole(c), " ")
				if typable(c.path) < len(c.path) { // its controls shown escaped
					s = strconv.Quote(c.path)
					if w.mention {
						s = "@" + s
					}
				}
				shown = append(shown, s)
			}
			r.es.note = candidateList(shown)
			return line, pos
		}
		repl = common
		if w.mention {
			repl = mentionOf(common, w.quoted || needsQuotes(common), true)
		}
	}
	newBefore := before[:w.start] + repl
	return newBefore + after, len(newBefore)
}

// completeCommand completes the slash command the line starts with.
func (r *REPL) completeCommand(line string, pos int) (string, int) {
	before, after := line[:pos], line[pos:]
	var cands []string
	for _, c := range commandNames() {
		if strings.HasPrefix("/"+c, strings.ToLower(before)) {
			cands = append(cands, "/"+c+" ")
		}
	}
	if len(cands) == 0 {
		return line, pos
	}
	repl := commonPrefixOf(cands)
	if len(cands) > 1 && len(repl) <= len(before) {
		r.es.note = candidateList(cands)
		return line, pos
	}
	return repl + after, len(repl)
}

// candidateList is the note listing Tab's candidates, the first 20 of them.
func candidateList(shown []string) string {
	if len(shown) > 20 {
		shown = append(shown[:20:20], fmt.Sprintf("… %d more", len(shown)-20))
	}
	return strings.Join(shown, "  ")
}

// pathCand is a path Tab offers: the typed directory part and an entry's
// name, with a / after a directory.
type pathCand struct {
	path string
	dir  bool
}

// pathCandidates are the entries matching the path prefix p, relative to
// the working directory as typed. For a mention (at) what withMentions
// would not attach (a dangling link) is left out.
func (r *REPL) pathCandidates(p string, at bool) []pathCand {
	dirPart, base := filepath.Split(p)
	dir := dirPart
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.o.Cwd, dir)
	}
	if strings.HasPrefix(dirPart, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dirPart[2:])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []pathCand
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil && at {
				continue
			}
			isDir = err == nil && st.IsDir()
		}
		if isDir {
			out = append(out, pathCand{dirPart + name + "/", true})
		} else {
			out = append(out, pathCand{dirPart + name, false})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// typable is the length of s's start up to its first control character or
// invalid UTF-8 byte: what Tab may put into the prompt.
func typable(s string) int {
	for i := 0; i < len(s); {
		c, n := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && n == 1 || unicode.IsControl(c) {
			return i
		}
		i += n
	}
	return len(s)
}

// commonPrefixOf is the longest prefix of whole grapheme clusters (what a
// user sees as one character) that all of ss share: a half rune or a
// letter without its accent is no prefix.
func commonPrefixOf(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		n := 0
		a, b, sa, sb := p, s, -1, -1
		for a != "" && b != "" {
			var ca, cb string
			ca, a, _, sa = uniseg.FirstGraphemeClusterInString(a, sa)
			cb, b, _, sb = uniseg.FirstGraphemeClusterInString(b, sb)
			if ca != cb {
				break
			}
			n += len(ca)
		}
		p = p[:n]
	}
	return p
}

// mentionsNote starts the note listing the files a prompt mentions.
const mentionsNote = "\n\n[Files the user mentioned with @ (read them with `read <path>` when you need them): "

// withMentions adds to input the files and directories it mentions as
// @path or @"path" (existing ones, relative to the working directory,
// absolute or under ~/), so the model knows to read them; the file content
// itself is not pasted into the prompt.
func (r *REPL) withMentions(input string) string {
	var found []string
	seen := map[string]bool{}
	for _, w := range words(input, false) {
		if !w.mention {
			continue
		}
		name, abs, ok := r.mentioned(w)
		if !ok || seen[abs] {
			continue
		}
		seen[abs] = true
		found = append(found, noteName(name))
	}
	if len(found) == 0 {
		return input
	}
	return input + mentionsNote + strings.Join(found, ", ") + "]"
}

// mentioned resolves mention w to the name the note gives it and its
// absolute path, if it exists. An unquoted mention may end in a sentence's
// punctuation, dropped unless the path with it exists (a file "v1.").
func (r *REPL) mentioned(w word) (name, abs string, ok bool) {
	tries := []string{w.path}
	if !w.quoted {
		tries = append(tries, strings.TrimRight(w.path, ",.;:!?)\"'"))
	}
	for _, p := range tries {
		if p == "" {
			continue
		}
		if strings.HasPrefix(p, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			p = filepath.Join(home, p[2:])
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(r.o.Cwd, p)
		}
		if _, err := os.Stat(abs); err == nil {
			return p, filepath.Clean(abs), true
		}
	}
	return "", "", false
}

// noteName is path p as the note lists it: as it is when plain, else
// Go-quoted, so a space, comma or bracket cannot blur where a name ends
// and no control character or escape sequence gets into the prompt raw.
func noteName(p string) string {
	plain := utf8.ValidString(p) && strings.IndexFunc(p, func(c rune) bool {
		return !unicode.IsPrint(c) || strings.ContainsRune(" ,[]\"\\", c)
	}) < 0
	if plain {
		return p
	}
	return strconv.Quote(p)
}

// withoutMentions is the user's text of a prompt withMentions extended.
func withoutMentions(text string) string {
	if i := strings.LastIndex(text, mentionsNote); i >= 0 {
		return text[:i]
	}
	return text
}
