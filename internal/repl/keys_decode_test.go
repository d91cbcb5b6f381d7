package repl

import (
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

// flushed stands for the pump's empty read in a decoder test: the delay
// passed with nothing more.
const flushed = "<delay>"

// names is what inputs are, as the editor matches them: a key's name, or
// "paste:" and the text.
func names(in []keyInput) []string {
	var out []string
	for _, ki := range in {
		if ki.isPaste {
			out = append(out, "paste:"+ki.paste)
			continue
		}
		out = append(out, ki.key.String())
	}
	return out
}

// A key cut by the end of a read is finished by the next read; what may
// be a cut key and is not continued within the delay is taken as it is.
func TestDecodeSplitReads(t *testing.T) {
	type step struct {
		read string   // the bytes of one read, or flushed
		want []string // the inputs it completes
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"lone Esc, then the rest of Up within the delay", []step{{"\x1b", nil}, {"[A", []string{"up"}}}},
		{"lone Esc and nothing more: Esc after the delay", []step{{"\x1b", nil}, {flushed, []string{"esc"}}}},
		{"Esc after text waits too", []step{{"ab\x1b", []string{"a", "b"}}, {flushed, []string{"esc"}}}},
		{"Esc, the delay, then [A: Esc, [, A", []step{{"\x1b", nil}, {flushed, []string{"esc"}}, {"[A", []string{"[", "A"}}}},
		{"Alt+[ then hello", []step{{"\x1b[", nil}, {flushed, []string{"alt+["}}, {"hello", []string{"h", "e", "l", "l", "o"}}}},
		{"Alt+Shift+O then x", []step{{"\x1bO", nil}, {flushed, []string{"alt+shift+o"}}, {"x", []string{"x"}}}},
		{"Alt+é cut after the Esc and the first byte", []step{{"\x1b\xc3", nil}, {"\xa9", []string{"alt+é"}}}},
		{"a cut character waits for its rest past the delay", []step{{"a\xc3", []string{"a"}}, {flushed, nil}, {"\xa9b", []string{"é", "b"}}}},
		{"Alt and a cut character wait past the delay", []step{{"\x1b\xe4", nil}, {flushed, nil}, {"\xb8\xad", []string{"alt+中"}}}},
		{"a sequence not finished within the delay is dropped", []step{{"\x1b[1;", nil}, {flushed, nil}, {"x", []string{"x"}}}},
		{"a stray byte goes with the next key", []step{{"\xe9", nil}, {flushed, nil}, {"a", []string{"a"}}}},
		// Behaviours kept (these passed before the change too).
		{"split CSI", []step{{"\x1b[1;", nil}, {"5A", []string{"ctrl+up"}}}},
		{"split SS3", []step{{"x\x1bO", []string{"x"}}, {"D", []string{"left"}}}},
		{"split bracketed paste", []step{{"\x1b[200~ab", nil}, {"c\x1b[20", nil}, {"1~d", []string{"paste:abc", "d"}}}},
		{"split paste start", []step{{"\x1b[20", nil}, {"0~x\ry\x1b[201~", []string{"paste:x\ny"}}}},
		{"the delay inside a paste changes nothing", []step{{"\x1b[200~ab\x1b", nil}, {flushed, nil}, {"[201~", []string{"paste:ab"}}}},
		{"an Esc in a paste is text", []step{{"\x1b[200~a\x1b[Ab\x1b[201~", []string{"paste:a\x1b[Ab"}}}},
	}
	// A character of 2, 3 and 4 bytes cut at every point, and one byte a read.
	for _, r := range []string{"é", "中", "😀"} {
		s := "a" + r + "b"
		for i := 2; i < 1+len(r); i++ {
			tests = append(tests, struct {
				name  string
				steps []step
			}{fmt.Sprintf("%q cut after byte %d", s, i), []step{{s[:i], []string{"a"}}, {s[i:], []string{r, "b"}}}})
		}
		var bytewise []step
		for i := range len(s) {
			bytewise = append(bytewise, step{s[i : i+1], nil})
		}
		bytewise[0].want, bytewise[len(r)].want, bytewise[len(s)-1].want = []string{"a"}, []string{r}, []string{"b"}
		tests = append(tests, struct {
			name  string
			steps []step
		}{fmt.Sprintf("%q one byte a read", s), bytewise})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d decoder
			for i, st := range tt.steps {
				var got []keyInput
				if st.read == flushed {
					got = d.flush()
				} else {
					got = d.decode([]byte(st.read))
				}
				if g := names(got); !reflect.DeepEqual(g, st.want) {
					t.Fatalf("read %d (%q) gave %q, want %q", i, st.read, g, st.want)
				}
			}
		})
	}
}

