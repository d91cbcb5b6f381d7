package repl

import (
	"strings"
	"testing"
)

// entryList is a history, newest first.
type entryList []string

func (l entryList) Len() int        { return len(l) }
func (l entryList) At(i int) string { return l[i] }

// The reverse search's state after each sequence of steps: typing narrows
// (case-insensitive, newest first), Backspace widens, Ctrl+R goes older and
// Ctrl+S newer, a prompt sent twice is found once, and a step that finds
// nothing fails without losing the query or the entry shown.
func TestRevSearch(t *testing.T) {
	hist := entryList{
		"make test",           // 0, the newest
		"fix the lexer",       // 1
		"deploy it",           // 2
		"FIX the parser",      // 3
		"fix the lexer",       // 4: sent again, found at 1
		"git status\ngit fix", // 5
	}
	tests := []struct {
		name, saved string
		steps       []string // text typed, or "<bs>", "<older>", "<newer>"
		query, text string
		failed      bool
		dir         string
	}{
		{"nothing typed shows the prompt from before", "draft\nmore", nil, "", "draft\nmore", false, ""},
		{"the text typed before is the first query", "fix", nil, "fix", "fix the lexer", false, ""},
		{"typing narrows as it goes", "", []string{"f"}, "f", "fix the lexer", false, ""},
		{"typing narrows further", "", []string{"f", "ix the p"}, "fix the p", "FIX the parser", false, ""},
		{"case-insensitive", "", []string{"PARS"}, "PARS", "FIX the parser", false, ""},
		{"Ctrl+R: the next older match", "fix", []string{"<older>"}, "fix", "FIX the parser", false, ""},
		{"a prompt sent twice is found once", "fix", []string{"<older>", "<older>"}, "fix", "git status\ngit fix", false, ""},
		{"past the oldest fails, the match stays", "fix", []string{"<older>", "<older>", "<older>"}, "fix", "git status\ngit fix", true, "older"},
		{"Ctrl+S: the next newer match", "fix", []string{"<older>", "<older>", "<newer>"}, "fix", "FIX the parser", false, ""},
		{"Ctrl+S at the newest fails", "fix", []string{"<newer>"}, "fix", "fix the lexer", true, "newer"},
		{"typing keeps the match when it still matches", "fix", []string{"<older>", " the"}, "fix the", "FIX the parser", false, ""},
		{"no match keeps the query and the entry shown", "", []string{"dep", "x"}, "depx", "deploy it", true, ""},
		{"no match from the start shows the prompt from before", "zzz", nil, "zzz", "zzz", true, ""},
		{"Backspace widens after a miss", "", []string{"dep", "x", "<bs>"}, "dep", "deploy it", false, ""},
		{"Backspace to the newest match", "", []string{"the p", "<bs>", "<bs>", "<bs>"}, "th", "FIX the parser", false, ""},
		{"Backspace from a match that no longer fits", "zzz", []string{"<bs>", "<bs>", "<bs>", "git"}, "git", "git status\ngit fix", false, ""},
		{"Backspace on nothing does nothing", "", []string{"<bs>"}, "", "", false, ""},
		{"Ctrl+R with nothing typed searches the last query again", "", []string{"<older>"}, "deploy", "deploy it", false, ""},
		{"multi-line entries are found whole", "", []string{"status"}, "status", "git status\ngit fix", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newRevSearch(hist, tt.saved)
			for _, step := range tt.steps {
				switch step {
				case "<bs>":
					s.backspace()
				case "<older>":
					s.older("deploy")
				case "<newer>":
					s.newer()
				default:
					s.typed(step)
				}
			}
			if s.query != tt.query || s.text() != tt.text || s.failed != tt.failed || s.dir != tt.dir {
				t.Errorf("query %q text %q failed %v (%q); want %q %q %v (%q)",
					s.query, s.text(), s.failed, s.dir, tt.query, tt.text, tt.failed, tt.dir)
			}
		})
	}
}

