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
	row, col      int
	wrapPending   bool
	maxRow        int
}

func newVT(width, height int) *vt {
	return &vt{width: width, height: height, lines: [][]rune{nil}}
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
	if v.wrapPending {
		v.row++
		v.col = 0
		v.wrapPending = false
	}
	v.ensure(v.row)
	line := v.lines[v.row]
	for len(line) < v.col {
		line = append(line, ' ')
	}
	w := runeWidth(r)
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
	case 'A':
		v.row -= n
		if top := v.screenTop(); v.row < top {
			return fmt.Errorf("cursor up %d leaves the screen (row %d, top %d)", n, v.row, top)
		}
		v.wrapPending = false
	case 'J':
		if params != "" && params != "0" {
			return fmt.Errorf("unsupported erase in display %q", params)
		}
		v.ensure(v.row)
		if v.col < len(v.lines[v.row]) {
			v.lines[v.row] = v.lines[v.row][:v.col]
		}
		v.lines = v.lines[:v.row+1]
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
