package repl

import (
	"fmt"
	"io"
	"strings"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"
)

// lineEditor is the prompt being typed: a bubbles textarea holds the text
// and does the editing (multi-line, soft wrap, word moves, kill keys), and
// lineEditor draws its view at the bottom of the output itself. No Bubble
// Tea program runs: the renderer owns the terminal during turns and one key
// pump feeds both the editor and the turn watcher.
type lineEditor struct {
	ta     textarea.Model
	out    io.Writer
	prompt string // the prompt asked for
	shown  string // the prompt drawn: prompt, or promptText when it is too wide
	width  int
	height int

	drawn []string // the rows on screen, the editor's first row first
	row   int      // the row of drawn the terminal's cursor is on
	col   int      // the column the terminal's cursor is on
	top   int      // the first of the prompt's rows shown (a tall prompt scrolls)

	// The textarea's View renders every row of the prompt; a key changes
	// one line, so the rows are drawn line by line instead: scratch (set
	// up as ta is, without the prompt) renders a line once, and lineRows
	// keeps its rows by its text until the width changes.
	scratch   textarea.Model
	lineRows  map[string][]string
	rowsWidth [2]int // the text width and prompt width lineRows was made for
}

// Below the editor are at most this many rows of hints.
const maxHintRows = 3

// maxRows bounds a prompt's rows (the textarea's own line limit).
const maxRows = 10000

func newLineEditor(out io.Writer, prompt string, width, height int) *lineEditor {
	e := &lineEditor{ta: newTextarea(), scratch: newTextarea(), out: out}
	e.setSize(width, height)
	e.setPrompt(prompt)
	return e
}

// newTextarea is a textarea as the editor uses it: no styles, no line
// numbers, as tall as its text, the terminal's cursor rather than a drawn one.
func newTextarea() textarea.Model {
	ta := textarea.New()
	plain := lipgloss.NewStyle()
	st := textarea.StyleState{Base: plain, Text: plain, LineNumber: plain, CursorLineNumber: plain,
		CursorLine: plain, EndOfBuffer: plain, Placeholder: plain, Prompt: plain, Selection: plain}
	ta.SetStyles(textarea.Styles{Focused: st, Blurred: st})
	ta.ShowLineNumbers = false
	ta.DynamicHeight = true
	ta.MaxWidth = 0
	// The textarea renders every row (its wrap cache holds MaxHeight
	// lines, so a small one would rewrap a long prompt on every key);
	// lineEditor shows the rows that fit around the cursor.
	ta.MaxHeight = maxRows
	ta.MaxContentHeight = maxRows
	ta.CharLimit = 0
	ta.SetVirtualCursor(false)
	km := textarea.DefaultKeyMap()
	// Enter sends (the REPL acts on it before the textarea sees it); these
	// insert a line break.
	km.InsertNewline.SetKeys("shift+enter", "alt+enter", "ctrl+j")
	// Ctrl+D on an empty prompt exits; otherwise it deletes forward.
	ta.KeyMap = km
	ta.Focus()
	return ta
}

// minTypingCols is the room a prompt leaves to type in at least.
const minTypingCols = 12

// setPrompt shows p before the first line; the lines after it are
// indented as far.
func (e *lineEditor) setPrompt(p string) {
	e.prompt, e.shown = p, p
	if uniseg.StringWidth(p) > e.width-1-minTypingCols {
		// Too wide to leave room to type (a mode's name, a question, on a
		// narrow terminal): the bare prompt; a wider terminal shows p again.
		e.shown = promptText
	}
	shown := e.shown
	e.ta.SetPromptFunc(uniseg.StringWidth(shown), func(info textarea.PromptInfo) string {
		if info.LineNumber == 0 {
			return shown
		}
		return ""
	})
	e.ta.SetWidth(e.width - 1) // the last column stays free: no pending wrap
	e.syncScratch()
}

