package session

import (
	"testing"
	"unicode"
)

// Titles are printed in terminals (synapse sessions, /resume): whatever the
// first prompt held, a title is one line of printable text.
func TestTitleIsPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"hello there", "hello there"},
		{"  two\n\nlines\t here ", "two lines here"},
		{"\x1b[2J\x1b[31mred\x1b[0m alert\a", "red alert"},
		{"nul\x00 and del\x7f and c1\u009b31m", "nul and del and c1"},
		{"## Skill Search Priority\n\nstuff\n\n## Original user request\n\n\x1b]0;title\x07fix it", "fix it"},
		{"\x1b\x1b\x1b", ""},
		{"\x1b[éclair", "éclair"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ here", "link here"},
	}
	for _, tc := range tests {
		if got := Title(tc.in); got != tc.want {
			t.Errorf("Title(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzTitle(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[31mred", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\u009b2J", "\x1b[é", "a\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Title(s)
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("Title(%q) = %q holds control character %U", s, got, r)
			}
		}
		if len([]rune(got)) > 60 {
			t.Fatalf("Title(%q) is %d runes long", s, len([]rune(got)))
		}
	})
}
