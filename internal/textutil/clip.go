package textutil

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// FirstLine is the first line of s, surrounding space trimmed (the line of
// an error or a description worth showing in a list or a notice).
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(l)
}

// Truncate returns s cut to at most max runes, the last of them Ellipsis
// when it was cut; max <= 0 keeps s whole.
func Truncate(s string, max int) string {
	if max <= 0 {
		return s
	}
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + Ellipsis
	}
	return s
}

// Clip keeps the first n runes of s and appends Ellipsis when it cut any:
// an excerpt of n characters of the original.
func Clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + Ellipsis
	}
	return s
}

// OneLine is s's first line cut to at most max runes (max <= 0: whole), for
// lists: a cut never leaves a space before the Ellipsis.
func OneLine(s string, max int) string {
	l := FirstLine(s)
	if r := []rune(l); max > 0 && len(r) > max {
		return strings.TrimSpace(string(r[:max-1])) + Ellipsis
	}
	return l
}

// CutNote is the one note that marks where output was cut to a bound: n
// bytes of it are left out there (the end of a capped stream, or the middle
// of one kept at both ends).
func CutNote(n int64) string {
	return "[… " + strconv.FormatInt(n, 10) + " bytes of output not shown]"
}

// HeadBytes is s's start of at most n bytes, never ending inside a UTF-8
// sequence (for bounds in bytes: files, context budgets, wire limits).
func HeadBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// TailBytes is s's end of at most n bytes, never starting inside a UTF-8
// sequence.
func TailBytes(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// FirstLines is s's first n lines, with a last line of Ellipsis when it had
// more.
func FirstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], Ellipsis)
	}
	return strings.Join(lines, "\n")
}

// Ends splits s, when it is longer than n bytes, into its start (about two
// thirds of n) and its end (the rest of n), each cut at a line end where
// there is one and never inside a UTF-8 sequence; len(s)-len(head)-len(tail)
// bytes lie between them. A short s is all head.
func Ends(s string, n int) (head, tail string) {
	if n >= len(s) {
		return s, ""
	}
	head = HeadBytes(s, n*2/3)
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	rest := s[len(head):]
	tail = TailBytes(rest, n-len(head))
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 && len(tail) < len(rest) {
		tail = tail[i+1:]
	}
	return head, tail
}

// KeepEnds is s cut to about n bytes: its Ends around the CutNote of what
// lies between them.
func KeepEnds(s string, n int) string {
	head, tail := Ends(s, n)
	if len(head)+len(tail) == len(s) {
		return s
	}
	return head + "\n" + CutNote(int64(len(s)-len(head)-len(tail))) + "\n" + tail
}