// syncScratch gives scratch ta's widths; rows made for other widths are
// dropped.
func (e *lineEditor) syncScratch() {
	pw := uniseg.StringWidth(e.shown)
	e.scratch.SetPromptFunc(pw, func(textarea.PromptInfo) string { return "" })
	e.scratch.SetWidth(e.width - 1)
	if w := [2]int{e.ta.Width(), pw}; w != e.rowsWidth || e.lineRows == nil {
		e.rowsWidth, e.lineRows = w, map[string][]string{}
	}
}

// setSize is the terminal's size (0: unknown, 80×24 assumed).
func (e *lineEditor) setSize(width, height int) {
	if width <= 0 {
		width = 80
	}
	if height <= 0 {
		height = 24
	}
	e.width, e.height = width, height
	e.ta.SetWidth(width - 1)
	e.syncScratch()
}

// update hands the textarea one message (a key or a paste).
func (e *lineEditor) update(msg tea.Msg) {
	e.ta, _ = e.ta.Update(msg)
}

// visibleRows is how many of the prompt's rows are shown: the hint rows
// and one row of output above stay on screen.
func (e *lineEditor) visibleRows() int {
	return max(1, e.height-maxHintRows-1)
}

// rows is what the editor shows: the textarea's rows that fit, scrolled
// to keep the cursor in view, then the hints; cursorY is the cursor's row
// among them (-1: none).
func (e *lineEditor) rows(hints []string, all bool) (rows []string, cursorY, cursorX int) {
	rows = e.viewRows()
	cursorY, cursorX = len(rows)-1, 0
	if c := e.ta.Cursor(); c != nil {
		cursorY, cursorX = min(c.Y, len(rows)-1), c.X
	}
	if n := e.visibleRows(); !all && len(rows) > n {
		e.top = min(max(e.top, cursorY-n+1), cursorY, len(rows)-n)
		rows, cursorY = rows[e.top:e.top+n], cursorY-e.top
	} else {
		e.top = 0
	}
	return append(rows, hints...), cursorY, cursorX
}

// viewRows are the textarea's rows as its View shows them, without the
// padding it adds: each line's rows, the prompt before the first.
func (e *lineEditor) viewRows() []string {
	lines := strings.Split(e.ta.Value(), "\n")
	if len(e.lineRows) > 2*len(lines)+64 { // rows of lines edited away
		e.lineRows = map[string][]string{}
	}
	var rows []string
	for _, l := range lines {
		rows = append(rows, e.rowsOf(l)...)
	}
	pad := strings.Repeat(" ", e.rowsWidth[1])
	first := e.shown + strings.TrimPrefix(rows[0], pad)
	if len(first) < len(e.shown) {
		first = e.shown
	}
	rows[0] = first
	return rows
}

// rowsOf is how the textarea shows one line: its rows, each after the
// prompt's width of blanks, the padding to the width not drawn.
func (e *lineEditor) rowsOf(line string) []string {
	if rows, ok := e.lineRows[line]; ok {
		return rows
	}
	e.scratch.SetValue(line)
	rows := strings.Split(strings.TrimSuffix(e.scratch.View(), "\n"), "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	e.lineRows[line] = rows
	return rows
}

// draw brings the screen up to date: only rows that changed are written,
// each from the first cell that differs, then the cursor goes where the
// textarea's cursor is.
func (e *lineEditor) draw(hints []string) {
	rows, y, x := e.rows(hints, false)
	e.paint(rows, y, x)
}

// paint changes the screen from drawn to rows and puts the cursor at row
// y, column x.
func (e *lineEditor) paint(rows []string, y, x int) {
	var b strings.Builder
	if e.row > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", e.row)
	}
	b.WriteByte('\r')
	for i, row := range rows {
		if i > 0 {
			b.WriteString("\r\n") // scrolls when the area grows at the bottom
		}
		old := ""
		if i < len(e.drawn) {
			old = e.drawn[i]
			if old == row {
				continue
			}
		}
		col, off := commonCells(old, row)
		if col > 0 {
			fmt.Fprintf(&b, "\x1b[%dC", col)
		}
		b.WriteString(row[off:])
		b.WriteString("\x1b[K")
	}
	last := len(rows) - 1
	if len(e.drawn) > len(rows) { // the area shrank: erase the rows below
		b.WriteString("\x1b[1B\r\x1b[J\x1b[1A")
	}
	if up := last - y; up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteByte('\r')
	if x > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", x)
	}
	e.drawn, e.row, e.col = rows, y, x
	_, _ = io.WriteString(e.out, b.String())
}

