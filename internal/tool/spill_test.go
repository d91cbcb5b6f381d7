package tool

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// capFile, which reads a spilled stdout back from its file, gives what
// capOutput gives for the same output held in memory, and leaves the same
// saved file (or none, when the output fits).
func TestCapFileMatchesCapOutput(t *testing.T) {
	long := strings.Repeat("ab\n", 300)
	cases := []struct {
		stdout, stderr string
		limit          int
	}{
		{long, "", 100},
		{long, "warning\n", 100},
		{long + "\n\n\n", "", 100},
		{"short\n", "", 100},
		{"short", "err\n", 100},
		{"\n\n\n", "only stderr", 100},
		{"\n\n\n", "", 100},
		{strings.Repeat("é€😀x", 500), "", 101},
		{strings.Repeat("é", 400) + "\xff\xfe" + strings.Repeat("€", 400), strings.Repeat("z", 300), 60},
		{long, strings.Repeat("e", 2000), 100},
		{long, "", 1},
	}
	for i, c := range cases {
		dir := t.TempDir()
		b := New(Options{OutputCap: c.limit, OutputDir: dir})
		var wantFacts, gotFacts Facts
		want := b.capOutput(combine(c.stdout, c.stderr), &wantFacts)
		f, err := b.spillFile()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(c.stdout); err != nil {
			t.Fatal(err)
		}
		got, err := capFile(f, c.stderr, c.limit, &gotFacts)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if wantFacts.Truncated != gotFacts.Truncated {
			t.Fatalf("case %d: truncated %v, want %v", i, gotFacts.Truncated, wantFacts.Truncated)
		}
		if !wantFacts.Truncated {
			if got != want {
				t.Errorf("case %d: got %q\nwant %q", i, got, want)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 { // capOutput saved none; the spill file is gone
				t.Errorf("case %d: files left %v", i, files)
			}
			continue
		}
		if got != strings.ReplaceAll(want, wantFacts.FullOutputPath, gotFacts.FullOutputPath) {
			t.Errorf("case %d: got %q\nwant %q", i, got, want)
		}
		a, _ := os.ReadFile(wantFacts.FullOutputPath)
		g, _ := os.ReadFile(gotFacts.FullOutputPath)
		if string(a) != string(g) {
			t.Errorf("case %d: saved file %q, want %q", i, g, a)
		}
	}
}

// Through the real shell: a 20 MB output gives the result the in-memory
// path gave, with the whole output saved, and only one file per command.
func TestLargeOutputStreamedToItsFile(t *testing.T) {
	dir := t.TempDir()
	b, _ := newTool(t, func(o *Options) { o.OutputDir = dir })
	r := call(t, b, "seq 1 2600000")
	var full strings.Builder
	for i := 1; i <= 2_600_000; i++ {
		full.WriteString(strconv.Itoa(i) + "\n")
	}
	var facts Facts
	want := b.capOutput(strings.TrimSuffix(full.String(), "\n"), &facts)
	if r.Output != strings.ReplaceAll(want, facts.FullOutputPath, r.Facts.FullOutputPath) {
		t.Fatalf("output differs from the in-memory cap:\n%.300q", r.Output)
	}
	saved, err := os.ReadFile(r.Facts.FullOutputPath)
	if err != nil || string(saved)+"\n" != full.String() {
		t.Fatalf("saved output: %d bytes, want %d (%v)", len(saved), full.Len()-1, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 2 { // the result's and the reference's
		t.Fatalf("files: %v", files)
	}
}
