package render

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// clean makes untrusted text (model output, command output) safe to print.
// It is textutil.Sanitize plus layout: escape sequences (found by
// textutil.EscapeEnd) and control characters are dropped, a carriage return
// keeps only what follows it (progress bars print their last state), and
// tabs are expanded when expandTabs is set (so widths can be computed on a
// TTY).
func clean(s string, expandTabs bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	lineStart := 0 // index in b where the current line began (for \r)
	for i := 0; i < len(s); {
		if end := textutil.EscapeEnd(s, i); end > i {
			i = end
			continue
		}
		c := s[i]
		switch {
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
				continue
			}
			if i+1 == len(s) { // a trailing \r erases nothing yet
				i++
				continue
			}
			// Overwrite: drop what the current line printed so far.
			str := b.String()[:lineStart]
			b.Reset()
			b.WriteString(str)
		case c == '\n':
			b.WriteByte('\n')
			lineStart = b.Len()
		case c == '\t':
			if expandTabs {
				b.WriteString("    ")
			} else {
				b.WriteByte('\t')
			}
		case c < 0x20 || c == 0x7f:
			// other C0 controls: dropped
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteRune(utf8.RuneError)
			} else if r >= 0x80 && r < 0xa0 { // C1 controls EscapeEnd left
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		i++
	}
	return b.String()
}

// kept reports whether clean(s, true) is s, for ASCII and for whole,
// printable UTF-8 alike; two kept strings joined are kept too. It is
// textutil.IsClean less tabs, which clean lays out as spaces.
func kept(s string) bool {
	return isPlain(s) || (textutil.IsClean(s) && !strings.ContainsRune(s, '\t'))
}

// isPlain reports whether s has nothing clean would change.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 && c != '\n') || c == 0x7f || c >= 0x80 {
			return false
		}
	}
	return true
}

// runeWidth is the number of terminal columns r occupies.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), unicode.Is(unicode.Cf, r):
		return 0
	case r >= 0x1100 && r <= 0x115f, r >= 0x2e80 && r <= 0x303e, r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf, r >= 0x4e00 && r <= 0x9fff, r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3, r >= 0xf900 && r <= 0xfaff, r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60, r >= 0xffe0 && r <= 0xffe6, r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff, r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// width is the number of columns s occupies; s must hold no escape sequences.
func width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// truncate shortens s to at most max columns, marking a cut with "…". SGR
// sequences in s take no room and are kept; a cut line ends with a reset.
func truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if width(stripSGR(s)) <= max {
		return s
	}
	n := 0
	styled := false
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j := textutil.EscapeEnd(s, i)
			styled = true
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		w := runeWidth(r)
		if n+w > max-1 {
			if styled {
				return s[:i] + "…" + sgrReset
			}
			return s[:i] + "…"
		}
		n += w
		i += size
	}
	return s
}

// summarize collapses whitespace and cuts s to limit runes, ending a cut
// with "..." (the seed's rule for task descriptions).
func summarize(s string, limit int) string {
	s = strings.Join(strings.Fields(clean(s, false)), " ")
	if limit <= 0 || utf8.RuneCountInString(s) <= limit {
		return s
	}
	keep := limit - 3
	if keep < 1 {
		keep = 1
	}
	rs := []rune(s)
	return strings.TrimRight(string(rs[:keep]), " ") + "..."
}

// shortCommand is a command as shown on a tool line: its first line, with a
// note of how many lines were left out (heredocs, scripts).
func shortCommand(cmd string) string {
	cmd = strings.TrimSpace(clean(cmd, true))
	first, rest, multi := strings.Cut(cmd, "\n")
	if !multi {
		return cmd
	}
	n := strings.Count(rest, "\n") + 1
	if n == 1 {
		return first + " … (+1 line)"
	}
	return first + " … (+" + itoa(n) + " lines)"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

func itoa(n int) string { return strconv.Itoa(n) }

// stripSGR removes escape sequences (colour) from s.
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansi.Strip(s)
}

// WordWrap breaks each line of s at spaces so that its rows fit in width
// cells. Unlike ansi.Wrap it never breaks inside a word, not even at a
// hyphen: a path or URL wider than a row stays one piece (the terminal
// folds it, and copying it gives it whole). Spacing inside a row is kept; a
// line laid out in two columns (a run of spaces after its first word)
// continues under its second column, any other at its own indentation.
func WordWrap(s string, width int) string {
	if width < 10 {
		return s
	}
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, line := range lines {
		if ansi.StringWidth(line) <= width {
			out = append(out, line)
			continue
		}
		out = append(out, wrapLine(line, width)...)
	}
	return strings.Join(out, "\n")
}

// wrapLine wraps one line wider than width (see WordWrap).
func wrapLine(line string, width int) []string {
	type token struct{ sep, word string }
	var toks []token
	for rest := line; rest != ""; {
		word := strings.TrimLeft(rest, " ")
		sep := rest[:len(rest)-len(word)]
		end := strings.IndexByte(word, ' ')
		if end < 0 {
			end = len(word)
		}
		toks = append(toks, token{sep, word[:end]})
		rest = word[end:]
	}
	if len(toks) == 0 {
		return []string{line}
	}
	indent := strings.Repeat(" ", len(toks[0].sep))
	hang := indent
	col := ansi.StringWidth(toks[0].sep + toks[0].word)
	for _, t := range toks[1:] { // the first run of spaces starts the second column
		col += len(t.sep)
		if len(t.sep) >= 2 {
			if col <= width/2 {
				hang = strings.Repeat(" ", col)
			}
			break
		}
		col += ansi.StringWidth(t.word)
	}
	var rows []string
	row := indent + toks[0].word
	rowW, fresh := ansi.StringWidth(row), false
	for _, t := range toks[1:] {
		if t.word == "" { // trailing spaces
			continue
		}
		ww := ansi.StringWidth(t.word)
		if !fresh && rowW+len(t.sep)+ww > width {
			rows = append(rows, row)
			row, rowW, fresh = hang+t.word, len(hang)+ww, false
			continue
		}
		row, rowW, fresh = row+t.sep+t.word, rowW+len(t.sep)+ww, false
	}
	return append(rows, row)
}
