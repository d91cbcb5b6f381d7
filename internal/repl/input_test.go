package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/tool"
)

// editorREPL is a REPL with the line editor and no terminal behind it:
// keys are decoded and handed to onKey directly.
func editorREPL(t testing.TB, cwd string) *REPL {
	t.Helper()
	in, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	r, err := New(Options{In: in, Out: io.Discard, TTY: true, Width: 80, Height: 24, Cwd: cwd,
		Renderer: render.New(render.Options{}), Agent: &fakeAgent{},
		SetMode: func(tool.Mode) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	r.es.histIdx = -1
	r.es.history = true
	return r
}

// typeKeys decodes raw terminal bytes and applies them; it returns what a
// key sent (done) and the error that ends input.
func typeKeys(r *REPL, raw string) (sent string, done bool, err error) {
	var d decoder
	for _, k := range d.decode([]byte(raw)) {
		if s, ok, err := r.onKey(k); ok {
			return s, true, err
		}
	}
	return "", false, nil
}

// The terminal's bytes, decoded by ultraviolet, become the editor's
// actions: newline keys in every encoding, editing keys, Enter sends,
// completion, history, pastes, Ctrl+C and Ctrl+D.
func TestEditorKeys(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "solo.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"evil\x1b]52;c;aGk=\x07.txt", "evil2.txt"} { // an OSC 52 (clipboard) sequence in a file name
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	long := strings.Repeat("row\r", 11) + "end"
	tests := []struct {
		name, keys string
		value      string // what the editor holds after (when not sent)
		sent       string // what Enter sent
		err        error
		note       string // the hint under the prompt contains
	}{
		{"text", "héllo wörld", "héllo wörld", "", nil, ""},
		{"Shift+Enter (CSI u)", "a\x1b[13;2ub", "a\nb", "", nil, ""},
		{"Shift+Enter (modifyOtherKeys)", "a\x1b[27;2;13~b", "a\nb", "", nil, ""},
		{"Alt+Enter", "a\x1b\rb", "a\nb", "", nil, ""},
		{"Ctrl+J", "a\nb", "a\nb", "", nil, ""},
		{"Enter sends the whole prompt", "a\nb\rignored", "", "a\nb", nil, ""},
		{"a trailing backslash continues", "a\\\rb", "a\nb", "", nil, ""},
		{"a trailing backslash after the cursor is sent as typed", "ab\\\x1b[D\r", "", "ab\\", nil, ""},
		{"Tab completes after non-ASCII text", "voilà @so\t", "voilà @solo.go ", "", nil, ""},
		{"Backspace", "abc\x7f", "ab", "", nil, ""},
		{"Left and insert", "abc\x1b[D\x1b[DX", "aXbc", "", nil, ""},
		{"SS3 arrows", "abc\x1bODX", "abXc", "", nil, ""},
		{"Ctrl+A, Ctrl+E", "bc\x01a\x05d", "abcd", "", nil, ""},
		{"Ctrl+W deletes a word", "hello world\x17", "hello ", "", nil, ""},
		{"Ctrl+U deletes to the line start", "one\ntwo\x15", "one\n", "", nil, ""},
		{"Up moves within a multi-line prompt", "one\ntwo\x1b[AX", "oneX\ntwo", "", nil, ""},
		{"Up on the first row recalls history", "\x1b[A", "second prompt", "", nil, ""},
		{"Up twice, Down: within the entry first", "draft\x1b[A\x1b[A\x1b[B", "first\nprompt", "", nil, ""},
		{"Up twice, Down twice", "draft\x1b[A\x1b[A\x1b[B\x1b[B", "second prompt", "", nil, ""},
		{"Down past the newest is the draft", "draft\x1b[A\x1b[B", "draft", "", nil, ""},
		{"a multi-line entry comes back whole", "\x1b[A\x1b[A\x1b[A", "first\nprompt", "", nil, ""},
		{"Ctrl+R searches what was typed; Esc keeps the match to edit", "fir\x12\x1b[27u", "first\nprompt", "", nil, ""},
		{"Ctrl+R: Enter sends the match", "fir\x12\r", "", "first\nprompt", nil, ""},
		{"Ctrl+R: typing narrows", "\x12sec", "", "", nil, "Enter sends"},
		{"Ctrl+R: typing narrows, Enter sends", "\x12PRO\x12\r", "", "first\nprompt", nil, ""},
		{"Ctrl+R misses", "zzz\x12", "zzz", "", nil, "no match for 'zzz'"},
		{"Ctrl+R: Ctrl+G restores the prompt from before", "x\x12\x7fsec\x07", "x", "", nil, ""},
		{"Ctrl+R: Ctrl+C cancels the search only", "x\x12sec\x03", "x", "", nil, ""},
		{"Ctrl+R: Left accepts and moves", "\x12sec\x1b[DX", "second prompXt", "", nil, ""},
		{"Ctrl+R: Tab accepts", "\x12sec\t", "second prompt", "", nil, ""},
		{"Ctrl+R: Up after accepting goes on from the match", "\x12sec\x1b[27u\x1b[A", "first\nprompt", "", nil, ""},
		{"Ctrl+R in a paste's text", "\x12\x1b[200~FIR\x1b[201~\r", "", "first\nprompt", nil, ""},
		{"Tab completes a command", "/res\t", "/resume ", "", nil, ""},
		{"Tab completes a path after @", "see @so\t", "see @solo.go ", "", nil, ""},
		{"Tab lists candidates", "/co\t", "/co", "", nil, "/cost   /context   /compact"},
		{"file names are listed without their escapes", "cat ev\t\t", "cat evil", "", nil, "evil2.txt"},
		{"a short paste is typed", "x \x1b[200~p1\rp2\x1b[201~ y", "x p1\np2 y", "", nil, ""},
		{"a long paste is a placeholder", "\x1b[200~" + long + "\x1b[201~", "[Pasted text #1 +12 lines]", "", nil, ""},
		{"a long paste is sent whole", "\x1b[200~" + long + "\x1b[201~\r", "", strings.ReplaceAll(long, "\r", "\n"), nil, ""},
		{"a paste cut across reads", "\x1b[200~a\rb", "", "", nil, ""},
		{"Ctrl+C clears and hints", "abc\x03", "", "", nil, "press Ctrl+C again"},
		{"Ctrl+C twice exits", "abc\x03\x03", "", "", errExit, ""},
		{"Ctrl+C in the kitty protocol", "abc\x1b[99;5u", "", "", nil, "press Ctrl+C again"},
		{"Shift+Enter and Ctrl+J in the kitty protocol", "a\x1b[13;2ub\x1b[106;5uc", "a\nb\nc", "", nil, ""},
		{"Esc in the kitty protocol does nothing at the prompt", "ab\x1b[27u", "ab", "", nil, ""},
		{"Ctrl+D on an empty prompt exits", "\x04", "", "", io.EOF, ""},
		{"Ctrl+D deletes forward otherwise", "ab\x01\x04", "b", "", nil, ""},
		{"Shift+Tab cycles the mode", "\x1b[Z", "", "", nil, "mode accept-edits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := editorREPL(t, dir)
			r.hist.Add("first\nprompt")
			r.hist.Add("second prompt")
			r.now = func() time.Time { return time.Unix(100, 0) }
			sent, done, err := typeKeys(r, tt.keys)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.sent != "" && (!done || sent != tt.sent) {
				t.Fatalf("sent %q (done %v), want %q", sent, done, tt.sent)
			}
			if tt.sent == "" && tt.err == nil {
				if done {
					t.Fatalf("sent %q; want nothing sent", sent)
				}
				if got := r.ed.ta.Value(); got != tt.value {
					t.Errorf("value %q, want %q", got, tt.value)
				}
			}
			if h := strings.Join(r.hints(), " "); !strings.Contains(h, tt.note) {
				t.Errorf("hints %q, want them to contain %q", h, tt.note)
			}
			if h := strings.Join(r.hints(), "\n"); strings.ContainsAny(h, "\x1b\x07") {
				t.Errorf("hints hold escape sequences: %q", h)
			}
		})
	}
}

