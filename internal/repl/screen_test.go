package repl

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rivo/uniseg"
)

// screen applies what the REPL writes to a terminal of width×height cells,
// so a test can check what the user sees (a hint erased, a prompt whole)
// rather than the bytes. It knows what the editor and the renderer emit:
// text, \r, \n (scrolling at the bottom), cursor up/down/forward, erase in
// line and display; styles and modes are ignored.
type screen struct {
	w, h     int
	rows     [][]string // cells; "" is blank
	row, col int
}

func newScreen(w, h int) *screen {
	s := &screen{w: w, h: h}
	for range h {
		s.rows = append(s.rows, make([]string, w))
	}
	return s
}

func (s *screen) lineFeed() {
	if s.row == s.h-1 {
		s.rows = append(s.rows[1:], make([]string, s.w))
		return
	}
	s.row++
}

func (s *screen) write(out string) {
	g := uniseg.NewGraphemes(out)
	for g.Next() {
		c := g.Str()
		switch {
		case c == "\r":
			s.col = 0
		case c == "\n" || c == "\r\n":
			if c == "\r\n" {
				s.col = 0
			}
			s.lineFeed()
		case c == "\x1b":
			rest := out[func() int { _, to := g.Positions(); return to }():]
			n := s.escape(rest)
			for i := 0; i < n && g.Next(); {
				i += len(g.Str())
			}
		case c == "\x07" || c == "\b":
		default:
			if s.col >= s.w {
				s.col = 0
				s.lineFeed()
			}
			s.rows[s.row][s.col] = c
			s.col += max(1, g.Width())
		}
	}
}

// escape applies the sequence after an Esc and returns its length.
func (s *screen) escape(b string) int {
	if b == "" || b[0] != '[' {
		return min(1, len(b))
	}
	i := 1
	for i < len(b) && (b[i] < 0x40 || b[i] > 0x7e) {
		i++
	}
	if i == len(b) {
		return i
	}
	params, final := b[1:i], b[i]
	n := 1
	if v, err := strconv.Atoi(params); err == nil && v > 0 {
		n = v
	}
	switch final {
	case 'A':
		s.row = max(0, s.row-n)
	case 'B':
		s.row = min(s.h-1, s.row+n)
	case 'C':
		s.col = min(s.w-1, s.col+n)
	case 'K':
		for c := s.col; c < s.w; c++ {
			s.rows[s.row][c] = ""
		}
	case 'J':
		for c := s.col; c < s.w; c++ {
			s.rows[s.row][c] = ""
		}
		for r := s.row + 1; r < s.h; r++ {
			s.rows[r] = make([]string, s.w)
		}
	}
	return i + 1
}

// lines are the rows as text, trailing blanks dropped.
func (s *screen) lines() []string {
	out := make([]string, len(s.rows))
	for i, r := range s.rows {
		var b strings.Builder
		for _, c := range r {
			if c == "" {
				c = " "
			}
			b.WriteString(c)
		}
		out[i] = strings.TrimRight(b.String(), " ")
	}
	return out
}

// cursorLine is the row the cursor is on.
func (s *screen) cursorLine() string { return s.lines()[s.row] }

// screenOf is what the PTY's output shows on an 80×24 terminal.
func (p *ptyREPL) screen() *screen {
	s := newScreen(80, 24)
	s.write(p.out.String())
	return s
}

// waitScreen waits until ok holds for the screen.
func (p *ptyREPL) waitScreen(what string, ok func(s *screen) bool) {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ok(p.screen()) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, strings.Join(p.screen().lines(), "\n"))
}

func TestScreen(t *testing.T) {
	s := newScreen(10, 3)
	s.write("ab\r\ncd\x1b[1A\r\x1b[1CX\x1b[K\r\n\r\nlast\r\nscrolled")
	if got := strings.Join(s.lines(), "|"); got != "cd|last|scrolled" {
		t.Errorf("screen %q", got)
	}
	s.write("\x1b[2A\r\x1b[J")
	if got := strings.Join(s.lines(), "|"); got != "||" {
		t.Errorf("after erase: %q", got)
	}
}
