package textutil

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello, world", "hello, world"},
		{"newline and tab kept", "a\tb\nc", "a\tb\nc"},
		{"unicode kept", "héllo → 世界 🙂", "héllo → 世界 🙂"},
		{"SGR", "\x1b[1;31mred\x1b[0m", "red"},
		{"cursor movement", "a\x1b[2J\x1b[Hb\x1b[10;20Hc", "abc"},
		{"CSI private and intermediate", "x\x1b[?1049hy\x1b[1 qz", "xyz"},
		{"OSC title BEL", "a\x1b]0;pwned\x07b", "ab"},
		{"OSC 52 clipboard ST", "a\x1b]52;c;cm0gLXJmIH4=\x1b\\b", "ab"},
		{"OSC 8 hyperlink", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"DCS", "a\x1bP+q544e\x1b\\b", "ab"},
		{"DCS with BEL inside is not ended by BEL", "a\x1bPx\x07y\x1b\\b", "ab"},
		{"APC", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
		{"PM", "a\x1b^secret\x1b\\b", "ab"},
		{"SOS", "a\x1bXsos\x1b\\b", "ab"},
		{"8-bit CSI", "a\u009b31mb", "ab"},
		{"8-bit OSC 52 with ST", "a\u009d52;c;eA==\u009cb", "ab"},
		{"8-bit OSC ended by BEL", "a\u009d0;t\x07b", "ab"},
		{"8-bit DCS", "a\u0090q\u009cb", "ab"},
		{"8-bit APC and PM", "a\u009fx\u009cb\u009ey\u009cc", "abc"},
		{"lone C1 controls", "a\u0085b\u0084c\u009cd", "abcd"},
		{"unterminated OSC swallows the rest", "a\x1b]52;c;AAAA", "a"},
		{"unterminated CSI swallows the rest", "a\x1b[12", "a"},
		{"lone ESC at end", "a\x1b", "a"},
		{"ESC before newline", "a\x1b\nb", "a\nb"},
		{"two-byte ESC sequences", "a\x1bcb\x1b7c\x1b8d\x1b(Be", "abcde"},
		{"ESC ESC", "a\x1b\x1b[31mb", "ab"},
		{"C0 controls dropped", "a\x00b\x07c\x08d\re\x7ff", "abcdef"},
		{"CRLF becomes LF", "one\r\ntwo", "one\ntwo"},
		{"invalid UTF-8 replaced", "a\x9bb\xffc", "a\ufffdb\ufffdc"},
		{"broken CSI keeps following text", "a\x1b[1\nb", "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sanitize(tt.in)
			if got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !IsClean(got) {
				t.Errorf("Sanitize(%q) = %q is not clean", tt.in, got)
			}
			if IsClean(tt.in) != (tt.in == tt.want) {
				t.Errorf("IsClean(%q) = %v, want %v", tt.in, IsClean(tt.in), tt.in == tt.want)
			}
		})
	}
}

func TestEscapeEnd(t *testing.T) {
	tests := []struct {
		in   string
		at   int
		want int
	}{
		{"abc", 1, 1},
		{"\x1b[31mx", 0, 5},
		{"x\x1b]0;t\x07y", 1, 7},
		{"\u009b1mx", 0, 4},
		{"\u0085x", 0, 2},
		{"\x1b", 0, 1},
		{"é", 0, 0},
		{"", 0, 0},
	}
	for _, tt := range tests {
		if got := EscapeEnd(tt.in, tt.at); got != tt.want {
			t.Errorf("EscapeEnd(%q, %d) = %d, want %d", tt.in, tt.at, got, tt.want)
		}
	}
}

// FuzzSanitize checks that whatever goes in, what comes out holds no ESC,
// no C1 control and no C0 control but newline and tab, and that cleaning
// twice changes nothing.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"\x1b]52;c;AAAA\x07", "\u009d52;c;x\u009c", "\x1bP\x1b\\", "a\x1b[", "\xc2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if !IsClean(out) || strings.ContainsRune(out, 0x1b) {
			t.Fatalf("Sanitize(%q) = %q still holds controls", s, out)
		}
		if again := Sanitize(out); again != out {
			t.Fatalf("Sanitize is not idempotent on %q: %q then %q", s, out, again)
		}
	})
}

func BenchmarkSanitize(b *testing.B) {
	plain := strings.Repeat("an ordinary line of command output\n", 1000)
	styled := strings.Repeat("\x1b[1;32mok\x1b[0m  \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ é\n", 1000)
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			Sanitize(plain)
		}
	})
	b.Run("styled", func(b *testing.B) {
		b.SetBytes(int64(len(styled)))
		for b.Loop() {
			Sanitize(styled)
		}
	})
}
