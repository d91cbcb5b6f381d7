package render

import "testing"

// kept is the fast answer to "would clean change this?": it must agree
// with clean itself.
func TestKeptAgreesWithClean(t *testing.T) {
	for _, s := range []string{
		"", "plain text", "line\nnext", "tab\there", "café ☕", "\x1b[31mred\x1b[0m",
		"bell\a", "cr\r", "del\x7f", "c1 \u0085 next", "bad \xff byte", "nbsp\u00a0ok", "osc \x1b]52;c;aGk=\a",
	} {
		if got, want := kept(s), clean(s, true) == s; got != want {
			t.Errorf("kept(%q) = %v, but clean gives %q", s, got, clean(s, true))
		}
	}
}
