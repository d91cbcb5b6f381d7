// Package cmdline splits an extension command line into words the way a POSIX
// shell would quote them, without expanding anything: `$(…)`, backticks, `$VAR`,
// globs and `~` stay literal text. Extension commands (skill scripts, MCP tools)
// receive these words as an argv list, so no argument can ever run code.
package cmdline

import (
	"errors"
	"strings"
)

// ErrUnclosedQuote is returned for a line that ends inside a quoted string.
var ErrUnclosedQuote = errors.New("Unclosed quote in command line: close the ' or \" or escape it with \\")

// Split returns the words of line. Single quotes keep everything literal; inside
// double quotes a backslash escapes only " \ $ ` and newline; outside quotes a
// backslash escapes the next character. Whitespace separates words.
func Split(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		runes   = []rune(line)
		n       = len(runes)
		flushed = func() {
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		}
	)
	for i := 0; i < n; i++ {
		c := runes[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flushed()
		case c == '\'':
			inWord = true
			j := i + 1
			for j < n && runes[j] != '\'' {
				j++
			}
			if j >= n {
				return nil, ErrUnclosedQuote
			}
			cur.WriteString(string(runes[i+1 : j]))
			i = j
		case c == '"':
			inWord = true
			j := i + 1
			closed := false
			for ; j < n; j++ {
				d := runes[j]
				if d == '"' {
					closed = true
					break
				}
				if d == '\\' && j+1 < n {
					switch runes[j+1] {
					case '"', '\\', '$', '`':
						cur.WriteRune(runes[j+1])
						j++
						continue
					case '\n':
						j++
						continue
					}
				}
				cur.WriteRune(d)
			}
			if !closed {
				return nil, ErrUnclosedQuote
			}
			i = j
		case c == '\\':
			inWord = true
			if i+1 < n {
				if runes[i+1] != '\n' {
					cur.WriteRune(runes[i+1])
				}
				i++
			} else {
				cur.WriteRune(c)
			}
		default:
			inWord = true
			cur.WriteRune(c)
		}
	}
	flushed()
	return words, nil
}

// Quote returns s quoted so that Split gives it back as one word; plain words
// are returned as they are. Used to print runnable examples.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\"\\$`;&|<>(){}*?[]#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
