package repl

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// Shift+Enter, Alt+Enter and Ctrl+J put a line break into the prompt
// instead of sending it; the two-line prompt is one history entry and comes
// back whole with Up.
func TestPTYMultiLinePromptAndHistory(t *testing.T) {
	for _, key := range []struct{ name, seq string }{
		{"Shift+Enter (CSI u)", "\x1b[13;2u"}, {"Shift+Enter (modifyOtherKeys)", "\x1b[27;2;13~"},
		{"Alt+Enter", "\x1b\r"}, {"Ctrl+J", "\n"},
	} {
		t.Run(key.name, func(t *testing.T) {
			fa := &fakeAgent{}
			p := startPTY(t, fa, nil)
			p.send("first line" + key.seq + "second line\r")
			p.waitFor("› ", 2)
			p.waitScreen("the prompt on two rows", func(s *screen) bool {
				return strings.Contains(strings.Join(s.lines(), "\n"), "› first line\n  second line\n")
			})
			p.send("\x1b[A\r") // Up, Enter: the same prompt again
			p.waitFor("› ", 3)
			want := "[first line\nsecond line first line\nsecond line]"
			if got := fa.Inputs(); fmt.Sprint(got) != want {
				t.Fatalf("turns %q, want the two-line prompt twice", got)
			}
			if h := p.repl.hist.Entries(); len(h) != 1 || h[0] != "first line\nsecond line" {
				t.Errorf("history %q, want one entry", h)
			}
		})
	}
}

// A long paste shows as a placeholder; the model gets the whole text.
func TestPTYLongPasteCollapsed(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	var lines []string
	for i := 1; i <= 300; i++ {
		lines = append(lines, fmt.Sprintf("pasted row %d", i))
	}
	p.send("summarise: \x1b[200~" + strings.Join(lines, "\r") + "\x1b[201~ thanks\r")
	p.waitFor("[Pasted text #1 +300 lines]")
	p.waitFor("› ", 2)
	got := fa.Inputs()
	if len(got) != 1 || got[0] != "summarise: "+strings.Join(lines, "\n")+" thanks" {
		t.Fatalf("the model got %d prompts, first %.200q", len(got), got)
	}
	if strings.Contains(p.out.String(), "pasted row 150") {
		t.Error("the paste was echoed row by row")
	}
}

// Typing / shows one dim row of the matching commands under the prompt;
// it narrows as the command is typed, shows the command's help once one
// is left, and is erased when the input stops being a command and when
// the prompt is sent, so it never stays in the scrollback.
func TestPTYSlashPopup(t *testing.T) {
	p := startPTY(t, &fakeAgent{}, nil)
	popup := func(s *screen) string { // the row under the prompt's row
		for i, l := range s.lines() {
			if strings.HasPrefix(l, "› /") && i+1 < len(s.rows) {
				return s.lines()[i+1]
			}
		}
		return ""
	}
	p.send("/")
	p.waitScreen("the popup of every command", func(s *screen) bool {
		return strings.HasPrefix(popup(s), "/help /exit /quit /clear") && strings.HasSuffix(popup(s), "…") && len([]rune(popup(s))) <= 79
	})
	p.send("co")
	p.waitScreen("the popup narrowed to /co…", func(s *screen) bool {
		return popup(s) == "/cost /context /compact · Tab completes"
	})
	p.send("st")
	p.waitScreen("the one command left, with its help", func(s *screen) bool {
		return strings.HasPrefix(popup(s), "/cost · tokens in/out")
	})
	p.send("\x7f\x7f\x7f\x7f\x7f") // Backspace to an empty prompt
	p.waitScreen("the popup erased", func(s *screen) bool {
		return s.cursorLine() == "›" && !strings.Contains(strings.Join(s.lines(), "\n"), "/cost")
	})
	p.send("/mod\t") // Tab completes as far as the candidates agree; the popup follows
	p.waitScreen("/mod completed to /mode", func(s *screen) bool {
		return s.cursorLine() == "› /mode" && popup(s) == "/model /mode · Tab completes"
	})
	p.send("\r")
	p.waitFor("Mode default")
	p.waitScreen("the popup gone from the scrollback", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return strings.Contains(text, "› /mode\nMode default") && !strings.Contains(text, "Tab completes")
	})
}