// commonCells measures the start old and row share, in whole grapheme
// clusters: col cells wide, off bytes of row. Rows with escape sequences
// (dim hints) are rewritten whole.
func commonCells(old, row string) (col, off int) {
	if old == "" || strings.IndexByte(old, 0x1b) >= 0 || strings.IndexByte(row, 0x1b) >= 0 {
		return 0, 0
	}
	a, b := uniseg.NewGraphemes(old), uniseg.NewGraphemes(row)
	for a.Next() && b.Next() {
		if a.Str() != b.Str() {
			break
		}
		col += b.Width()
		_, off = b.Positions()
	}
	return col, off
}

// finish leaves the prompt on screen as it was sent (without hints) and
// puts the cursor on the row below it; the next draw starts afresh there.
func (e *lineEditor) finish() {
	rows, y, x := e.rows(nil, true)
	if len(rows) > e.visibleRows() { // a tall prompt: all of it, as sent
		e.erase()
	}
	e.paint(rows, y, x)
	var b strings.Builder
	if down := len(e.drawn) - 1 - e.row; down > 0 {
		fmt.Fprintf(&b, "\x1b[%dB", down)
	}
	b.WriteString("\r\n")
	_, _ = io.WriteString(e.out, b.String())
	e.drawn, e.row, e.col = nil, 0, 0
}

// erase removes the editor's rows from the screen; they are drawn again
// whole by the next draw.
func (e *lineEditor) erase() { e.eraseAt(e.width) }

// eraseAt erases the editor's rows as a terminal now cols wide shows them.
// After a resize a terminal that reflows (most do, tmux too) has wrapped
// each row longer than cols onto more rows and moved the cursor with its
// text, so the way up to the first row is counted at the new width, as the
// renderer counts its live area.
func (e *lineEditor) eraseAt(cols int) {
	if e.drawn == nil {
		return
	}
	cols = max(cols, 1)
	up := e.col / cols
	for i := 0; i < e.row && i < len(e.drawn); i++ {
		up += max(1, (ansi.StringWidth(e.drawn[i])+cols-1)/cols)
	}
	var b strings.Builder
	if up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r\x1b[J")
	_, _ = io.WriteString(e.out, b.String())
	e.drawn, e.row, e.col = nil, 0, 0
}

// lineAndColumn is the logical line the cursor is on and the cursor's
// byte offset in it.
func (e *lineEditor) lineAndColumn() (string, int) {
	lines := strings.Split(e.ta.Value(), "\n")
	row := min(e.ta.Line(), len(lines)-1)
	line := []rune(lines[row])
	col := min(e.ta.Column(), len(line))
	return string(line), len(string(line[:col]))
}

// onFirstRow and onLastRow report the cursor on the prompt's first or last
// row on screen (where Up and Down go through the history).
func (e *lineEditor) onFirstRow() bool {
	return e.ta.Line() == 0 && e.ta.LineInfo().RowOffset == 0
}

func (e *lineEditor) onLastRow() bool {
	li := e.ta.LineInfo()
	return e.ta.Line() == e.ta.LineCount()-1 && li.RowOffset == li.Height-1
}

// atEnd reports the cursor at the end of the text.
func (e *lineEditor) atEnd() bool {
	line, pos := e.lineAndColumn()
	return e.ta.Line() == e.ta.LineCount()-1 && pos == len(line)
}

// setValue replaces the text; the cursor goes to its end.
func (e *lineEditor) setValue(s string) {
	e.ta.SetValue(s)
}

// replaceBeforeCursor deletes n runes before the cursor and types s.
func (e *lineEditor) replaceBeforeCursor(n int, s string) {
	for range n {
		e.update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	e.ta.InsertString(s)
}
