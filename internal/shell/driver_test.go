package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// The driver bash is sent has the script's code, whole: dropping comment
// lines removed no line of a string or here-document (same syntax tree),
// and it is much shorter (bash reads it one byte per system call).
func TestDriverCodeIsTheScript(t *testing.T) {
	print := func(src string) string {
		f, err := syntax.NewParser().Parse(strings.NewReader(src), "driver.bash")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		// Minified, the layout between statements does not count; a
		// string's lines do.
		if err := syntax.NewPrinter(syntax.Minify(true)).Print(&b, f); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	code := driverCode()
	if got, want := print(code), print(driverScript); got != want {
		t.Errorf("the stripped driver differs from the script:\n%s\n---\n%s", got, want)
	}
	if len(code) > len(driverScript)/2 {
		t.Errorf("the driver sent is %d bytes of the script's %d: comments left in?", len(code), len(driverScript))
	}
	for _, tc := range []struct{ in, want string }{
		{"# c\necho a # b\n\n  # d\n\tx=1\n", "echo a # b\n\tx=1\n"},
		{"echo '\n# kept?\n'\n", "echo '\n'\n"}, // why the syntax tree is compared
	} {
		if got := stripComments(tc.in); got != tc.want {
			t.Errorf("stripComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
