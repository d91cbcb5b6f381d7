package agentsh

import (
	"errors"
	"fmt"
	"strings"
)

// token is one argument after quote removal.
type token struct {
	Value  string
	Quoted bool // some part of it was quoted: never a flag
}

// errUnclosedQuote reports a quote without its closing partner.
type errUnclosedQuote struct{ quote byte }

func (e errUnclosedQuote) Error() string {
	return fmt.Sprintf("Unclosed quote: a %c is missing its closing %c", e.quote, e.quote)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// tokenize splits s into arguments with shell-like quoting but no expansion:
// single quotes are literal; double quotes honour \" \\ \$ \` only; outside
// quotes a backslash escapes whitespace, a quote or a backslash and is kept
// literally before anything else (so `\n` stays two characters).
func tokenize(s string) ([]token, error) {
	var out []token
	i := 0
	for {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i >= len(s) {
			return out, nil
		}
		var b strings.Builder
		quoted := false
		for i < len(s) && !isBlank(s[i]) {
			switch c := s[i]; c {
			case '\'':
				end := strings.IndexByte(s[i+1:], '\'')
				if end < 0 {
					return nil, errUnclosedQuote{c}
				}
				b.WriteString(s[i+1 : i+1+end])
				i += end + 2
				quoted = true
			case '"':
				n, err := dquoted(&b, s[i+1:])
				if err != nil {
					return nil, err
				}
				i += n + 1
				quoted = true
			case '\\':
				if i+1 < len(s) && (isBlank(s[i+1]) || strings.IndexByte(`'"\`, s[i+1]) >= 0) {
					b.WriteByte(s[i+1])
					i += 2
					continue
				}
				b.WriteByte(c)
				i++
			default:
				b.WriteByte(c)
				i++
			}
		}
		out = append(out, token{Value: b.String(), Quoted: quoted})
	}
}

// dquoted reads the body of a double-quoted string (s starts after the
// opening quote) into b and returns how many bytes it consumed, closing
// quote included.
func dquoted(b *strings.Builder, s string) (int, error) {
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '"':
			return j + 1, nil
		case '\\':
			if j+1 < len(s) && strings.IndexByte("\"\\$`", s[j+1]) >= 0 {
				b.WriteByte(s[j+1])
				j++
				continue
			}
		}
		b.WriteByte(s[j])
	}
	return 0, errUnclosedQuote{'"'}
}

// singleWord returns the value of s when s is exactly one argument that
// starts with a quote ("a b", or the close-escape-reopen idiom for a single
// quote); ok is false otherwise, and the text is taken as written. A quote
// at the start that is never closed is an error.
func singleWord(s string) (value string, ok bool, err error) {
	s = strings.Trim(s, " \t\r\n")
	if s == "" || (s[0] != '"' && s[0] != '\'') {
		return "", false, nil
	}
	toks, err := tokenize(s)
	if err != nil {
		return "", false, err
	}
	if len(toks) == 1 && toks[0].Quoted {
		return toks[0].Value, true, nil
	}
	return "", false, nil
}

// splitQuotedPath takes the first argument of s as a file path, honouring a
// leading quote, and returns it with the text that follows.
func splitQuotedPath(s string) (path, rest string, err error) {
	if s == "" {
		return "", "", nil
	}
	switch q := s[0]; q {
	case '\'':
		end := strings.IndexByte(s[1:], '\'')
		if end < 0 {
			return "", "", errUnclosedPath
		}
		return s[1 : 1+end], s[end+2:], nil
	case '"':
		var b strings.Builder
		n, err := dquoted(&b, s[1:])
		if err != nil {
			return "", "", errUnclosedPath
		}
		return b.String(), s[n+1:], nil
	}
	end := len(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++ // an escaped character, a blank included, belongs to the path
			continue
		}
		if isBlank(s[i]) {
			end = i
			break
		}
	}
	return unescapePath(s[:end]), s[end:], nil
}

var errUnclosedPath = errors.New("Unclosed quote in file path")

func unescapePath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (isBlank(s[i+1]) || strings.IndexByte(`'"\`, s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isHelpToken reports whether t is an unquoted -h or --help.
func isHelpToken(t token) (short, long bool) {
	if t.Quoted {
		return false, false
	}
	return t.Value == "-h", t.Value == "--help"
}
