package render

import (
	"fmt"
	"strconv"
	"strings"
)

// vt is a minimal terminal emulator for tests: it applies the output the
// renderer writes (text with line wrap, \r, \n, cursor up, erase in display
// and line, SGR) to a scrollback of lines, and rejects any other control
// sequence so a test notices when the renderer starts emitting one.
type vt struct {
	width, height int
	lines         [][]rune
	soft          map[int]bool // rows that continue the row above (wrapped)
	row, col      int
	wrapPending   bool
	maxRow        int
}

func newVT(width, height int) *vt {
	return &vt{width: width, height: height, lines: [][]rune{nil}, soft: map[int]bool{}}
}

func (v *vt) ensure(row int) {
	for len(v.lines) <= row {
		v.lines = append(v.lines, nil)
	}
	if row > v.maxRow {
		v.maxRow = row
	}
}

func (v *vt) put(r rune) {
	w := runeWidth(r)
	if !v.wrapPending && w == 2 && v.col+2 > v.width {
		// A wide rune that does not fit on the row moves to the next.
		v.wrapPending = true
	}
	if v.wrapPending {
		v.row++
		v.col = 0
		v.wrapPending = false
		v.ensure(v.row)
		v.soft[v.row] = true
	}
	v.ensure(v.row)
	line := v.lines[v.row]
	for len(line) < v.col {
		line = append(line, ' ')
	}
	if v.col < len(line) {
		line[v.col] = r
	} else {
		line = append(line, r)
	}
	// A wide rune fills two cells; the second holds a zero marker.
	if w == 2 {
		if v.col+1 < len(line) {
			line[v.col+1] = 0
		} else {
			line = append(line, 0)
		}
	}
	v.lines[v.row] = line
	v.col += w
	if v.col >= v.width {
		v.col = v.width - 1
		v.wrapPending = true
	}
}

// screenTop is the first row the cursor can reach: the top of the screen.
func (v *vt) screenTop() int {
	top := v.maxRow - v.height + 1
	if top < 0 {
		return 0
	}
	return top
}

// Write applies p. It returns an error for a control sequence it does not know.
func (v *vt) Write(p []byte) (int, error) {
	s := string(p)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\r':
			v.col, v.wrapPending = 0, false
			i++
		case c == '\n':
			v.row++
			v.wrapPending = false
			v.ensure(v.row)
			i++
		case c == 0x1b:
			if i+1 >= len(s) || s[i+1] != '[' {
				return i, fmt.Errorf("unsupported escape at %d: %q", i, s[i:min(len(s), i+8)])
			}
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			if j >= len(s) {
				return i, fmt.Errorf("unterminated CSI at %d", i)
			}
			params, final := s[i+2:j], s[j]
			if err := v.csi(params, final); err != nil {
				return i, err
			}
			i = j + 1
		case c < 0x20:
			return i, fmt.Errorf("unexpected control byte %#x at %d", c, i)
		default:
			r, size := rune(c), 1
			if c >= 0x80 {
				rs := []rune(s[i:min(len(s), i+4)])
				r = rs[0]
				size = len(string(r))
			}
			v.put(r)
			i += size
		}
	}
	return len(p), nil
}

func (v *vt) csi(params string, final byte) error {
	n := 1
	if params != "" && final != 'm' && final != 'J' && final != 'K' {
		k, err := strconv.Atoi(params)
		if err != nil {
			return fmt.Errorf("bad CSI params %q%c", params, final)
		}
		n = k
	}
	switch final {
	case 'm':
		return nil
	case 'C':
		v.col = min(v.col+n, v.width-1)
		v.wrapPending = false
	case 'H':
		if params != "" {
			return fmt.Errorf("unsupported cursor position %q", params)
		}
		v.row, v.col, v.wrapPending = v.screenTop(), 0, false
	case 'A':
		v.row -= n
		if top := v.screenTop(); v.row < top {
			return fmt.Errorf("cursor up %d leaves the screen (row %d, top %d)", n, v.row, top)
		}
		v.wrapPending = false
	case 'J':
		if params == "2" || params == "3" {
			// Clear the screen (2) and the scrollback (3): the test
			// terminal keeps them as one list of lines.
			v.lines, v.soft, v.row, v.col, v.maxRow = [][]rune{nil}, map[int]bool{}, 0, 0, 0
			return nil
		}
		if params != "" && params != "0" {
			return fmt.Errorf("unsupported erase in display %q", params)
		}
		v.ensure(v.row)
		if v.col < len(v.lines[v.row]) {
			v.lines[v.row] = v.lines[v.row][:v.col]
		}
		v.lines = v.lines[:v.row+1]
		for r := range v.soft {
			if r > v.row {
				delete(v.soft, r)
			}
		}
		v.maxRow = v.row
	case 'K':
		v.ensure(v.row)
		switch params {
		case "", "0":
			if v.col < len(v.lines[v.row]) {
				v.lines[v.row] = v.lines[v.row][:v.col]
			}
		case "2":
			v.lines[v.row] = nil
		default:
			return fmt.Errorf("unsupported erase in line %q", params)
		}
	default:
		return fmt.Errorf("unsupported CSI %q%c", params, final)
	}
	return nil
}

// resize changes the width as a reflowing terminal does: rows that were
// wrapped are joined into their lines and wrapped again at the new width.
// The cursor must be at column 0 of the row after the last (where the
// renderer leaves it).
func (v *vt) resize(width, height int) {
	var logical [][]rune
	for i, l := range v.lines {
		if v.soft[i] && len(logical) > 0 {
			logical[len(logical)-1] = append(logical[len(logical)-1], l...)
			continue
		}
		logical = append(logical, append([]rune(nil), l...))
	}
	v.width, v.height = width, height
	v.lines, v.soft = nil, map[int]bool{}
	for _, l := range logical {
		first := true
		for {
			cells, n := 0, 0
			for n < len(l) && cells < width {
				cells++
				n++
			}
			if !first {
				v.soft[len(v.lines)] = true
			}
			v.lines = append(v.lines, l[:n])
			l = l[n:]
			first = false
			if len(l) == 0 {
				break
			}
		}
	}
	v.row = len(v.lines) - 1
	v.col, v.wrapPending = 0, false
	v.maxRow = v.row
}

// String is the scrollback, trailing spaces and the empty last line removed.
func (v *vt) String() string {
	var b strings.Builder
	for _, l := range v.lines {
		var lb strings.Builder
		for _, r := range l {
			if r != 0 {
				lb.WriteRune(r)
			}
		}
		b.WriteString(strings.TrimRight(lb.String(), " "))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}