// The editor draws only what changed: typing one character at the end of
// the prompt writes that character, not the prompt again.
func TestEditorDrawsChanges(t *testing.T) {
	var out strings.Builder
	e := newLineEditor(&out, "› ", 40, 10)
	e.draw(nil)
	e.ta.InsertString("abc")
	e.draw(nil)
	out.Reset()
	e.ta.InsertString("d")
	e.draw(nil)
	if got := out.String(); got != "\r\x1b[5Cd\x1b[K\r\x1b[6C" {
		t.Errorf("one key wrote %q", got)
	}
	s := newScreen(40, 10)
	e2 := newLineEditor(&writerFunc{s.write}, "› ", 40, 10)
	e2.draw(nil)
	e2.ta.InsertString("one\ntwo\nthree")
	e2.draw([]string{"hint"})
	e2.ta.SetValue("x")
	e2.draw(nil)
	if got := strings.Join(s.lines()[:4], "|"); got != "› x|||" {
		t.Errorf("after shrinking the screen shows %q", got)
	}
}

type writerFunc struct{ f func(string) }

func (w *writerFunc) Write(p []byte) (int, error) { w.f(string(p)); return len(p), nil }

// Shift+Tab during a turn cycles the permission mode too: the footer and
// the permission prompt follow it at once.
func TestPTYShiftTabDuringTurn(t *testing.T) {
	release := make(chan struct{})
	fa := &fakeAgent{}
	var modes []tool.Mode
	p := startPTY(t, fa, func(o *Options) {
		o.SetMode = func(m tool.Mode) error { modes = append(modes, m); return nil }
	})
	fa.run = func(ctx context.Context, input string) (agent.Result, error) {
		<-release
		return agent.Result{}, nil
	}
	p.send("work on it\r")
	p.waitFor("Working")
	p.send("\x1b[Z")
	p.waitFor("\nmode accept-edits\r\n") // the footer
	if got := p.repl.perm.Mode(); got != tool.ModeAcceptEdits {
		t.Errorf("mode %q during the turn, want accept-edits", got)
	}
	p.send("next\x1b[Z") // typed-ahead text is kept; a second Shift+Tab: plan
	p.waitFor("\nmode plan\r\n")
	close(release)
	p.waitScreen("the next prompt showing the mode and the typed-ahead text", func(s *screen) bool {
		return s.cursorLine() == "plan › next"
	})
	if fmt.Sprint(modes) != "[accept-edits plan]" {
		t.Errorf("SetMode calls %v", modes)
	}
	// The footer changed; nothing was written to the scrollback for it.
	if out := p.out.String(); strings.Contains(out, "sandbox grants inside the project") || strings.Contains(out, "mode plan: read-only") {
		t.Errorf("Shift+Tab during the turn wrote the mode's paragraph into the transcript:\n%q", out)
	}
}

// BenchmarkKeystroke is one key typed into a prompt of 1 and of 200
// lines: decoding the bytes, the textarea's update, and drawing the
// changed rows (half the keys are text, half Backspace).
func BenchmarkKeystroke(b *testing.B) {
	for _, n := range []int{1, 200} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			r := editorREPL(b, b.TempDir())
			var lines []string
			for i := range n {
				lines = append(lines, fmt.Sprintf("line %d of a long prompt with some words in it", i))
			}
			r.ed.ta.SetValue(strings.Join(lines, "\n"))
			r.redraw()
			b.ResetTimer()
			for i := range b.N {
				key := "x"
				if i%2 == 1 {
					key = "\x7f"
				}
				if _, done, _ := typeKeys(r, key); done {
					b.Fatal("a key sent the prompt")
				}
				r.redraw()
			}
		})
	}
}
