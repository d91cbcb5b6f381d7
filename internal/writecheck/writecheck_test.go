package writecheck

import (
	"fmt"
	"strings"
	"testing"
)

func testChecker() Checker {
	return Checker{
		Scratch: []string{"/tmp", "/home/u/.cache/foo"},
		Env:     map[string]string{"HOME": "/home/u", "TMPDIR": "/tmp"},
	}
}

const project = "/work/p"

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// An unknown working directory makes every relative write ask; absolute
// scratch paths stay free.
func TestCheckUnknownCwd(t *testing.T) {
	c := testChecker()
	if got := c.Check("touch x", ""); len(got) != 1 || !strings.Contains(got[0].Why, "not known") {
		t.Errorf("relative write with no cwd: %+v", got)
	}
	if got := c.Check("touch /tmp/x", ""); len(got) != 0 {
		t.Errorf("absolute scratch write with no cwd asks: %+v", got)
	}
	if got := c.Check("touch x", "/tmp/work"); len(got) != 0 {
		t.Errorf("relative write in a scratch cwd asks: %+v", got)
	}
}

// The reason names the path and says why.
func TestCheckReasonText(t *testing.T) {
	got := testChecker().Check("cd x && rm -rf build", project)
	if len(got) != 1 || got[0].Word != "rm" || !strings.Contains(got[0].Why, "build") {
		t.Fatalf("got %+v", got)
	}
	got = testChecker().Check("echo 'unclosed", project)
	if len(got) != 1 || !strings.Contains(got[0].Why, "cannot be parsed") {
		t.Fatalf("parse error: %+v", got)
	}
}

func TestInScratch(t *testing.T) {
	c := Checker{Scratch: []string{"/tmp"}}
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/tmp", true}, {"/tmp/a/b", true}, {"/tmpx", false}, {"/tmp/../etc", false},
		{"/dev/null", true}, {"/dev/sda", false}, {"tmp/a", false},
	} {
		if got := c.InScratch(tt.path); got != tt.want {
			t.Errorf("InScratch(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
	c.Shadowed = func(p string) bool { return within(p, "/tmp/project") }
	if c.InScratch("/tmp/project/f") || !c.InScratch("/tmp/other") {
		t.Error("a path shadowing the scratch list counts as scratch, or Shadowed hides the rest")
	}
	if got := c.Check("echo x > f", "/tmp/project"); len(got) != 1 {
		t.Errorf("a write in a project under /tmp does not ask: %+v", got)
	}
	if (Checker{}).InScratch("/tmp/a") {
		t.Error("an empty scratch list holds /tmp")
	}
}

// Deep nesting of loops and functions, long `cd a || cd b;` chains and
// braces that would expand to millions of words cost no more than their
// length, so a line a model writes cannot stall the check (40 levels took
// hours in an earlier design).
func TestCheckNestingIsCheap(t *testing.T) {
	const n = 40
	for _, line := range []string{
		strings.Repeat("while true; do ", n) + "touch x; " + strings.Repeat("done; ", n),
		func() string {
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, "f%d() { ", i)
			}
			return b.String() + "ls; " + strings.Repeat("}; ", n)
		}(),
		strings.Repeat("cd a || cd b; ", n) + "touch x",
		"touch" + strings.Repeat(" {1..20000}", 200), // 4 million words
	} {
		// Work that doubled per level took hours here: a regression hangs
		// until the test timeout. The cost itself is measured by the
		// benchmarks, not asserted.
		got := testChecker().Check(line, "/tmp")
		if strings.HasPrefix(line, "cd") && len(got) == 0 {
			t.Errorf("%.40q…: a write in a directory no longer known does not ask", line)
		}
	}
}

// Check must not panic or hang on any line a model may write; every
// reason names a word and says why.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"set ''", "sed -n 's/[/]/w a/w o' f", "tar xfC a b", "fd -x", "xargs -i", "find . -exec",
		"awk -W", "git -C", "echo $((a[x]=1))", "declare -n r; r=x", "f() { cd /; }; f", "cp --parents a b",
		"read 'a[$(x)]'", "while :; do cd a; done", "env -C", "unzip -d", "mktemp -p", "printf -v", "x=1 y=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, r := range testChecker().Check(line, project) {
			if r.Word == "" || r.Why == "" {
				t.Errorf("Check(%q): a reason without a word or an explanation: %+v", line, r)
			}
		}
	})
}
