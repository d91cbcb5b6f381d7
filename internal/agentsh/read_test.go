package agentsh

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\tline %d\n", i, i)
	}
	return b.String()
}

// Seed 001 "read 输出应包含 cat -n 风格行号": right-aligned numbers and a tab,
// consistent with offset and limit.
func TestReadLineNumbers(t *testing.T) {
	sh, ex := newTestShell(t, func(o *Options) { o.ReadLimit = 4 })
	var content strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&content, "line %d\n", i)
	}
	testutil.WriteFile(t, filepath.Join(ex.dir, "ten.txt"), content.String())
	testutil.WriteFile(t, filepath.Join(ex.dir, "noeol.txt"), "a\r\nb")
	testutil.WriteFile(t, filepath.Join(ex.dir, "empty.txt"), "")
	testutil.WriteFile(t, filepath.Join(ex.dir, "with space.txt"), "x\n")
	more := func(from, to int, next string) string {
		return fmt.Sprintf("\n(Showing lines %d-%d. More lines follow: read %s)\n", from, to, next)
	}
	tests := []struct{ line, want string }{
		{"read ten.txt --limit 10", numbered(1, 10)},
		{"read ten.txt --limit 20", numbered(1, 10)},
		{"read ten.txt", numbered(1, 4) + more(1, 4, "ten.txt --offset 4")},
		{"read ten.txt --offset 3 --limit 2", numbered(4, 5) + more(4, 5, "ten.txt --offset 5")},
		{"read --offset=8 ten.txt --limit=5", numbered(9, 10)},
		{"read ten.txt --offset 9", numbered(10, 10)},
		{"read ten.txt --offset 0 --limit 1", numbered(1, 1) + more(1, 1, "ten.txt --offset 1")},
		// Paging past the end is not an error: no lines, and the file's length.
		{"read ten.txt --offset 10", "(ten.txt has 10 lines; nothing after --offset 10)\n"},
		{"read ten.txt --offset 500 --limit 3", "(ten.txt has 10 lines; nothing after --offset 500)\n"},
		{"read noeol.txt --offset 7", "(noeol.txt has 2 lines; nothing after --offset 7)\n"},
		{"read empty.txt --offset 1", "(empty.txt has 0 lines; nothing after --offset 1)\n"},
		{"read noeol.txt", "     1\ta\n     2\tb\n"},
		{"read empty.txt", ""},
		{`read "with space.txt"`, "     1\tx\n"},
		{`read with\ space.txt`, "     1\tx\n"},
		{"read " + filepath.Join(ex.dir, "ten.txt") + " --limit 1", numbered(1, 1) + more(1, 1, filepath.Join(ex.dir, "ten.txt")+" --offset 1")},
	}
	for _, tt := range tests {
		r := sh.Run(context.Background(), tt.line)
		if r.ExitCode != 0 || r.Stdout != tt.want || r.Stderr != "" {
			t.Errorf("%s:\n got %+v\nwant %q", tt.line, r, tt.want)
		}
	}
}

func TestReadNumberWidth(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	testutil.WriteFile(t, filepath.Join(ex.dir, "f"), strings.Repeat("x\n", 1000001))
	r := sh.Run(context.Background(), "read f --offset 999998 --limit 3")
	want := "999999\tx\n1000000\tx\n1000001\tx\n"
	if r.Stdout != want {
		t.Errorf("got %q, want %q", r.Stdout, want)
	}
}

func TestReadErrors(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	testutil.WriteFile(t, filepath.Join(ex.dir, "a.txt"), "one\ntwo\n")
	testutil.WriteFile(t, filepath.Join(ex.dir, "bin"), "ab\x00cd")
	if err := os.Mkdir(filepath.Join(ex.dir, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, want string }{
		{"read", "Usage: read <file_path>"},
		{"read missing.txt", filepath.Join(ex.dir, "missing.txt") + ": no such file"},
		{"read dir", "is a directory"},
		{"read bin", "binary file"},
		{"read a.txt --offset abc", `invalid --offset value "abc"`},
		{"read a.txt --offset -1", `invalid --offset value "-1"`},
		{"read a.txt --limit 0", "invalid --limit value 0"},
		{"read a.txt --limit", "--limit needs a number"},
		{"read a.txt --lines 3", "unknown flag --lines"},
		{"read a.txt b.txt", "one file at a time"},
		{`read "a.txt`, "Unclosed quote"},
	}
	for _, tt := range tests {
		r := sh.Run(context.Background(), tt.line)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.want) || r.Stdout != "" {
			t.Errorf("%s = %+v, want exit 1 with %q", tt.line, r, tt.want)
		}
	}
	// Usage errors carry the usage line (the Bash tool's invalid_usage hint keys on it).
	if r := sh.Run(context.Background(), "read a.txt --offset abc"); !strings.Contains(r.Stderr, "Usage: read") {
		t.Errorf("bad number error lacks usage: %q", r.Stderr)
	}
}

func TestReadLongLineIsCut(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	long := strings.Repeat("é", 3000) // 6000 bytes
	testutil.WriteFile(t, filepath.Join(ex.dir, "long.txt"), long+"\nshort\n")
	r := sh.Run(context.Background(), "read long.txt")
	lines := strings.Split(r.Stdout, "\n")
	if len(lines) != 3 || lines[1] != "     2\tshort" {
		t.Fatalf("got %q", r.Stdout)
	}
	first := strings.TrimPrefix(lines[0], "     1\t")
	if !strings.HasPrefix(first, strings.Repeat("é", 1000)+" … [line cut: 4000 more bytes]") {
		t.Errorf("long line = %q…", first[:min(len(first), 80)])
	}
}

// sparseFile makes a size-byte file whose first lines are text and whose
// remainder is a hole, so a "1 GB file" costs no disk space.
func sparseFile(t testing.TB, dir string, size int64, lines int) string {
	t.Helper()
	p := filepath.Join(dir, "big.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "%08d the quick brown fox jumps over the lazy dog\n", i)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	return p
}

// Reading 2000 lines of a 1 GB file must not load the file: the allocations
// of one read stay far below the file's size.
func TestReadStreamsLargeFile(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	p := sparseFile(t, ex.dir, 1<<30, 3000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := sh.Run(context.Background(), "read "+p)
	runtime.ReadMemStats(&after)
	if r.ExitCode != 0 {
		t.Fatalf("read = %+v", r)
	}
	if !strings.HasPrefix(r.Stdout, "     1\t00000001 the quick") || !strings.Contains(r.Stdout, "  2000\t00002000 the quick") ||
		strings.Contains(r.Stdout, "\t00002001") || !strings.Contains(r.Stdout, "--offset 2000") {
		t.Fatalf("unexpected output head/tail: %q … %q", r.Stdout[:60], r.Stdout[len(r.Stdout)-120:])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("read of 2000 lines allocated %d bytes; it must stream", alloc)
	}
}

// BenchmarkReadFirst2000LinesOf1GB measures read on a 1 GB (sparse) file; the
// B/op figure shows memory does not grow with the file.
func BenchmarkReadFirst2000LinesOf1GB(b *testing.B) {
	sh, ex := newTestShell(b, nil)
	p := sparseFile(b, ex.dir, 1<<30, 3000)
	line := "read " + p
	b.ReportAllocs()
	for b.Loop() {
		if r := sh.Run(context.Background(), line); r.ExitCode != 0 {
			b.Fatal(r.Stderr)
		}
	}
}
