package repl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/render"
)

// mentionTree makes a working directory and a home directory with the
// awkward names the tests below complete and mention.
func mentionTree(t *testing.T) (cwd, home string) {
	t.Helper()
	root := t.TempDir()
	cwd, home = filepath.Join(root, "proj"), filepath.Join(root, "home")
	files := []string{
		"proj/ru/договор.txt", "proj/ru/дело.txt",
		"proj/sp/my file.txt",
		"proj/two/a b.txt", "proj/two/a c.txt",
		"proj/sp dir/x.txt",
		"proj/q/say \"hi\".txt",
		"proj/v1.", "proj/v2.txt",
		"proj/g/e\u0301a.txt", "proj/g/e\u0301b.txt", // é as e + combining acute
		"proj/h/e\u0301x.txt", "proj/h/ex.txt",
		"proj/bad/ok.txt", "proj/bad/esc\x1b[31m.txt", "proj/bad/nl\nname.txt",
		"proj/links/good.txt",
		"proj/odd/a, b].txt",
		"home/.bashrc", "home/my docs/plan.md",
	}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(cwd, "links/dangling")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	return cwd, home
}

// Tab completes names by whole characters, writes a mention the way
// withMentions reads it (quoted when the path has a space), offers for a
// mention only what can be attached, and types no control character.
func TestCompleteMentionForms(t *testing.T) {
	cwd, _ := mentionTree(t)
	r := newREPL(t, Options{In: strings.NewReader(""), Renderer: render.New(render.Options{}), Agent: &fakeAgent{}, Cwd: cwd}, nil)
	tests := []struct {
		name, line, want string
		note             []string // what the candidate list shows
	}{
		{"Cyrillic names sharing a first letter", "@ru/", "@ru/д", nil},
		{"the shared letter typed lists both", "@ru/д", "@ru/д", []string{"@ru/дело.txt", "@ru/договор.txt"}},
		{"Cyrillic in a plain path", "cat ru/", "cat ru/д", nil},
		{"a combining accent is not split from its letter", "@g/", "@g/e\u0301", nil},
		{"e and é are different characters", "@h/", "@h/", []string{"@h/ex.txt", "@h/e\u0301x.txt"}},
		{"a space in the name is quoted", "read @sp/m", `read @"sp/my file.txt" `, nil},
		{"an open quote completes", `read @"sp/my f`, `read @"sp/my file.txt" `, nil},
		{"a directory with a space stays open to go on", `@"sp d`, `@"sp dir/"`, nil},
		{"Tab after a closed directory goes into it", `@"sp dir/"`, `@"sp dir/x.txt" `, nil},
		{"a shared prefix with a space opens the quote", "@two/a", `@"two/a `, nil},
		{"quoted candidates are listed quoted", `@"two/a `, `@"two/a `, []string{`@"two/a b.txt"`, `@"two/a c.txt"`}},
		{"a quote in the name is escaped", "@q/s", `@"q/say \"hi\".txt" `, nil},
		{"home directory", "explain @~/.bashr", "explain @~/.bashrc ", nil},
		{"home directory with a space", "@~/my", `@"~/my docs/"`, nil},
		{"a name with an escape is typed up to it", "@bad/e", "@bad/esc", nil},
		{"a name with a newline is typed up to it", "@bad/n", "@bad/nl", nil},
		{"and then listed with its controls escaped", "@bad/esc", "@bad/esc", []string{`@"bad/esc\x1b[31m.txt"`}},
		{"they are listed, escaped, with the rest", "@bad/", "@bad/", []string{`@"bad/esc\x1b[31m.txt"`, `@"bad/nl\nname.txt"`, "@bad/ok.txt"}},
		{"a dangling link cannot be mentioned", "@links/", "@links/good.txt ", nil},
		{"a dangling link is still a path", "cat links/", "cat links/", []string{"links/dangling", "links/good.txt"}},
		{"text after a closing quote is left alone", `@"sp/my file.txt",`, `@"sp/my file.txt",`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.es.note = ""
			got, pos := r.complete(tt.line, len(tt.line))
			if got != tt.want || pos != len(tt.want) {
				t.Errorf("complete(%q) = %q, %d; want %q", tt.line, got, pos, tt.want)
			}
			if got := strings.Split(r.es.note, "  "); tt.note != nil && strings.Join(got, "|") != strings.Join(tt.note, "|") {
				t.Errorf("candidates %q, want %q", got, tt.note)
			}
			if tt.note == nil && r.es.note != "" {
				t.Errorf("candidates %q listed, want none", r.es.note)
			}
		})
	}

	// Whatever Tab writes as a whole mention is one withMentions attaches.
	for _, line := range []string{"read @sp/m", "@q/s", "explain @~/.bashr", "@v1", "@odd/a"} {
		got, _ := r.complete(line, len(line))
		if withMentions := r.withMentions(got); !strings.Contains(withMentions, mentionsNote) {
			t.Errorf("%q completed to %q, which attaches nothing", line, got)
		}
	}
}