// heldBack, the pump's guess, covers every escape sequence the decoder
// holds back (else it would wait for the next key press); a cut character
// is held without the delay.
func TestHeldBackCoversCarry(t *testing.T) {
	for _, in := range []string{"\x1b", "a\x1b", "\x1b[", "\x1b[1;5", "\x1bO", "é\x1b[", "\x1b[A\x1b"} {
		var d decoder
		d.decode([]byte(in))
		if len(d.carry) == 0 {
			t.Errorf("%q: the decoder holds nothing back", in)
			continue
		}
		if h := heldBack([]byte(in)); string(h) != string(d.carry) {
			t.Errorf("%q: heldBack %q, the decoder holds %q", in, h, d.carry)
		}
	}
	for _, in := range []string{"a", "é", "\x1b[A", "\x1bOA", "\x1ba", "中", "\x1b[200~", "a\xc3", "\x1b\xc3", "\xf0\x9f\x98"} {
		if h := heldBack([]byte(in)); h != nil {
			t.Errorf("%q: heldBack %q, want nothing", in, h)
		}
	}
}

// pumped runs the key pump over a pipe with the given delay; next returns
// the inputs of the next read that gives any (or fails after a while).
func pumped(t *testing.T, delay time.Duration) (k *keys, w *io.PipeWriter, next func() ([]string, time.Time)) {
	t.Helper()
	r, w := io.Pipe()
	k = &keys{escDelay: delay}
	k.start(r)
	t.Cleanup(func() { w.Close() })
	next = func() ([]string, time.Time) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case b, ok := <-k.ch:
				if !ok {
					t.Fatal("the input ended")
				}
				if in := k.decode(b); len(in) > 0 {
					return names(in), time.Now()
				}
			case <-timeout:
				t.Fatal("no key came")
			}
		}
	}
	return k, w, next
}

// write writes s to the pipe (a write blocks until the pump reads it, so
// each write is one read).
func write(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := io.WriteString(w, s); err != nil {
		t.Fatal(err)
	}
}

// The pump waits escDelay after a read that ends in a lone Esc: the rest
// of a sequence within it makes one key; nothing makes the Esc key, no
// sooner than the delay; a prefix not continued in time is a key of its own.
func TestPumpEscDelay(t *testing.T) {
	t.Run("the rest within the delay", func(t *testing.T) {
		_, w, next := pumped(t, 2*time.Second)
		write(t, w, "\x1b")
		write(t, w, "[A")
		if got, _ := next(); !reflect.DeepEqual(got, []string{"up"}) {
			t.Errorf("got %q, want up", got)
		}
	})
	t.Run("nothing more", func(t *testing.T) {
		const delay = 40 * time.Millisecond
		_, w, next := pumped(t, delay)
		start := time.Now()
		write(t, w, "\x1b")
		got, at := next()
		if !reflect.DeepEqual(got, []string{"esc"}) {
			t.Errorf("got %q, want esc", got)
		}
		if d := at.Sub(start); d < delay {
			t.Errorf("Esc after %v, before the delay of %v", d, delay)
		}
	})
	t.Run("Alt+[ then hello", func(t *testing.T) {
		_, w, next := pumped(t, 20*time.Millisecond)
		write(t, w, "\x1b[")
		if got, _ := next(); !reflect.DeepEqual(got, []string{"alt+["}) {
			t.Errorf("got %q, want alt+[", got)
		}
		write(t, w, "hello")
		if got, _ := next(); strings.Join(got, "") != "hello" {
			t.Errorf("got %q, want hello", got)
		}
	})
	t.Run("the pump ends with the input", func(t *testing.T) {
		k, w, _ := pumped(t, time.Hour)
		write(t, w, "x\x1b") // the end of input does not wait for the delay
		w.Close()
		var got []string
		timeout := time.After(10 * time.Second)
		for {
			select {
			case b, ok := <-k.ch:
				if ok {
					got = append(got, names(k.decode(b))...)
					continue
				}
			case <-timeout:
				t.Fatal("the key channel stayed open after the input ended")
			}
			break
		}
		if !reflect.DeepEqual(got, []string{"x", "esc"}) {
			t.Errorf("got %q, want x esc", got)
		}
	})
}

