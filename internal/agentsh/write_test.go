package agentsh

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name, line, file, want string
	}{
		{"unquoted", "write a.txt hello", "a.txt", "hello"},
		{"unquoted keeps text as written", `write a.txt it's a\nb "q"`, "a.txt", `it's a\nb "q"`},
		{"single quoted", "write a.txt 'hello world'", "a.txt", "hello world"},
		{"double quoted escapes", `write a.txt "say \"hi\" \\ \$HOME"`, "a.txt", `say "hi" \ $HOME`},
		{"backslash-n stays two characters", `write a.txt "a\nb"`, "a.txt", `a\nb`},
		{"no expansion", `write a.txt "$HOME $(whoami) *"`, "a.txt", "$HOME $(whoami) *"},
		{"real newlines", "write a.txt 'line1\nline2\n'", "a.txt", "line1\nline2\n"},
		{"quote idiom", `write a.txt 'it'\''s'`, "a.txt", "it's"},
		{"empty content", `write a.txt ""`, "a.txt", ""},
		{"quoted path with space", `write "my notes.txt" x`, "my notes.txt", "x"},
		{"single-quoted path", `write 'my notes.txt' x`, "my notes.txt", "x"},
		{"escaped space in path", `write my\ notes.txt x`, "my notes.txt", "x"},
		{"parents created", "write deep/er/a.txt x", "deep/er/a.txt", "x"},
		{"heredoc quoted", "write h.txt <<'EOF'\nfirst $HOME\n  second \\n\nEOF", "h.txt", "first $HOME\n  second \\n\n"},
		{"heredoc unquoted is literal too", "write h.txt <<EOF\n$(rm -rf x)\nEOF\n", "h.txt", "$(rm -rf x)\n"},
		{"heredoc double-quoted delimiter", "write h.txt << \"END\"\na\nEND", "h.txt", "a\n"},
		{"heredoc strip tabs", "write h.txt <<-EOF\n\t\tindented\n\tEOF", "h.txt", "indented\n"},
		{"heredoc empty body", "write h.txt <<'EOF'\nEOF", "h.txt", ""},
		{"content on next line", "write a.txt\nline one\nline two", "a.txt", "line one\nline two"},
		{"help text as content", `write notes.txt "use -h"`, "notes.txt", "use -h"},
		{"leading dash content", `write a.txt -n`, "a.txt", "-n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, ex := newTestShell(t, nil)
			r := sh.Run(context.Background(), tt.line)
			if r.ExitCode != 0 {
				t.Fatalf("%q = %+v", tt.line, r)
			}
			p := filepath.Join(ex.dir, tt.file)
			if got := readFile(t, p); got != tt.want {
				t.Errorf("%s = %q, want %q", tt.file, got, tt.want)
			}
			if !strings.HasPrefix(r.Stdout, "Created "+p+" (") {
				t.Errorf("stdout = %q", r.Stdout)
			}
		})
	}
}

// Seed 001 "write 文件路径引号未闭合时返回明确错误", plus the other usage errors.
func TestWriteErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{`write "./tmp/a.txt hello`, "Unclosed quote in file path"},
		{`write './tmp/a.txt hello`, "Unclosed quote in file path"},
		{"write", "missing file path and content"},
		{"write a.txt", "missing content"},
		{"write a.txt   ", "missing content"},
		{`write a.txt "unclosed`, "Unclosed quote in content"},
		{"write a.txt <<EOF\nno end", "heredoc is not terminated"},
		{"write a.txt <<EOF", "heredoc has no body"},
		{`write "" x`, "empty file path"},
		{"write . x", "is a directory"},
	}
	for _, tt := range tests {
		sh, ex := newTestShell(t, nil)
		r := sh.Run(context.Background(), tt.line)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("%q = %+v, want exit 1 with %q", tt.line, r, tt.want)
		}
		entries, _ := os.ReadDir(ex.dir)
		if len(entries) != 0 {
			t.Errorf("%q left files behind: %v", tt.line, entries)
		}
	}
}

