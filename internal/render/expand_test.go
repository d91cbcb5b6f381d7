package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// inOrder reports whether every one of want appears in s, each after the last.
func inOrder(s string, want []string) (missing string, ok bool) {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return w, false
		}
		s = s[i+len(w):]
	}
	return "", true
}

func numbered(from, to int, indent string) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, indent+fmt.Sprint(i)+"\n")
	}
	return out
}

// Expand writes the last turn's folded parts whole, once; a second call,
// and a turn that folded nothing, write nothing.
func TestExpand(t *testing.T) {
	huge := strings.Repeat("x", 99) + "\n"
	huge = "first line\n" + strings.Repeat(huge, 1000) + "last line\n" // about 100 KB
	tests := []struct {
		name  string
		turns func(r *Renderer)
		want  ExpandResult
		// shown are the texts the expansion holds, in order; absent are
		// texts it must not hold.
		shown, absent []string
	}{
		{name: "no turn yet", turns: func(*Renderer) {}, want: ExpandNoTurn},
		{name: "nothing folded", want: ExpandNothingFolded, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 3")
			r.ToolEnd("1", true, seqLines(1, 3), ToolMeta{})
			r.EndTurn()
		}},
		{name: "a long output", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 500")
			r.ToolEnd("1", true, seqLines(1, 500), ToolMeta{})
			r.EndTurn()
		}, shown: append([]string{"folded in the last turn: 1 part", "✓ seq 1 500"}, numbered(1, 500, "    ")...),
			absent: []string{"more lines"}},
		{name: "a failed output", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "make")
			r.ToolEnd("1", false, seqLines(1, 40), ToolMeta{})
			r.EndTurn()
		}, shown: append([]string{"✗ make"}, numbered(1, 40, "    ")...)},
		{name: "thinking and an output, in order", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.Thinking("alpha\nbeta\ngamma\ndelta\nepsilon\n")
			r.ToolStart("1", "seq 1 20")
			r.ToolEnd("1", true, seqLines(1, 20), ToolMeta{})
			r.EndTurn()
		}, shown: append([]string{"folded in the last turn: 2 parts", "✻ Thought for", "alpha", "beta", "gamma", "delta", "epsilon", "✓ seq 1 20"}, numbered(1, 20, "    ")...)},
		{name: "only the last turn", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 30")
			r.ToolEnd("1", true, seqLines(1, 30), ToolMeta{})
			r.EndTurn()
			r.StartTurn()
			r.ToolStart("2", "seq 100 130")
			r.ToolEnd("2", true, seqLines(100, 130), ToolMeta{})
			r.EndTurn()
		}, shown: append([]string{"1 part", "✓ seq 100 130"}, numbered(100, 130, "    ")...), absent: []string{"seq 1 30"}},
		{name: "after /clear", want: ExpandNoTurn, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 30")
			r.ToolEnd("1", true, seqLines(1, 30), ToolMeta{})
			r.EndTurn()
			r.ClearScreen()
		}},
		{name: "a later turn that folded nothing", want: ExpandNothingFolded, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 30")
			r.ToolEnd("1", true, seqLines(1, 30), ToolMeta{})
			r.EndTurn()
			r.StartTurn()
			r.TextDelta("short answer\n")
			r.EndTurn()
		}},
		{name: "a huge output: its end and where the whole is", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "cat big.log")
			r.ToolEnd("1", true, huge, ToolMeta{FullOutputPath: "/tmp/bash-output-1.txt"})
			r.EndTurn()
		}, shown: []string{"✓ cat big.log", "… the first 66 KB of 98 KB are not shown; the whole output is in", "/tmp/bash-output-1.txt", "last line"},
			absent: []string{"first line"}},
		{name: "a long diff", want: ExpandShown, turns: func(r *Renderer) {
			var old, nw strings.Builder
			for i := 1; i <= 40; i++ {
				fmt.Fprintf(&old, "old %d\n", i)
				fmt.Fprintf(&nw, "new %d\n", i)
			}
			r.StartTurn()
			r.ToolStart("1", "write f.txt")
			r.ToolEnd("1", true, "", ToolMeta{Change: &FileChange{Path: "f.txt", Old: old.String(), New: nw.String()}})
			r.EndTurn()
		}, shown: []string{"✓ write f.txt", "40 lines added, 40 removed", "- old 1\n", "- old 40\n", "+ new 1\n", "+ new 40\n"},
			absent: []string{"more diff lines"}},
		{name: "a cut output names its file", want: ExpandShown, turns: func(r *Renderer) {
			r.StartTurn()
			r.ToolStart("1", "seq 1 10")
			r.ToolEnd("1", true, seqLines(1, 10), ToolMeta{FullOutputPath: "/tmp/bash-output-2.txt"})
			r.EndTurn()
		}, shown: []string{"✓ seq 1 10", "the whole of it is in", "/tmp/bash-output-2.txt", "\n    10\n"}},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.name, func(t *testing.T) {
				var out bytes.Buffer
				r, opts := newFor(m, &out)
				tt.turns(r)
				before := view(t, m, &out, opts)
				if got := r.Expand(); got != tt.want {
					t.Fatalf("Expand() = %v, want %v", got, tt.want)
				}
				after := view(t, m, &out, opts)
				added := after[len(before):]
				if !strings.HasPrefix(after, before) {
					t.Fatalf("the expansion changed what was on screen:\n%s", after)
				}
				if tt.want != ExpandShown && added != "" {
					t.Errorf("Expand() = %v wrote %q", tt.want, added)
				}
				if w, ok := inOrder(added, tt.shown); !ok {
					t.Errorf("expansion lacks %q (in order):\n%s", w, added)
				}
				for _, a := range tt.absent {
					if strings.Contains(added, a) {
						t.Errorf("expansion holds %q:\n%s", a, added)
					}
				}
				if tt.want == ExpandShown {
					if got := r.Expand(); got != ExpandShownBefore {
						t.Errorf("second Expand() = %v, want ExpandShownBefore", got)
					}
					if again := view(t, m, &out, opts); again != after {
						t.Errorf("second Expand() wrote %q", again[len(after):])
					}
				}
			})
		}
	}
}