// chunks cuts s into reads of at most n bytes, as a terminal's input
// arrives through a 4 KB read buffer.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// An unbracketed paste of 3000 characters (a terminal without bracketed
// paste) is 3000 keys in 4 KB reads.
var pasteKeys = map[string]string{"ascii": strings.Repeat("a", 3000), "cjk": strings.Repeat("中", 3000)}

// Every character of a long unbracketed paste arrives, whatever the reads
// cut.
func TestDecodeLongUnbracketed(t *testing.T) {
	for name, s := range pasteKeys {
		var d decoder
		var got strings.Builder
		for _, r := range chunks(s, 4096) {
			for _, ki := range d.decode([]byte(r)) {
				got.WriteString(ki.key.Text)
			}
		}
		if got.String() != s {
			t.Errorf("%s: %d bytes decoded, want %d", name, got.Len(), len(s))
		}
	}
}

func BenchmarkDecodePaste(b *testing.B) {
	for name, s := range pasteKeys {
		reads := chunks(s, 4096)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var d decoder
				for _, r := range reads {
					d.decode([]byte(r))
				}
			}
		})
	}
}

// applyKeys hands keys to the editor as readEditor's loop does: runs of
// typed characters at once, the other keys one by one.
func applyKeys(r *REPL, pending []keyInput) (sent string, done bool) {
	for len(pending) > 0 {
		if n := r.typeRun(pending); n > 0 {
			pending = pending[n:]
			continue
		}
		if s, ok, _ := r.onKey(pending[0]); ok {
			return s, true
		}
		pending = pending[1:]
	}
	return "", false
}

// Typed characters inserted as a run leave the editor as the same keys
// one by one do.
func TestTypeRunSameAsKeys(t *testing.T) {
	for _, keys := range []string{
		"héllo wörld", "abc\x1b[DXY", "ab\x12sec", "a\x1b\rbc", "👍🏽x🇫🇷", "x\x03yz", "/co\tx", "e\u0301e", "ab\x1b[1;3Dcd", "Ab\x1bxCD", "x\x03yz\x03",
	} {
		var d decoder
		in := d.decode([]byte(keys))
		one := editorREPL(t, t.TempDir())
		for _, ki := range in {
			one.onKey(ki)
		}
		run := editorREPL(t, t.TempDir())
		applyKeys(run, in)
		if a, b := one.ed.ta.Value(), run.ed.ta.Value(); a != b {
			t.Errorf("%q: %q as a run, %q key by key", keys, b, a)
		}
		if a, b := strings.Join(one.hints(), "|"), strings.Join(run.hints(), "|"); a != b {
			t.Errorf("%q: hints %q as a run, %q key by key", keys, b, a)
		}
		if a, b := one.es.lastCtrlC.IsZero(), run.es.lastCtrlC.IsZero(); a != b {
			t.Errorf("%q: Ctrl+C armed %v as a run, %v key by key", keys, !b, !a)
		}
		if a, b := one.ed.ta.Column(), run.ed.ta.Column(); a != b {
			t.Errorf("%q: cursor at %d as a run, %d key by key", keys, b, a)
		}
	}
}

// BenchmarkTypePaste is the paste through to the editor as readEditor
// takes it: each read decoded, its keys applied, then a redraw.
func BenchmarkTypePaste(b *testing.B) {
	for name, s := range pasteKeys {
		reads := chunks(s, 4096)
		b.Run(name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				r := editorREPL(b, b.TempDir())
				r.redraw()
				b.StartTimer()
				var d decoder
				for _, rd := range reads {
					if _, done := applyKeys(r, d.decode([]byte(rd))); done {
						b.Fatal("a key sent the prompt")
					}
					r.redraw()
				}
			}
		})
	}
}

// An unbracketed paste of 3000 wide characters, typed into a real
// terminal, reaches the agent whole and soon: the pseudo-terminal's reads
// cut characters, and the editor takes the keys as runs.
func TestPTYLongUnbracketedPaste(t *testing.T) {
	fa := &fakeAgent{}
	p := startPTY(t, fa, nil)
	want := "a" + strings.Repeat("中", 3000)
	start := time.Now()
	p.send(want + "\r")
	got := fa.waitInputs(t, 1)[0]
	if got != want {
		t.Errorf("sent %d characters (%d 中), want %d", len([]rune(got)), strings.Count(got, "中"), len([]rune(want)))
	}
	t.Logf("sent after %v", time.Since(start))
}