// withMentions reads @path and @"path" (with \" and \\), expands ~/,
// attaches only files and directories that exist, and names them so that
// the note stays one line the model can take apart.
func TestWithMentionsForms(t *testing.T) {
	cwd, home := mentionTree(t)
	r := newREPL(t, Options{In: strings.NewReader(""), Renderer: render.New(render.Options{}), Agent: &fakeAgent{}, Cwd: cwd}, nil)
	tests := []struct {
		name, input string
		want        string // the note's list; "" for no note
	}{
		{"quoted path with a space", `read @"sp/my file.txt" please`, `"sp/my file.txt"`},
		{"quoted, then punctuation", `see @"sp/my file.txt", then stop`, `"sp/my file.txt"`},
		{"unquoted path with a space is not that file", "read @sp/my file.txt", ""},
		{"an unclosed quote is no mention", `read @"sp/my file.txt and more`, ""},
		{"the home directory names the real path", "explain @~/.bashrc", filepath.Join(home, ".bashrc")},
		{"home, quoted", `@"~/my docs/plan.md"`, `"` + filepath.Join(home, "my docs/plan.md") + `"`},
		{"an escaped quote", `@"q/say \"hi\".txt"`, `"q/say \"hi\".txt"`},
		{"a name ending in a dot", "look at @v1.", "v1."},
		{"a sentence's full stop is still dropped", "look at @v2.txt.", "v2.txt"},
		{"a comma and bracket in the name are quoted in the note", `@"odd/a, b].txt"`, `"odd/a, b].txt"`},
		{"an escape sequence never reaches the note raw", "@bad/esc\x1b[31m.txt", `"bad/esc\x1b[31m.txt"`},
		{"a quote does not run over a newline", "@\"bad/nl\nname.txt\"", ""},
		{"the same file twice is named once", "@ru/дело.txt and @./ru/дело.txt", "ru/дело.txt"},
		{"a lone @ and punctuation are no mention", "hey @! and @", ""},
		{"an empty quote is no mention", `@""`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.withMentions(tt.input)
			want := tt.input
			if tt.want != "" {
				want += mentionsNote + tt.want + "]"
			}
			if got != want {
				t.Errorf("withMentions(%q) =\n%q, want\n%q", tt.input, got, want)
			}
			if withoutMentions(got) != tt.input {
				t.Errorf("withoutMentions gives %q", withoutMentions(got))
			}
		})
	}
}

// Over a terminal, Tab on @ru/д lists both Cyrillic names, and the
// chosen one reaches the model as a mention; so does a name with a space.
func TestPTYCompleteCyrillic(t *testing.T) {
	cwd, _ := mentionTree(t)
	fa := &fakeAgent{}
	p := startPTY(t, fa, func(o *Options) { o.Cwd = cwd })
	p.send("read @ru/\t")
	p.waitScreen("the shared letter inserted", func(s *screen) bool {
		return strings.HasSuffix(s.cursorLine(), "read @ru/д")
	})
	p.send("\t")
	p.waitScreen("both names listed", func(s *screen) bool {
		all := strings.Join(s.lines(), "\n")
		return strings.Contains(all, "@ru/дело.txt") && strings.Contains(all, "@ru/договор.txt")
	})
	p.send("о\t\r")
	in := fa.waitInputs(t, 1)
	if want := "read @ru/договор.txt " + mentionsNote + "ru/договор.txt]"; in[0] != want {
		t.Errorf("the model got %q, want %q", in[0], want)
	}

	// A name with a space goes in quoted and is attached. (Tab completes in
	// the editor, not in what is typed ahead while the turn ends.)
	p.send("read @sp/m")
	p.waitScreen("the line in the editor", func(s *screen) bool { return s.cursorLine() == "› read @sp/m" })
	p.send("\t")
	p.waitScreen("the quoted mention", func(s *screen) bool {
		return strings.HasSuffix(s.cursorLine(), `read @"sp/my file.txt"`)
	})
	p.send("\r")
	in = fa.waitInputs(t, 2)
	if want := `read @"sp/my file.txt" ` + mentionsNote + `"sp/my file.txt"]`; in[1] != want {
		t.Errorf("the model got %q, want %q", in[1], want)
	}
}
