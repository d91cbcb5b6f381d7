package writecheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sedScript must find every file GNU sed writes: each script runs under
// the real sed in an empty directory, and a file it made that sedScript
// did not name (without saying it cannot tell) is a write that would pass
// without asking.
func TestSedScriptFindsWhatGNUSedWrites(t *testing.T) {
	if out, err := exec.Command("sed", "--version").Output(); err != nil || !strings.Contains(string(out), "GNU") {
		t.Skip("needs GNU sed")
	}
	for _, script := range []string{
		"s/a/b/;w o", "/x/!w o", "1!G;h;$!d", `s/a\/b/c/w o`, "s,a,b,gw o", "y/abc/xyz/;w o", ":a;N;$!ba;w o",
		"1~3w o", "0~1w o", "1,+2w o", "1,~2w o", "$w o", "1 w o", "/a/ , /b/ w o", "1{w o\n}", "$!{N};w o",
		"/x/I,/y/Mw o", "0,/x/w o", `\,x,w o`, `\%[%]%w o`, "s/a/b/pw o", "s/a/b/3w o", "s:a:b:w o",
		"y,a,b,;w o", "v;w o", "x;w o", "l;w o", "F;w o", "z;w o", "T;w o", "r file;w o", "c text",
		"a\\\nfoo\nw o", "a foo\\\nw o", "1a hello; w o", "i\\\nt1\\\nt2\nw o", `s/x/\n/;w o`, "s/a/b\\\nc/w o",
		`y/a\/b/xyz/;w o`, "s/x/[/w o", "/x/s//y/w o", "s/a/b/w o\np", "/a/,/b/ { /x/ w o\n}",
		// A bracket expression may hold the delimiter.
		"s/[/]/g;w a/w o", "/[/]/w o", "s/[[:alpha:]/]/x/w o", "s/[]/]/x/w o", "s/[^/]/x/w o",
		"s/x/true/e", "1e true", "s/x/y/eg", "s/x/true/ew o",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in"), []byte("a\nb\nx\ny\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sed", "-n", script, "in")
		cmd.Dir = dir
		_ = cmd.Run() // a script sed rejects writes nothing
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files, runs := sedScript(script)
		for _, e := range entries {
			if n := e.Name(); n != "in" && !runs && !slices.Contains(files, n) {
				t.Errorf("sed -n %q wrote %s; sedScript found %q", script, n, files)
			}
		}
	}
}
