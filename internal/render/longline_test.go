package render

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func BenchmarkLongLineTTY(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		line := strings.Repeat("word ", n/5)
		b.Run(itoa(n), func(b *testing.B) {
			for b.Loop() {
				r := New(Options{Out: &bytes.Buffer{}, TTY: true, Color: true})
				for i := 0; i < len(line); i += 8 {
					r.TextDelta(line[i:min(len(line), i+8)])
				}
				r.EndText()
			}
		})
	}
}

// Streaming a line in small pieces draws the same screen as streaming it
// whole, whatever the pieces hold (the renderer extends a clean line by the
// new piece alone and re-cleans a line only when it must).
func TestPartialLineInPiecesMatchesWhole(t *testing.T) {
	texts := []string{
		strings.Repeat("plain words ", 30) + "\nsecond line " + strings.Repeat("x", 200),
		"中文 " + strings.Repeat("字符 and ascii ", 20) + "\n",
		"tab\there and \x1b[31mescape\x1b[0m then more text " + strings.Repeat("y", 100),
		"**bold** start, `code` and " + strings.Repeat("z ", 80) + "\nnext",
		"bad utf8 \xff\xfe here and c1 \u0085 there " + strings.Repeat("w", 90),
		"ends with a lone escape \x1b",
	}
	for _, text := range texts {
		opts := Options{TTY: true, Width: 37, Height: 40}
		var whole bytes.Buffer
		opts.Out = &whole
		r := New(opts)
		r.TextDelta(text)
		r.EndText()
		want := screen(t, whole.Bytes(), opts)
		for _, n := range []int{1, 3, 8} {
			var out bytes.Buffer
			opts.Out = &out
			r := New(opts)
			// Providers deliver whole runes; pieces are n runes long.
			runes := []rune(text)
			if !utf8.ValidString(text) {
				runes = nil
				for i := 0; i < len(text); i++ {
					runes = append(runes, rune(text[i])) // bytes, re-joined below
				}
			}
			for i := 0; i < len(runes); i += n {
				piece := runes[i:min(len(runes), i+n)]
				if utf8.ValidString(text) {
					r.TextDelta(string(piece))
				} else {
					b := make([]byte, len(piece))
					for j, c := range piece {
						b[j] = byte(c)
					}
					r.TextDelta(string(b))
				}
			}
			mid := screen(t, out.Bytes(), opts)
			r.EndText()
			if got := screen(t, out.Bytes(), opts); got != want {
				t.Errorf("%q in pieces of %d:\n%s\nwant\n%s", text, n, got, want)
			}
			if strings.ContainsRune(mid, 0x1b) {
				t.Errorf("an escape byte reached the screen: %q", mid)
			}
		}
	}
}
