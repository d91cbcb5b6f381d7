// Package cmdline splits an extension command line into words the way a POSIX
// shell would quote them, without expanding anything: `$(…)`, backticks, `$VAR`,
// globs and `~` stay literal text. Extension commands (skill scripts, MCP tools)
// receive these words as an argv list, so no argument can ever run code.
package cmdline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnclosedQuote is returned for a line that ends inside a quoted string.
var ErrUnclosedQuote = errors.New("Unclosed quote in command line: close the ' or \" or escape it with \\")

// Split returns the words of line. Single quotes keep everything literal; inside
// double quotes a backslash escapes only " \ $ ` and newline; outside quotes a
// backslash escapes the next character. Whitespace separates words.
func Split(line string) ([]string, error) {
	words, _, err := split(line)
	return words, err
}

// shellOperators are the words a shell would act on rather than pass on.
var shellOperators = []string{"&&", "||", "|", "|&", ";", ";;", "&", ">", ">>", "<", "<<", "<<<", "2>", "2>>", "&>", "2>&1", ">&2", "1>&2"}

// SplitArgs is Split for an extension command's arguments, which no shell
// reads: a control operator or redirection written as a bare word (`&&`,
// `|`, `>`, `;`) would reach the program as an argument while the caller
// expects the shell to act on it, so it is an error. Quoted, it is an
// ordinary argument.
func SplitArgs(line string) ([]string, error) {
	words, bare, err := split(line)
	if err != nil {
		return nil, err
	}
	for i, w := range words {
		if bare[i] && slices.Contains(shellOperators, w) {
			return nil, fmt.Errorf("%q is a shell operator, but this command does not run in a shell: its arguments go to the program as they are. Run this command on its own and the rest in a separate call (or quote %q to pass it as an argument)", w, w)
		}
	}
	return words, nil
}

// split returns the words of line and, for each, whether it was written
// without any quoting or escape.
func split(line string) ([]string, []bool, error) {
	var (
		words   []string
		bare    []bool
		cur     strings.Builder
		inWord  bool
		quoted  bool
		runes   = []rune(line)
		n       = len(runes)
		flushed = func() {
			if inWord {
				words = append(words, cur.String())
				bare = append(bare, !quoted)
				cur.Reset()
				inWord, quoted = false, false
			}
		}
	)
	for i := 0; i < n; i++ {
		c := runes[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flushed()
		case c == '\'':
			inWord, quoted = true, true
			j := i + 1
			for j < n && runes[j] != '\'' {
				j++
			}
			if j >= n {
				return nil, nil, ErrUnclosedQuote
			}
			cur.WriteString(string(runes[i+1 : j]))
			i = j
		case c == '"':
			inWord, quoted = true, true
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
				return nil, nil, ErrUnclosedQuote
			}
			i = j
		case c == '\\':
			inWord, quoted = true, true
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
	return words, bare, nil
}

// Quote returns s quoted so that Split gives it back as one word; plain words
// are returned as they are. Used to print runnable examples.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\"\\$`;&|<>(){}*?[]#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