// The search's rows: the query in quotes, the match highlighted, a
// multi-line entry whole, the cursor after the query; a miss says so.
func TestRevSearchRows(t *testing.T) {
	r := editorREPL(t, t.TempDir())
	r.o.Color = true
	r.hist.Add("git status\ngit fix")
	r.hist.Add("make test")
	typeKeys(r, "\x12fix")
	rows, x := r.searchRows()
	want := []string{"(reverse-i-search) 'fix': git status", "  git " + highlightOn + "fix" + highlightOff}
	if strings.Join(rows, "|") != strings.Join(want, "|") || x != len("(reverse-i-search) 'fix") {
		t.Errorf("rows %q, cursor at %d", rows, x)
	}
	typeKeys(r, "x")
	rows, _ = r.searchRows()
	if !strings.HasPrefix(rows[0], "(failing reverse-i-search) 'fixx': git status") {
		t.Errorf("a miss shows %q", rows)
	}
	if h := strings.Join(r.hints(), ""); !strings.Contains(h, "no match for 'fixx'") {
		t.Errorf("hint %q", h)
	}
}

// Ctrl+R on a terminal: the search replaces the prompt row and narrows as
// the query is typed; Ctrl+R goes older; Enter sends the match; Esc keeps
// it to edit; Ctrl+G restores what was typed before; a miss says so and
// keeps the query. The search's rows never stay in the scrollback.
func TestPTYReverseSearch(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	for i, in := range []string{"fix the parser", "deploy it", "fix the lexer"} {
		p.send(in + "\r")
		p.waitFor("› ", i+2)
	}
	under := func(s *screen) string { return s.lines()[min(s.row+1, len(s.rows)-1)] }
	p.send("\x12")
	p.waitScreen("the search, empty", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) '':" && strings.HasPrefix(under(s), "type to search the history")
	})
	p.send("fi")
	p.waitScreen("the newest match for 'fi'", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'fi': fix the lexer" && s.col == len("(reverse-i-search) 'fi")
	})
	p.send("x the p")
	p.waitScreen("narrowed to 'fix the p'", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'fix the p': fix the parser"
	})
	p.send("\x7f\x7f\x7f\x7f\x7f\x7f") // Backspace: 'fix'
	p.waitScreen("widened to 'fix'", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'fix': fix the parser"
	})
	p.send("\x07\x12fix") // Ctrl+G, then a new search: the newest match again
	p.waitScreen("the newest match for 'fix'", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'fix': fix the lexer"
	})
	p.send("\x12") // Ctrl+R: older
	p.waitScreen("the older match", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'fix': fix the parser"
	})
	p.send("\r")
	// Not a count of prompts: the prompt row painted back over the search
	// holds "› " before the turn has begun.
	if got := fa.waitInputs(t, 4); len(got) != 4 || got[3] != "fix the parser" {
		t.Fatalf("turns %q, want the match sent", got)
	}
	p.waitScreen("the prompt as sent, the search gone", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return strings.Contains(text, "› fix the parser\n") && !strings.Contains(text, "reverse-i-search") &&
			!strings.Contains(text, "Ctrl+G cancels")
	})

	p.send("\x12dep")
	p.waitScreen("'dep' found", func(s *screen) bool {
		return s.cursorLine() == "(reverse-i-search) 'dep': deploy it"
	})
	p.send("\x1b")
	p.waitScreen("Esc: the match in the editor", func(s *screen) bool {
		return s.cursorLine() == "› deploy it" && !strings.Contains(strings.Join(s.lines(), "\n"), "reverse-i-search")
	})
	p.send(" now")
	p.waitScreen("the match edited", func(s *screen) bool { return s.cursorLine() == "› deploy it now" })

	p.send("\x15draft\x12lex") // Ctrl+U, a draft, then a search
	p.waitScreen("'draftlex' missed", func(s *screen) bool {
		return s.cursorLine() == "(failing reverse-i-search) 'draftlex': draft" &&
			strings.HasPrefix(under(s), "no match for 'draftlex' · Backspace widens")
	})
	p.send("\x07") // Ctrl+G
	p.waitScreen("Ctrl+G: the draft back", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return s.cursorLine() == "› draft" && !strings.Contains(text, "reverse-i-search") && !strings.Contains(text, "no match")
	})
	p.send("\x15\x12lexer\x12")
	p.waitScreen("no older match: said, the query and match kept", func(s *screen) bool {
		return s.cursorLine() == "(failing reverse-i-search) 'lexer': fix the lexer" &&
			strings.HasPrefix(under(s), "no older prompt contains 'lexer'")
	})
}