// What a turn keeps for Expand is bounded, however many long outputs it
// has; the oldest parts go first and the expansion says so.
func TestExpandKeepsABoundedTurn(t *testing.T) {
	var out bytes.Buffer
	r := New(Options{Out: &out})
	r.StartTurn()
	block := strings.Repeat(strings.Repeat("y", 79)+"\n", 400) // 32 KB
	for i := range 40 {
		id := fmt.Sprint(i)
		r.ToolStart(id, "cat part"+id)
		r.ToolEnd(id, true, block, ToolMeta{})
	}
	r.EndTurn()
	if r.folds.bytes > expandBudget {
		t.Errorf("kept %d bytes, over the %d budget", r.folds.bytes, expandBudget)
	}
	out.Reset()
	if got := r.Expand(); got != ExpandShown {
		t.Fatalf("Expand() = %v", got)
	}
	s := out.String()
	if !strings.Contains(s, "earlier parts not kept") || !strings.Contains(s, "cat part39") || strings.Contains(s, "cat part0\n") {
		t.Errorf("expansion of a long turn:\n%.600s", s)
	}
}

// Verbose output writes thinking whole as it streams (each finished line
// before the block ends) and long tool output whole; nothing is left folded.
func TestVerbose(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			r.StartTurn()
			r.SetVerbose(true)
			r.Thinking("first thought\nsecond ")
			if v := view(t, m, &out, opts); !strings.Contains(v, "✻ Thinking…\n  first thought") {
				t.Errorf("a finished line of thinking is not written as it comes:\n%s", v)
			}
			r.Thinking("thought\nthird\nfourth\nfifth\n")
			r.ToolStart("1", "seq 1 60")
			r.ToolEnd("1", true, seqLines(1, 60), ToolMeta{})
			r.EndTurn()
			v := view(t, m, &out, opts)
			want := append([]string{"✻ Thinking…", "first thought", "second thought", "third", "fourth", "fifth", "✻ Thought for", "✓ seq 1 60"}, numbered(1, 60, "    ")...)
			if w, ok := inOrder(v, want); !ok {
				t.Errorf("verbose output lacks %q:\n%s", w, v)
			}
			if strings.Count(v, "second thought") != 1 || strings.Contains(v, "more line") {
				t.Errorf("verbose output repeats or folds:\n%s", v)
			}
			if got := r.Expand(); got != ExpandNothingFolded {
				t.Errorf("Expand() after a verbose turn = %v", got)
			}

			// Off in the middle of a block: the rest is folded (and kept).
			out.Reset()
			r.StartTurn()
			r.Thinking("one\n")
			r.SetVerbose(false)
			r.Thinking("two\nthree\nfour\nfive\n")
			r.EndTurn()
			if v := out.String(); !strings.Contains(v, "✻ Thought for 0s · 4 lines") {
				t.Errorf("thinking after verbose was turned off is not folded:\n%s", v)
			}
			if got := r.Expand(); got != ExpandShown {
				t.Errorf("Expand() = %v, want the folded thinking", got)
			}
		})
	}
}

// The fold lines name the key that expands them when there is one.
func TestExpandHint(t *testing.T) {
	for _, key := range []string{"", "ctrl+o"} {
		var out bytes.Buffer
		r := New(Options{Out: &out, ExpandKey: key})
		r.ToolStart("1", "seq 1 9")
		r.ToolEnd("1", true, seqLines(1, 9), ToolMeta{})
		has := strings.Contains(out.String(), "… 5 more lines · ctrl+o to expand")
		if has != (key != "") {
			t.Errorf("ExpandKey %q:\n%s", key, out.String())
		}
	}
}

func TestLastBytes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"one\ntwo\nthree", 9, "three"}, // from the first whole line
		{"abcdef", 3, "def"},
		{"aé€", 4, "€"}, // never inside a rune
	}
	for _, tt := range tests {
		if got := lastBytes(tt.s, tt.n); got != tt.want {
			t.Errorf("lastBytes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
