package repl

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
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

// Typing / at the start of a line shows one line of the commands; Tab
// then completes.
func TestPTYSlashHint(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	p.send("/")
	p.waitFor("commands: /help /exit /quit")
	p.send("mod\t\r") // Tab makes /mode; /mod alone would be unknown
	p.waitFor("Mode default")
}

// The / hint fits one row (cut with … rather than wrapped by the terminal)
// and is erased when the prompt is sent or stops being a command, so it
// never stays in the scrollback above the next prompt.
func TestPTYSlashHintErased(t *testing.T) {
	const erase = "\x1b[1A\r\x1b[J" // up over the hint row, erase to the end
	hintRe := regexp.MustCompile(`commands: [^\r]*`)
	for _, tt := range []struct{ name, keys string }{
		{"sent", "cost\r"},
		{"no longer a command", "\x7fhi\r"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startPTY(t, &fakeAgent{}, nil)
			p.send("/")
			p.waitFor("commands: /help")
			p.send(tt.keys)
			p.waitFor("› ", 4) // first, redrawn under the hint and where it was, after the turn
			out := p.out.String()
			hint := ansi.Strip(hintRe.FindString(out))
			if w := ansi.StringWidth(hint); w > 79 || !strings.HasSuffix(hint, "…") {
				t.Errorf("hint is %d cells wide (%q); want it cut to fit 80 columns with …", w, hint)
			}
			i := strings.Index(out, "commands: ")
			if j := strings.Index(out[i:], erase); j < 0 {
				t.Errorf("the hint was never erased; output after it: %q", out[i:])
			}
		})
	}
}
