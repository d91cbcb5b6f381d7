package shell

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
	"mvdan.cc/sh/v3/syntax"
)

// The driver bash is sent has the script's code, whole: dropping comment
// lines removed no line of a string or here-document (same syntax tree),
// it is much shorter, and it is ASCII (the loader's read -N counts
// characters of the locale, driverInput bytes).
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
	for i := range len(code) {
		if code[i] >= 0x80 {
			t.Fatalf("the driver has a non-ASCII byte at %d: %q", i, code[max(0, i-20):i+1])
		}
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

// TestDriverLoadsInFewReads: bash reads a script from a pipe a byte per
// read(2); the loader has it read the driver whole. Counted by the
// kernel (/proc/<pid>/io), so the test needs no clock.
func TestDriverLoadsInFewReads(t *testing.T) {
	s := startT(t, Options{})
	s.mu.Lock()
	pid := s.p.shell
	s.mu.Unlock()
	io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		testutil.SkipOrFail(t, "no /proc/<pid>/io here (task I/O accounting): %v", err)
	}
	var reads int
	for line := range strings.Lines(string(io)) {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			reads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	// The loader line is read a byte at a time (~110), the driver in one
	// read, and bash's own start-up reads a few files; the driver read a
	// byte at a time would be over 2,800.
	if reads == 0 || reads > 500 {
		t.Errorf("bash made %d reads to start (want 1-500): is the driver read a byte at a time?", reads)
	}
}