// The slash popup's text for what is typed.
func TestSlashPopup(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{"", ""},
		{"hello", ""},
		{"/co", "/cost /context /compact · Tab completes"},
		{"/CO", "/cost /context /compact · Tab completes"},
		{"/resu", "/resume [--latest | --all | id] · continue a saved session of this project (pick by number or id prefix)"},
		{"/zz", "no command starts with /zz · /help lists them"},
		{"/model gpt", ""}, // arguments: no longer a command name being typed
		{"/co\nmore", ""},
	} {
		if got := slashPopup(tt.value); got != tt.want {
			t.Errorf("slashPopup(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// The rows drawn line by line are the rows the textarea's View shows, for
// wrapped, wide and empty lines, at any cursor position, after the prompt
// or the width changes.
func TestEditorRowsMatchView(t *testing.T) {
	viewRows := func(e *lineEditor) []string { // the textarea's own View, its padding dropped
		rows := strings.Split(strings.TrimSuffix(e.ta.View(), "\n"), "\n")
		for i, r := range rows {
			t := strings.TrimRight(r, " ")
			if i == 0 && len(t) < len(e.shown) && strings.HasPrefix(r, e.shown) {
				t = e.shown
			}
			rows[i] = t
		}
		return rows
	}
	values := []string{
		"",
		"abc",
		"one\n\nthree",
		strings.Repeat("word ", 20),
		strings.Repeat("x", 37) + "\n" + strings.Repeat("y", 38) + "\n" + strings.Repeat("z", 39),
		"日本語のテキスト、とても長い行がここにあります。日本語のテキスト、とても長い行",
		"trailing   \n   leading",
		"a\tb",
	}
	for _, size := range []int{40, 23} {
		for _, prompt := range []string{"› ", "accept-edits › "} {
			e := newLineEditor(io.Discard, prompt, size, 24)
			for _, v := range values {
				e.setValue(v)
				for _, move := range []func(){func() {}, e.ta.MoveToBegin, func() { e.ta.CursorDown(); e.ta.CursorEnd() }} {
					move()
					want, got := viewRows(e), e.viewRows()
					if strings.Join(got, "|") != strings.Join(want, "|") {
						t.Errorf("width %d, prompt %q, value %q:\n got %q\nwant %q", size, prompt, v, got, want)
					}
				}
			}
		}
	}
}

// After a resize the editor's rows are erased as a reflowing terminal now
// shows them: each row wider than the new width takes more rows, and the
// cursor moved down with its text, so the way up is counted at the new
// width (not doing so left the old prompt's first row on screen).
func TestEraseAtNewWidth(t *testing.T) {
	long := "› " + strings.Repeat("x", 94) // 96 columns
	for _, tc := range []struct {
		name     string
		drawn    []string
		row, col int
		cols     int
		want     string
	}{
		{"no resize, cursor on the first row", []string{"› hi", "hint"}, 0, 4, 100, "\r\x1b[J"},
		{"no resize, cursor on the third row", []string{"› a", "  b", "  c", "hint"}, 2, 3, 100, "\x1b[2A\r\x1b[J"},
		{"narrower: the cursor's row rewrapped onto two", []string{long, "hint"}, 0, 96, 50, "\x1b[1A\r\x1b[J"},
		{"narrower: rows above rewrapped too", []string{long, long, "\x1b[2mhint\x1b[m"}, 1, 96, 50, "\x1b[3A\r\x1b[J"},
		{"narrower: a dim row counts its text only", []string{"\x1b[2m" + strings.Repeat("y", 40) + "\x1b[m", "› z"}, 1, 3, 30, "\x1b[2A\r\x1b[J"},
		{"wider: nothing rewraps", []string{long, "  b"}, 1, 3, 200, "\x1b[1A\r\x1b[J"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			e := newLineEditor(&out, "› ", 100, 30)
			e.drawn, e.row, e.col = tc.drawn, tc.row, tc.col
			e.eraseAt(tc.cols)
			if out.String() != tc.want {
				t.Errorf("wrote %q, want %q", out.String(), tc.want)
			}
			if e.drawn != nil || e.row != 0 || e.col != 0 {
				t.Errorf("after erasing: drawn %q row %d col %d, want nothing", e.drawn, e.row, e.col)
			}
		})
	}
}

// What the editor cannot hold faithfully goes behind a placeholder and is
// sent whole: a short paste with tabs (the editor turns a tab into
// spaces), and a history entry too long to edit (the editor holds 10,000
// lines and lags on a huge line) when Up or Ctrl+R brings it back. A
// short multi-line entry still comes back as text to edit.
func TestPTYEditorKeepsTextWhole(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	code := "func f() {\n\treturn 1\n}"
	p.send("\x1b[200~" + strings.ReplaceAll(code, "\n", "\r") + "\x1b[201~\r")
	p.waitFor("[Pasted text #1 +3 lines]")
	if got := fa.waitInputs(t, 1); len(got) != 1 || got[0] != code {
		t.Fatalf("the model got %q, want the paste with its tab", got)
	}

	var rows []string
	for i := 1; i <= 20000; i++ {
		rows = append(rows, fmt.Sprintf("r%d", i))
	}
	big := strings.Join(rows, "\n")
	p.send("\x1b[200~" + strings.Join(rows, "\r") + "\x1b[201~\r")
	fa.waitInputs(t, 2)
	p.send("two\nlines\r")
	fa.waitInputs(t, 3)
	// Up during the turn would recall into the type-ahead line, whose cursor
	// stays at its end: wait for the turn to end, as a person would see it.
	p.waitScreen("the idle prompt", func(s *screen) bool {
		return s.cursorLine() == "›" && strings.Contains(s.lines()[min(s.row+1, len(s.rows)-1)], "/help")
	})

	p.send("\x1b[A") // Up: the short entry, as text
	p.waitScreen("the short entry to edit", func(s *screen) bool {
		return strings.Contains(strings.Join(s.lines(), "\n"), "› two\n  lines")
	})
	p.send("\x1b[A") // Up again: the huge one, behind a placeholder
	p.waitScreen("the huge entry as a placeholder", func(s *screen) bool {
		return strings.HasPrefix(s.cursorLine(), "› [Pasted text #") && strings.HasSuffix(s.cursorLine(), " +20000 lines]")
	})
	p.send("\r")
	if got := fa.waitInputs(t, 4); len(got) != 4 || got[3] != big {
		t.Fatalf("recalled and sent: %d prompts, the last %d bytes, want all %d", len(got), len(got[len(got)-1]), len(big))
	}
	p.send("\x12r19999") // Ctrl+R finds it; Esc puts it in the editor
	p.waitScreen("the search found it", func(s *screen) bool { return strings.Contains(s.cursorLine(), "'r19999'") })
	p.send("\x1b")
	p.waitScreen("the match in the editor", func(s *screen) bool {
		return strings.HasPrefix(s.cursorLine(), "› [Pasted text #") && strings.HasSuffix(s.cursorLine(), " +20000 lines]")
	})
	p.send("\r")
	if got := fa.waitInputs(t, 5); len(got) != 5 || got[4] != big {
		t.Fatalf("searched and sent: the last of %d prompts is %d bytes, want %d; screen:\n%s", len(got), len(got[len(got)-1]), len(big), strings.Join(p.screen().lines(), "\n"))
	}
}
