package textutil

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s with everything that could drive a terminal removed:
// escape sequences (CSI, OSC including OSC 52, DCS, APC, PM, SOS, in their
// 7-bit ESC forms and their 8-bit C1 forms), a lone ESC, other C1 controls,
// DEL and every C0 control but newline and tab. Invalid UTF-8 bytes become
// U+FFFD, so a terminal in an 8-bit mode never sees a raw C1 byte either.
// Printable text, newlines and tabs are kept as they are.
func Sanitize(s string) string {
	if IsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if end := EscapeEnd(s, i); end > i {
			i = end
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != 0x7f || c == '\n' || c == '\t' {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r >= 0x80 && r < 0xa0: // a C1 control that starts no sequence
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsClean reports whether Sanitize(s) == s: s holds only printable UTF-8,
// newlines and tabs.
func IsClean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r < 0xa0 {
			return false
		}
		i += size
	}
	return true
}

// Sequence introducers, 7-bit (after ESC) and their 8-bit C1 code points.
const (
	c1DCS = 0x90 // ESC P
	c1SOS = 0x98 // ESC X
	c1CSI = 0x9b // ESC [
	c1ST  = 0x9c // ESC \ (string terminator)
	c1OSC = 0x9d // ESC ]
	c1PM  = 0x9e // ESC ^
	c1APC = 0x9f // ESC _
)

// EscapeEnd returns the index just past the escape sequence that starts at
// s[i], or i when none starts there. A sequence starts with ESC or with a C1
// control (encoded as UTF-8, U+0080–U+009F). Control strings (OSC, DCS, APC,
// PM, SOS) run to their terminator (BEL, ESC \ or ST); an unterminated one,
// like an unterminated CSI, swallows the rest of s, because a terminal would
// swallow it too. Callers that keep their own styling (SGR) use this to skip
// the sequences they did not write.
func EscapeEnd(s string, i int) int {
	if i >= len(s) {
		return i
	}
	var kind rune
	body := 0 // index where the sequence's body begins
	switch {
	case s[i] == 0x1b:
		if i+1 >= len(s) {
			return len(s) // a lone ESC at the end
		}
		switch s[i+1] {
		case '[':
			kind = c1CSI
		case ']':
			kind = c1OSC
		case 'P':
			kind = c1DCS
		case '_':
			kind = c1APC
		case '^':
			kind = c1PM
		case 'X':
			kind = c1SOS
		default:
			return escEnd(s, i+1)
		}
		body = i + 2
	case s[i] == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
		kind = rune(s[i+1])
		body = i + 2
		switch kind {
		case c1CSI, c1OSC, c1DCS, c1APC, c1PM, c1SOS:
		default:
			return body // a lone C1 control
		}
	default:
		return i
	}
	if kind == c1CSI {
		return csiEnd(s, body)
	}
	return stringEnd(s, body, kind == c1OSC)
}

// escEnd ends a two-or-more-byte ESC sequence whose first byte after ESC is
// at j: intermediate bytes 0x20–0x2f, then one final byte 0x30–0x7e. Any
// other byte ends the (broken) sequence before it, so the lone ESC is dropped
// and what follows is judged on its own.
func escEnd(s string, j int) int {
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case c >= 0x20 && c <= 0x2f:
			continue
		case c >= 0x30 && c <= 0x7e:
			return j + 1
		default:
			return j
		}
	}
	return len(s)
}

// csiEnd ends a CSI whose parameters start at j: parameter and intermediate
// bytes 0x20–0x3f, then one final byte 0x40–0x7e. A byte outside those ends
// the broken sequence before it (terminals abort a CSI on such bytes).
func csiEnd(s string, j int) int {
	for ; j < len(s); j++ {
		c := s[j]
		switch {
		case c >= 0x20 && c <= 0x3f:
			continue
		case c >= 0x40 && c <= 0x7e:
			return j + 1
		default:
			return j
		}
	}
	return len(s)
}

// stringEnd ends a control string whose body starts at j: at ESC \ or the
// C1 ST; OSC also ends at BEL. The body is dropped whatever it holds.
func stringEnd(s string, j int, bel bool) int {
	for ; j < len(s); j++ {
		switch {
		case s[j] == 0x07 && bel:
			return j + 1
		case s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == 0xc2 && j+1 < len(s) && s[j+1] == c1ST:
			return j + 2
		}
	}
	return len(s)
}