func TestWriteOverwriteKeepsModeAndFollowsSymlink(t *testing.T) {
	sh, ex := newTestShell(t, nil)
	p := filepath.Join(ex.dir, "run.sh")
	testutil.WriteFile(t, p, "old")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	r := sh.Run(context.Background(), "write run.sh 'echo new'")
	if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "Overwrote "+p) {
		t.Fatalf("got %+v", r)
	}
	info, err := os.Stat(p)
	if err != nil || info.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v (%v), want 0750", info.Mode(), err)
	}
	if err := os.Symlink("run.sh", filepath.Join(ex.dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	if r := sh.Run(context.Background(), "write link.sh via-link"); r.ExitCode != 0 {
		t.Fatalf("got %+v", r)
	}
	if got := readFile(t, p); got != "via-link" {
		t.Errorf("target = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(ex.dir, "link.sh")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced")
	}
	entries, _ := os.ReadDir(ex.dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestEdit(t *testing.T) {
	const orig = "a foo b foo c \"--all\" foo\nline2\n"
	tests := []struct {
		name, line, want, stdout string
	}{
		{"first only", `edit f.txt foo bar`, "a bar b foo c \"--all\" foo\nline2\n", "replaced 1 occurrence (the first of 3; add --all"},
		{"all", `edit f.txt foo bar --all`, "a bar b bar c \"--all\" bar\nline2\n", "replaced 3 occurrences"},
		{"flag first", `edit --all f.txt foo bar`, "a bar b bar c \"--all\" bar\nline2\n", "replaced 3 occurrences"},
		{"quoted --all is text", `edit f.txt '"--all"' '"--every"'`, "a foo b foo c \"--every\" foo\nline2\n", "replaced 1 occurrence"},
		{"quoted --all as new text", `edit f.txt 'line2' "--all"`, "a foo b foo c \"--all\" foo\n--all\n", "replaced 1 occurrence"},
		{"multi-line", "edit f.txt 'foo\nline2' 'X\nY'", "a foo b foo c \"--all\" X\nY\n", "replaced 1"},
		{"literal, not regex", `edit f.txt 'c "' 'C ['`, "a foo b foo C [--all\" foo\nline2\n", "replaced 1"},
		{"backslash-n is literal", `edit f.txt "foo\nline2" "Z"`, orig, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, ex := newTestShell(t, nil)
			p := filepath.Join(ex.dir, "f.txt")
			testutil.WriteFile(t, p, orig)
			r := sh.Run(context.Background(), tt.line)
			if tt.stdout == "" {
				if r.ExitCode != 1 || !strings.Contains(r.Stderr, "not found") {
					t.Errorf("got %+v, want not found", r)
				}
			} else if r.ExitCode != 0 || !strings.Contains(r.Stdout, tt.stdout) {
				t.Errorf("got %+v, want stdout with %q", r, tt.stdout)
			}
			if got := readFile(t, p); got != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEditErrors(t *testing.T) {
	tests := []struct{ line, want string }{
		{"edit f.txt absent x", "the old text was not found in"},
		{"edit f.txt only-two", "Usage: edit"},
		{"edit f.txt a b c", "got 4 argument(s)"},
		{`edit f.txt "" x`, "the old text is empty"},
		{"edit f.txt same same", "identical"},
		{"edit nope.txt a b", "no such file"},
		{`edit f.txt "open x`, "Unclosed quote"},
	}
	for _, tt := range tests {
		sh, ex := newTestShell(t, nil)
		p := filepath.Join(ex.dir, "f.txt")
		testutil.WriteFile(t, p, "same content\n")
		r := sh.Run(context.Background(), tt.line)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, tt.want) {
			t.Errorf("%q = %+v, want exit 1 with %q", tt.line, r, tt.want)
		}
		if got := readFile(t, p); got != "same content\n" {
			t.Errorf("%q changed the file: %q", tt.line, got)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []token
		err  bool
	}{
		{`a "b c" 'd e'`, []token{{"a", false}, {"b c", true}, {"d e", true}}, false},
		{`x"y"z`, []token{{"xyz", true}}, false},
		{`a\ b \"c\" d\n`, []token{{"a b", false}, {`"c"`, false}, {`d\n`, false}}, false},
		{`"a\"b\\c\d"`, []token{{`a"b\c\d`, true}}, false},
		{`''`, []token{{"", true}}, false},
		{`"open`, nil, true},
		{`'open`, nil, true},
		{"  ", nil, false},
	}
	for _, tt := range tests {
		got, err := tokenize(tt.in)
		if (err != nil) != tt.err {
			t.Errorf("tokenize(%q) err = %v", tt.in, err)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("tokenize(%q) = %+v, want %+v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("tokenize(%q)[%d] = %+v, want %+v", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func FuzzRun(f *testing.F) {
	for _, s := range []string{"read a --offset 1", `write "a b`, "edit a 'x' \"y\" --all", "TodoWrite '{\"todos\":[]}'", "write a <<-'E'\n\tE", "read -h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		dir := t.TempDir()
		sh := New(Options{Exec: &bashExec{dir: dir}, Home: dir, Paths: allowOnly{dir}})
		for _, name := range []string{"read ", "write ", "edit ", "TodoWrite "} {
			_ = sh.Run(context.Background(), name+line) // must not panic
		}
	})
}
