// Package render draws the agent's activity in a terminal: streamed model
// text (Markdown on a TTY), thinking, tool lines with folded output or a diff
// of the file they changed, TodoWrite summaries, parallel sub-agent tasks,
// retry notices, a working indicator and a status footer.
//
// On a TTY, everything still running lives in a live area at the bottom of
// the output that is redrawn in place: the unfinished line of text, then the
// status region (running tools with a tail of their output, one row per
// task, the working indicator and the footer). Everything finished scrolls
// above it as ordinary lines, so the live area never enters the scrollback.
// Not on a TTY, every line is written once, in order, with no cursor
// movement, no animation and no line clearing at all.
//
// A Renderer is safe for concurrent use: parallel sub-agents report from
// several goroutines.
package render

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/todo"
)

// Defaults for zero Options fields.
const (
	DefaultWidth          = 80
	DefaultHeight         = 24
	DefaultMaxRecentTools = 5
	DefaultSummaryLimit   = 60
	DefaultOutputLines    = 4
	DefaultDiffLines      = 20
	DefaultTailLines      = 3
)

// Options configure a Renderer.
type Options struct {
	Out io.Writer
	// TTY enables the live area (in-place updates, animation) and Markdown
	// styling.
	TTY bool
	// Color enables SGR colours. Callers pass false when NO_COLOR is set or
	// Out is not a terminal.
	Color bool
	// Width and Height of the terminal in cells (0: 80×24). Height bounds
	// the live area so it never scrolls off the screen.
	Width, Height int
	// MaxRecentTools is how many of a task's tools are remembered
	// (SYNAPSE_MAX_RECENT_TOOLS; 0: 5).
	MaxRecentTools int
	// SummaryLimit is the longest task description shown, in runes (0: 60).
	SummaryLimit int
	// OutputLines is how many lines of a tool's output are shown before the
	// rest is folded (0: 4).
	OutputLines int
	// DiffLines is how many lines of an edit's diff are shown before the
	// rest is counted (0: 20).
	DiffLines int
	// ShowThinking prints the model's whole thinking (dimmed) instead of
	// its first lines.
	ShowThinking bool
	// InterruptKey is named by the working indicator ("" : "ctrl+c").
	InterruptKey string
	// ExpandKey, when set, is named on the lines that say what was folded
	// (the REPL's Ctrl+O shows it whole; see Expand).
	ExpandKey string
	// Animate, when positive on a TTY, redraws the live area at this
	// interval between StartTurn and EndTurn (spinners, timers, countdowns).
	// Zero leaves redrawing to Tick (tests).
	Animate time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// Size, when set, reads the terminal's size as it is now (an ioctl).
	// The live area is erased and drawn at that size whenever it changed,
	// so a redraw between a resize and its SIGWINCH reaching SetSize (on a
	// loaded machine, many spinner ticks) never erases by the old width
	// and leaves a copy of the area behind each time.
	Size func() (cols, rows int, ok bool)
}

// ToolKind says how a top-level tool call is shown while it runs.
type ToolKind int

const (
	// ToolCommand is an ordinary command: a running row with a timer and
	// a tail of its output.
	ToolCommand ToolKind = iota
	// ToolTask starts sub-agent tasks, which show rows of their own; the
	// call itself gets no running row.
	ToolTask
)

// ToolMeta is extra information about a finished top-level tool call.
type ToolMeta struct {
	// Todos is the todo list after a TodoWrite call (the view sets it for
	// that call's route only); when non-nil the
	// renderer shows its summary instead of the raw output (an empty,
	// non-nil list reads "todo list is empty").
	Todos []todo.Item
	// Message is a short error message (tool.Result.Message), shown on failure.
	Message string
	// Change is what an edit or write did to a file: shown as a diff (or a
	// preview of a new file) instead of the output.
	Change *FileChange
	// Markdown renders the output as Markdown (a sub-agent's answer).
	Markdown bool
	// Duration is how long the call took (shown from a second up).
	Duration time.Duration
	// TaskFailed: the call started sub-agent tasks whose rows already
	// showed them failing (with the reason); a failed task:* call then
	// adds no row of its own.
	TaskFailed bool
	// FullOutputPath is where the whole output was saved when it was cut
	// for the model (tool.Facts.FullOutputPath); Expand names it.
	FullOutputPath string
}

type status int

const (
	running status = iota
	succeeded
	failed
)

type toolState struct {
	id, cmd string
	kind    ToolKind
	start   time.Time
	tail    []string      // last lines of live output (TTY)
	partial string        // unfinished last line of live output
	paused  time.Duration // time spent waiting for the user's answer (PauseClock)
	held    [][]string    // finished tasks of this task:* call, written with its answer (ToolEnd)
	lines   int           // lines of live output so far (ToolOutput), the last unfinished one not counted
	open    bool          // the live output so far ends inside a line
}

// streamedLines is how many lines the tool's live output had (0: none seen).
func (t *toolState) streamedLines() int {
	if t.open {
		return t.lines + 1
	}
	return t.lines
}

type taskTool struct {
	cmd string
	st  status
}

type taskState struct {
	id, typ, desc string
	start         time.Time
	recent        []taskTool // the last MaxRecentTools tools
	total         int
	paused        time.Duration // time spent waiting for the user's answer (PauseClock)
}

// Renderer writes the agent's activity to Options.Out.
type Renderer struct {
	mu  sync.Mutex
	out io.Writer
	buf bytes.Buffer // one Write per call keeps concurrent output whole
	p   palette
	nl  string
	now func() time.Time

	tty                             bool
	width, height                   int
	maxRecent, summary, outputLines int
	diffLines                       int
	showThinking                    bool
	interruptKey, expandKey         string
	animate                         time.Duration
	epoch                           time.Time // spinner frames count from here
	size                            func() (cols, rows int, ok bool)
	resizing                        bool // resize is running: no nested size check

	md   markdown
	line strings.Builder // current incomplete line of model text
	// shown is the unfinished line on screen (TTY), with the cursor at its
	// end. While it is shown the status region is not (the text moving is
	// the sign of progress), until the line fills a row: see aside.
	shown string
	// shownRows and shownCol are the rows shown takes and the column after
	// its last cell (the width when the row is full), kept as it grows.
	shownRows, shownCol int
	// lineDirty: line holds bytes clean would change (escapes, tabs, C1
	// controls, invalid UTF-8). While it does not, shown is line itself and
	// a delta is shown without re-cleaning the whole line.
	lineDirty bool
	// aside: the status region is drawn below a long unfinished line (one
	// that filled a row), the cursor back at the line's end; the next
	// delta erases it first. split: that happened to the line shown, so
	// when it completes it is written again whole (its text is contiguous
	// in the byte stream once more).
	aside, split bool

	lastText     time.Time    // when text last arrived: the region returns after a pause
	tools        []*toolState // running top-level tools, in start order
	tasks        []*taskState // running tasks, in start order
	regionRows   int          // rows of the status region now on screen
	regionWidths []int        // their widths, to erase them after a resize

	live liveState

	// verbose shows thinking and tool output whole instead of folded
	// (SetVerbose); folds keeps the last turn's folded parts (Expand).
	verbose bool
	folds   foldRecord
}

// New returns a Renderer writing to opts.Out.
func New(opts Options) *Renderer {
	r := &Renderer{
		out:          opts.Out,
		tty:          opts.TTY,
		p:            palette{on: opts.Color},
		nl:           "\n",
		now:          opts.Now,
		width:        orDefault(opts.Width, DefaultWidth),
		height:       orDefault(opts.Height, DefaultHeight),
		maxRecent:    orDefault(opts.MaxRecentTools, DefaultMaxRecentTools),
		summary:      orDefault(opts.SummaryLimit, DefaultSummaryLimit),
		outputLines:  orDefault(opts.OutputLines, DefaultOutputLines),
		diffLines:    orDefault(opts.DiffLines, DefaultDiffLines),
		showThinking: opts.ShowThinking,
		interruptKey: opts.InterruptKey,
		expandKey:    opts.ExpandKey,
		animate:      opts.Animate,
		size:         opts.Size,
	}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.interruptKey == "" {
		r.interruptKey = "ctrl+c"
	}
	if r.tty {
		// The REPL may leave the terminal in raw mode, where \n does not
		// return the carriage; \r\n is right in both modes.
		r.nl = "\r\n"
	}
	r.epoch = r.now()
	r.md = newMarkdown(r.p, r.width)
	return r
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// SetSize updates the terminal size (after SIGWINCH). On a TTY the live
// area is erased as the terminal now shows it (a terminal that reflows
// wraps the old rows at the new width) and drawn again, so no stale rows
// are left behind.
func (r *Renderer) SetSize(cols, rows int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.resize(orDefault(cols, DefaultWidth), orDefault(rows, DefaultHeight))
}

// checkSize applies a change of the terminal's size that SetSize has not
// been told of yet (Options.Size), before the live area is erased.
func (r *Renderer) checkSize() {
	if r.size == nil || r.resizing || !r.tty {
		return
	}
	cols, rows, ok := r.size()
	if !ok || cols <= 0 || rows <= 0 || (cols == r.width && rows == r.height) {
		return
	}
	r.resize(cols, rows)
}

// resize is SetSize with the lock held.
func (r *Renderer) resize(cols, rows int) {
	if cols == r.width && rows == r.height {
		return
	}
	r.resizing = true
	defer func() { r.resizing = false }()
	if r.tty && (r.shown != "" || r.regionRows > 0) {
		shown := r.shown
		if shown != "" {
			up := lineRows(shown, cols) - 1
			r.buf.WriteString("\r")
			if up > 0 {
				r.buf.WriteString(cursorUp(up))
			}
		} else {
			up := 0
			for _, w := range r.regionWidths {
				up += rowsAt(w, cols)
			}
			r.buf.WriteString("\r" + cursorUp(up))
		}
		r.buf.WriteString("\x1b[J")
		r.shown, r.regionRows, r.regionWidths, r.aside = "", 0, nil, false
		r.width, r.height, r.md.width = cols, rows, cols
		if shown != "" {
			r.putPartial(shown)
		} else {
			r.drawRegion()
		}
		return
	}
	r.width, r.height, r.md.width = cols, rows, cols
}

// rowsAt is how many rows a line of w columns takes on a terminal width cols wide.
func rowsAt(w, cols int) int {
	if w <= cols {
		return 1
	}
	return (w + cols - 1) / cols
}

// layoutOver continues the layout of a line on a terminal cols wide from
// (rows, col) over s, as the terminal wraps it: a wide rune that does not
// fit on a row starts the next one.
func layoutOver(rows, col int, s string, cols int) (int, int) {
	if rows == 0 {
		rows, col = 1, 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			if col+1 > cols {
				rows, col = rows+1, 0
			}
			col++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size - 1
		w := runeWidth(c)
		if w == 0 {
			continue
		}
		if col+w > cols {
			rows, col = rows+1, 0
		}
		col += w
	}
	return rows, col
}

// lineRows is how many rows s takes on a terminal cols wide.
func lineRows(s string, cols int) int {
	rows, _ := layoutOver(0, 0, s, cols)
	return rows
}

// putPartial writes text as the unfinished line (the live area is erased).
func (r *Renderer) putPartial(text string) {
	r.shown = text
	r.shownRows, r.shownCol = layoutOver(0, 0, text, r.width)
	r.buf.WriteString(text)
}

// flush writes what the call assembled. Write errors are ignored: there is
// nowhere better to report that the terminal went away.
func (r *Renderer) flush() {
	if r.buf.Len() > 0 {
		_, _ = r.out.Write(r.buf.Bytes())
		r.buf.Reset()
	}
}

// ClearScreen clears the terminal and its scrollback (/clear) and draws the
// live area again at the top; the folded parts kept for Expand are
// dropped. Not on a TTY it clears nothing.
func (r *Renderer) ClearScreen() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.folds = foldRecord{} // a new conversation: Ctrl+O has nothing of the old one
	if !r.tty {
		return
	}
	r.line.Reset()
	r.lineDirty = false
	r.md.reset()
	r.shown, r.regionRows, r.regionWidths, r.aside, r.split = "", 0, nil, false, false
	r.buf.WriteString("\x1b[H\x1b[2J\x1b[3J")
	r.drawRegion()
}

// ---- model text ----

// TextDelta renders streamed model text. Complete lines are rendered as
// Markdown on a TTY and as plain text otherwise; on a TTY the unfinished
// line is shown as it arrives and restyled once it completes.
func (r *Renderer) TextDelta(s string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	r.live.retry = nil
	r.live.streamed += len(s)
	r.lastText = r.now()
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		r.line.WriteString(s[:i])
		r.completeLine()
		s = s[i+1:]
	}
	r.line.WriteString(s)
	if !kept(s) {
		r.lineDirty = true
	}
	if r.tty && r.line.Len() > 0 {
		r.showPartial(s)
		r.drawAside()
	}
}

// EndText ends the model's message: an unfinished line is written out, a
// table still being read is laid out, and Markdown state is reset.
func (r *Renderer) EndText() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	if r.line.Len() > 0 {
		r.completeLine()
	}
	if rows := r.md.flush(); len(rows) > 0 {
		r.writeStatic(rows...)
	}
	r.md.reset()
}

// completeLine renders the buffered line as a finished line.
func (r *Renderer) completeLine() {
	raw := r.line.String()
	r.line.Reset()
	r.lineDirty = false
	if !r.tty {
		r.writeStatic(clean(raw, false))
		return
	}
	text := clean(raw, true)
	rows := r.md.feed(text)
	if r.shown != "" && (!r.split && len(rows) == 1 && rows[0] == text && strings.HasPrefix(text, r.shown) || r.shownRows >= r.height) {
		// The line as it streamed is the line as rendered (or too tall
		// to redraw): extend it and leave it where it is.
		r.eraseAside()
		r.split = false
		if strings.HasPrefix(text, r.shown) {
			r.buf.WriteString(text[len(r.shown):])
		}
		r.buf.WriteString(r.nl)
		r.shown = ""
		r.regionAfterText()
		return
	}
	if r.shown == "" && len(rows) == 0 && !r.md.inTable() {
		return // a code fence: nothing to show, nothing to erase
	}
	r.eraseLive()
	for _, l := range rows {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
	}
	r.regionAfterText()
}

// regionAfterText brings the region back after a line of text: at once
// without animation, else at the first tick after the text pauses (so that
// it does not blink between the lines of a fast answer).
func (r *Renderer) regionAfterText() {
	if r.animate == 0 {
		r.drawRegion()
	}
}

// showPartial puts the unfinished line on screen; added is what the line
// just gained. A plain line is extended by added alone: re-cleaning and
// comparing the whole line for every delta made a long line quadratic.
func (r *Renderer) showPartial(added string) {
	if !r.lineDirty && r.shown != "" && len(r.shown)+len(added) == r.line.Len() {
		r.appendPartial(added)
		return
	}
	text := clean(r.line.String(), true)
	if r.shown != "" && strings.HasPrefix(text, r.shown) {
		r.appendPartial(text[len(r.shown):])
		return
	}
	r.eraseLive()
	if text != "" {
		r.putPartial(text)
	}
}

// appendPartial extends the unfinished line on screen by add, written
// where the cursor is: the cost is add alone, whatever the length of the
// line or of the answer.
func (r *Renderer) appendPartial(add string) {
	if add == "" {
		return
	}
	r.eraseAside()
	if r.shown == "" {
		r.eraseLive()
		r.putPartial(add)
		return
	}
	r.buf.WriteString(add)
	r.shown += add
	r.shownRows, r.shownCol = layoutOver(r.shownRows, r.shownCol, add, r.width)
}

// settle ends an unfinished line of text before other output (it continues
// on a line of its own later), so that text and tool lines keep the order
// in which they arrived. The live area must be erased already.
func (r *Renderer) settle() {
	var rows []string
	if r.line.Len() > 0 {
		text := clean(r.line.String(), r.tty)
		if r.tty {
			rows = r.md.feed(text)
		} else {
			rows = []string{text}
		}
	}
	if r.tty {
		rows = append(rows, r.md.flush()...)
	}
	for _, l := range rows {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
	}
	r.line.Reset()
	r.lineDirty = false
	r.shown, r.split = "", false
}

// ---- static output and the live area ----

// writeStatic writes finished lines above the live area.
func (r *Renderer) writeStatic(lines ...string) {
	r.eraseLive()
	r.settle()
	for _, l := range lines {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
	}
	r.drawRegion()
}

func cursorUp(n int) string { return "\x1b[" + itoa(n) + "A" }

// eraseRegion erases the status region; the cursor ends at column 0 of its
// first row.
func (r *Renderer) eraseRegion() {
	r.checkSize()
	if r.regionRows == 0 {
		return
	}
	// \r first: the cursor may have left column 0 (a terminal echoing ^C).
	r.buf.WriteString("\r" + cursorUp(r.regionRows))
	r.buf.WriteString("\x1b[J")
	r.regionRows, r.regionWidths = 0, nil
}

// eraseLive erases the unfinished line or the region, whichever is shown;
// the cursor ends at column 0 where it began.
func (r *Renderer) eraseLive() {
	r.checkSize()
	if r.shown != "" {
		r.buf.WriteString("\r")
		if up := min(r.shownRows, r.height) - 1; up > 0 {
			r.buf.WriteString(cursorUp(up))
		}
		r.buf.WriteString("\x1b[J") // the region drawn aside too
		r.shown, r.split = "", false
		r.aside, r.regionRows, r.regionWidths = false, 0, nil
		return
	}
	r.eraseRegion()
}

// drawAside draws the status region below the unfinished line once that
// line has filled a row, so that a long line streaming without a break
// does not hide the indicator; the cursor goes back to the line's end.
// Not while the cursor waits at the right margin (moving it back there
// would lose the pending wrap), nor for a line too tall to redraw.
func (r *Renderer) drawAside() {
	if !r.tty || r.shown == "" || r.aside || r.shownRows < 2 || r.shownRows >= r.height || r.shownCol >= r.width {
		return
	}
	lines := r.regionLines()
	if len(lines) == 0 {
		return
	}
	r.buf.WriteString(r.nl)
	for _, l := range lines {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
		r.regionWidths = append(r.regionWidths, width(stripSGR(l)))
	}
	r.buf.WriteString(cursorUp(len(lines) + 1))
	if r.shownCol > 0 {
		r.buf.WriteString("\x1b[" + itoa(r.shownCol) + "C")
	}
	r.regionRows, r.aside, r.split = len(lines), true, true
}

// eraseAside erases the region drawn below the unfinished line; the
// cursor is at the line's end, where the text goes on.
func (r *Renderer) eraseAside() {
	if !r.aside {
		return
	}
	r.buf.WriteString("\x1b[J")
	r.aside, r.regionRows, r.regionWidths = false, 0, nil
}

// drawRegion draws the status region (TTY only). Every line is cut to the
// terminal width so that rows can be counted exactly.
func (r *Renderer) drawRegion() {
	if !r.tty || r.shown != "" {
		return
	}
	r.checkSize() // lay the rows out for the width they will be shown at
	lines := r.regionLines()
	for _, l := range lines {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
		r.regionWidths = append(r.regionWidths, width(stripSGR(l)))
	}
	r.regionRows = len(lines)
}

func (r *Renderer) redraw() {
	if !r.tty || r.shown != "" {
		return
	}
	r.eraseRegion()
	r.drawRegion()
}

// textPause is how long text must stop before the region shows again.
const textPause = 300 * time.Millisecond

// Tick redraws the live area: spinners turn, timers and countdowns move.
// Callers without Options.Animate call it themselves.
func (r *Renderer) Tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.checkSize()
	if r.tty && r.shown == "" && (r.regionRows > 0 || r.live.busy) && r.now().Sub(r.lastText) >= textPause {
		r.redraw()
	}
	if r.tty && r.shown != "" { // a long line: its indicator moves on
		r.eraseAside()
		r.drawAside()
	}
}

// regionLines lays out the status region, compacting it when it would not
// fit on the screen: pending table rows, thinking, running tools with their
// output tail, one row per task, the indicator and the footer.
func (r *Renderer) regionLines() []string {
	maxRows := max(r.height-2, 3)
	now := r.clock()
	var tail []string // indicator and footer: always shown
	if l := r.indicatorLine(now); l != "" {
		tail = append(tail, r.fit(l))
	}
	if l := r.footerLine(); l != "" {
		tail = append(tail, r.fit(l))
	}
	if l := r.queuedLine(); l != "" {
		tail = append(tail, r.fit(l))
	}
	var head []string
	for i, l := range r.md.table {
		if i >= len(r.md.table)-3 {
			head = append(head, r.fit(r.p.dim(strings.TrimSpace(l))))
		}
	}
	if l := r.thinkingLine(); l != "" {
		head = append(head, r.fit(l))
	}
	for _, detail := range []bool{true, false} {
		lines := append([]string(nil), head...)
		for _, t := range r.tools {
			if t.kind == ToolTask {
				for _, h := range t.held { // finished, waiting for its answer
					lines = append(lines, h[0])
				}
				continue
			}
			lines = append(lines, r.fit(r.spinner(now)+" "+r.p.bold(shortCommand(t.cmd))+r.p.dim(" · "+formatElapsed(now.Sub(t.start)))))
			if detail {
				for _, l := range t.liveTail() {
					lines = append(lines, r.fit(r.p.dim("    "+l)))
				}
			}
		}
		for _, t := range r.tasks {
			lines = append(lines, r.taskRow(t, now))
		}
		room := maxRows - len(tail)
		if len(lines) <= room || !detail {
			if len(lines) > room && room > 0 {
				hidden := len(lines) - (room - 1)
				lines = append(lines[:room-1], r.p.dim("… "+plural(hidden, "more running", "more running")))
			}
			return append(lines, tail...)
		}
	}
	return tail
}

// fit cuts a (possibly coloured) line to the width of the terminal.
func (r *Renderer) fit(s string) string {
	if !r.tty {
		return s
	}
	return truncate(s, r.width-1)
}

// ---- top-level tools ----

// ToolStart shows a top-level command starting.
func (r *Renderer) ToolStart(id, command string) { r.ToolStartKind(id, command, ToolCommand) }

// ToolStartKind shows a top-level tool call starting.
func (r *Renderer) ToolStartKind(id, command string, kind ToolKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	r.live.retry = nil
	r.tools = append(r.tools, &toolState{id: id, cmd: command, kind: kind, start: r.now()})
	if r.tty {
		r.eraseLive()
		r.settle()
		r.drawRegion()
		return
	}
	if kind == ToolTask {
		return // its tasks are listed as they start
	}
	r.writeStatic("▸ " + shortCommand(command))
}

// liveTail is the running command's last lines, ending with the line it
// is still writing (a progress line redrawn with \r shows as it stands now).
func (t *toolState) liveTail() []string {
	cur := clean(t.partial, true)
	if strings.TrimSpace(cur) == "" {
		return t.tail
	}
	tail := t.tail
	if len(tail) >= DefaultTailLines {
		tail = tail[len(tail)-DefaultTailLines+1:]
	}
	return append(append([]string(nil), tail...), cur)
}

// ToolOutput adds live output of a running top-level command: on a TTY the
// last lines show under its row until it ends. Not on a TTY it is ignored
// (the folded result follows at the end).
func (r *Renderer) ToolOutput(id, chunk string) {
	if chunk == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	var t *toolState
	for _, x := range r.tools {
		if x.id == id {
			t = x
		}
	}
	if t == nil {
		return
	}
	// The whole output's lines, counted as they stream: the result the
	// model gets (and ToolEnd shows) may be cut, or spilled to a file.
	t.lines += strings.Count(chunk, "\n")
	t.open = !strings.HasSuffix(chunk, "\n")
	if !r.tty {
		return
	}
	// The unfinished line is kept raw and cleaned whole once shown or
	// ended: a \r that ends a chunk redraws the line with the next one.
	parts := strings.Split(t.partial+chunk, "\n")
	t.partial = parts[len(parts)-1]
	if len(t.partial) > 4096 {
		t.partial = t.partial[len(t.partial)-4096:]
		if i := strings.LastIndexByte(t.partial, '\r'); i >= 0 {
			t.partial = t.partial[i:] // start at a redraw, not inside an escape
		}
	}
	for _, l := range parts[:len(parts)-1] {
		l = clean(l, true)
		if strings.TrimSpace(l) == "" {
			continue
		}
		t.tail = append(t.tail, l)
	}
	if n := len(t.tail); n > DefaultTailLines {
		t.tail = append(t.tail[:0], t.tail[n-DefaultTailLines:]...)
	}
	if r.animate == 0 { // with animation the next tick shows it
		r.redraw()
	}
}

// ToolEnd shows a top-level tool call's result: a success or failure mark
// and a few lines of its output, for TodoWrite the list's summary, for an
// edit or write the diff.
func (r *Renderer) ToolEnd(id string, ok bool, output string, meta ToolMeta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	cmd := id
	kind := ToolCommand
	streamed := 0
	var held []string
	for i, t := range r.tools {
		if t.id == id {
			cmd, kind, streamed, held = t.cmd, t.kind, t.streamedLines(), t.heldLines()
			meta.Duration = max(0, meta.Duration-t.paused) // the user's thinking time is not the command's
			r.tools = append(r.tools[:i], r.tools[i+1:]...)
			break
		}
	}
	if !ok && kind == ToolTask && meta.TaskFailed {
		// ✗ Task(type: description) and its reason are on screen; a
		// second failure row naming the task:* command says it again.
		if len(held) > 0 {
			r.writeStatic(held...)
		} else {
			r.redraw()
		}
		return
	}
	head := r.mark(ok) + " " + r.p.bold(shortCommand(cmd))
	if meta.Duration >= time.Second {
		head += r.p.dim(" · " + formatDuration(meta.Duration))
	}
	if ok && kind == ToolTask {
		// The task's own row (✓ Task(type: description) · time · tools)
		// was just written; a second row naming the task:* command would
		// list the task twice. Its answer follows under a plain marker.
		head = r.p.dim("  ⎿ answer")
	}
	lines := append(held, r.fit(head))
	switch {
	case ok && meta.Todos != nil:
		lines = append(lines, r.todoLines(meta.Todos, "    ")...)
	case ok && meta.Change != nil:
		rows, folded := r.diffLinesOf(*meta.Change, r.diffLines)
		if folded {
			rows = r.unfoldDiff(cmd, *meta.Change, rows)
		}
		lines = append(lines, rows...)
	default:
		if !ok && meta.Message != "" && !strings.Contains(output, meta.Message) {
			lines = append(lines, r.fit("    "+r.p.red(clean(meta.Message, true))))
		}
		var rows []string
		var folded bool
		if ok && meta.Markdown && r.tty {
			rows, folded = r.markdownPreview(output)
		} else {
			rows, folded = r.outputLinesOf(output, ok, streamed)
		}
		if folded {
			p := foldedPart{head: cmd, ok: ok, markdown: ok && meta.Markdown, text: output, fullPath: meta.FullOutputPath}
			if kind == ToolTask && ok {
				p.head = "answer"
			}
			rows = r.unfold(p, rows)
		}
		lines = append(lines, rows...)
	}
	r.writeStatic(lines...)
}

func (r *Renderer) mark(ok bool) string {
	if ok {
		return r.p.green("✓")
	}
	return r.p.red("✗")
}

// outputLinesOf folds a tool's output: the first lines of a success, the last
// lines of a failure (where errors usually are), with a count of the rest.
// folded reports that some lines were left out.
func (r *Renderer) outputLinesOf(output string, ok bool, streamed int) (out []string, folded bool) {
	text := strings.TrimRight(clean(output, r.tty), "\n ")
	if strings.TrimSpace(text) == "" {
		return nil, false
	}
	all := strings.Split(text, "\n")
	total := max(len(all), streamed) // the output as it ran, not as cut for the model
	n := r.outputLines
	var shown []string
	var fold string
	switch {
	case total <= n+1: // folding one line would save nothing
		shown = all
	case ok:
		shown = all[:min(n, len(all))]
		fold = "… " + plural(total-n, "more line", "more lines") + r.expandHint()
	default:
		shown = all[max(0, len(all)-n):]
		fold = "… " + plural(total-n, "earlier line", "earlier lines") + r.expandHint()
	}
	if fold != "" && !ok {
		out = append(out, r.p.dim("    "+fold))
	}
	for _, l := range shown {
		out = append(out, r.fit("    "+r.p.dim(l)))
	}
	if fold != "" && ok {
		out = append(out, r.p.dim("    "+fold))
	}
	return out, fold != ""
}

// markdownPreview is a sub-agent's answer rendered as Markdown, indented
// and folded like any output; folded reports rows left out.
func (r *Renderer) markdownPreview(output string) (out []string, folded bool) {
	text := strings.TrimSpace(clean(output, true))
	if text == "" {
		return nil, false
	}
	rows := r.md.document(text, r.width-4)
	n := r.outputLines * 2
	for i, l := range rows {
		if i == n && len(rows) > n+1 {
			out = append(out, r.p.dim("    … "+plural(len(rows)-n, "more line", "more lines")+r.expandHint()))
			return out, true
		}
		out = append(out, r.fit("    "+l))
	}
	return out, false
}

// ---- todos ----

// Todos shows the todo list in the scrolling output.
func (r *Renderer) Todos(items []todo.Item) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.writeStatic(r.todoLines(items, "")...)
}

// todoLines is a list's summary line and one checkbox line per item.
func (r *Renderer) todoLines(items []todo.Item, indent string) []string {
	var done, doing, pending int
	for _, it := range items {
		switch it.Status {
		case todo.Completed:
			done++
		case todo.InProgress:
			doing++
		default:
			pending++
		}
	}
	if len(items) == 0 {
		return []string{indent + "todo list is empty"}
	}
	lines := []string{indent + plural(len(items), "todo", "todos") + ": " +
		itoa(done) + " done, " + itoa(doing) + " in progress, " + itoa(pending) + " pending"}
	for _, it := range items {
		text := clean(it.Content, true)
		var box string
		switch it.Status {
		case todo.Completed:
			box, text = r.p.green("[x]"), r.p.dim(text)
		case todo.InProgress:
			box, text = r.p.yellow("[~]"), r.p.bold(text)
		default:
			box = "[ ]"
		}
		lines = append(lines, r.fit(indent+box+" "+text))
	}
	return lines
}

// ---- tasks (parallel sub-agents) ----

func (r *Renderer) task(id string) *taskState {
	for _, t := range r.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}

func (r *Renderer) taskTitle(t *taskState) string {
	return "Task(" + t.typ + ": " + t.desc + ")"
}

// TaskStart shows a sub-agent task starting: its own row at once.
func (r *Renderer) TaskStart(taskID, taskType, description string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	t := &taskState{id: taskID, typ: summarize(taskType, 40), desc: summarize(description, r.summary), start: r.now()}
	r.tasks = append(r.tasks, t)
	if r.tty {
		r.eraseLive()
		r.settle()
		r.drawRegion()
		return
	}
	r.writeStatic("▸ " + r.taskTitle(t))
}

// TaskToolStart records a tool started by a task's sub-agent.
func (r *Renderer) TaskToolStart(taskID, command string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	t := r.task(taskID)
	if t == nil {
		return
	}
	t.total++
	t.recent = append(t.recent, taskTool{cmd: shortCommand(command)})
	if len(t.recent) > r.maxRecent {
		t.recent = append(t.recent[:0], t.recent[len(t.recent)-r.maxRecent:]...)
	}
	r.redraw()
}

// TaskToolEnd records a task's tool finishing.
func (r *Renderer) TaskToolEnd(taskID, command string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	t := r.task(taskID)
	if t == nil {
		return
	}
	cmd := shortCommand(command)
	st := failed
	if ok {
		st = succeeded
	}
	// A sub-agent runs its tools one after another, so the match is the
	// latest running tool with this command, or else the latest running one.
	match := -1
	for i := len(t.recent) - 1; i >= 0; i-- {
		if t.recent[i].st != running {
			continue
		}
		if t.recent[i].cmd == cmd {
			match = i
			break
		}
		if match < 0 {
			match = i
		}
	}
	if match < 0 {
		return
	}
	t.recent[match].st = st
	r.redraw()
}

// TaskOutcome is how a task ended.
type TaskOutcome struct {
	OK       bool
	Duration time.Duration
	Tools    int
	Tokens   int64 // tokens the sub-agent used, 0: not shown
	Err      string
	// CallID is the task:* call that started the task: its finished row
	// waits for that call's answer (ToolEnd) and is written with it, so
	// each answer stands under its own task when tasks run in parallel.
	CallID string
}

// TaskEnd shows a task's outcome (see TaskEnded).
func (r *Renderer) TaskEnd(taskID string, ok bool, duration time.Duration, toolCount int, errText string) {
	r.TaskEnded(taskID, TaskOutcome{OK: ok, Duration: duration, Tools: toolCount, Err: errText})
}

// TaskEnded shows a task's outcome: its row with a mark, duration, tools
// and tokens, and its error, if any.
func (r *Renderer) TaskEnded(taskID string, o TaskOutcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	var t *taskState
	for i, x := range r.tasks {
		if x.id == taskID {
			t = x
			r.tasks = append(r.tasks[:i], r.tasks[i+1:]...)
			break
		}
	}
	if t == nil {
		t = &taskState{id: taskID, typ: "task", desc: taskID}
	}
	o.Duration = max(0, o.Duration-t.paused)
	if o.Tools > t.total {
		t.total = o.Tools
	}
	head := r.mark(o.OK) + " " + r.p.bold(r.taskTitle(t))
	info := " · " + formatDuration(o.Duration) + " · " + plural(t.total, "tool", "tools")
	if o.Tokens > 0 {
		info += " · " + formatTokens(o.Tokens) + " tokens"
	}
	lines := []string{r.fit(head + r.p.dim(info))}
	st := failed
	if o.OK {
		st = succeeded
	}
	for i := range t.recent {
		if t.recent[i].st == running { // the task ended, so did its tool
			t.recent[i].st = st
		}
	}
	lines = append(lines, r.recentLines(t)...)
	if !o.OK && strings.TrimSpace(o.Err) != "" {
		for i, l := range strings.Split(strings.TrimSpace(clean(o.Err, r.tty)), "\n") {
			if i == 3 {
				lines = append(lines, r.p.dim("    …"))
				break
			}
			lines = append(lines, r.fit("    "+r.p.red(l)))
		}
	}
	for _, c := range r.tools {
		if o.OK && o.CallID != "" && c.id == o.CallID && c.kind == ToolTask { // a failed task has no answer to wait for
			c.held = append(c.held, lines) // shown in the live area until the answer comes
			r.redraw()
			return
		}
	}
	r.writeStatic(lines...)
}

// heldLines are the finished task rows a task:* call holds, in order.
func (t *toolState) heldLines() []string {
	var out []string
	for _, h := range t.held {
		out = append(out, h...)
	}
	return out
}

// recentLines is a finished task's window of recent tools, with a count of
// the earlier ones.
func (r *Renderer) recentLines(t *taskState) []string {
	var lines []string
	if earlier := t.total - len(t.recent); earlier > 0 {
		lines = append(lines, r.p.dim("    ... ("+plural(earlier, "earlier tool", "earlier tools")+")"))
	}
	for _, tt := range t.recent {
		m := r.mark(tt.st == succeeded)
		lines = append(lines, r.fit("    "+m+" "+tt.cmd))
	}
	return lines
}

// taskRow is a running task's one row: spinner, title, tool count, current
// tool and elapsed time.
func (r *Renderer) taskRow(t *taskState, now time.Time) string {
	row := r.spinner(now) + " " + r.p.bold(r.taskTitle(t))
	info := ""
	if t.total > 0 {
		info += " · " + plural(t.total, "tool", "tools")
		if last := t.recent[len(t.recent)-1]; last.st == running {
			info += " · " + last.cmd
		}
	}
	info += " · " + formatElapsed(now.Sub(t.start))
	// The elapsed time stays visible however long the current tool is.
	full := row + r.p.dim(info)
	if width(stripSGR(full)) <= r.width-1 {
		return full
	}
	clock := " · " + formatElapsed(now.Sub(t.start))
	return truncate(row+r.p.dim(strings.TrimSuffix(info, clock)), r.width-1-width(clock)) + r.p.dim(clock)
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		s := d.Round(100 * time.Millisecond).Seconds()
		return strings.TrimSuffix(strings.TrimRight(strings.TrimRight(ftoa1(s), "0"), "."), ".") + "s"
	}
	return formatElapsed(d)
}

// formatElapsed is a running timer: whole seconds, then minutes.
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Minute {
		return itoa(int(d/time.Second)) + "s"
	}
	d = d.Round(time.Second)
	m := int(d / time.Minute)
	sec := int((d % time.Minute) / time.Second)
	out := itoa(m) + "m"
	if sec < 10 {
		out += "0"
	}
	return out + itoa(sec) + "s"
}

func ftoa1(f float64) string {
	tenths := int(f*10 + 0.5)
	return itoa(tenths/10) + "." + itoa(tenths%10)
}

// formatTokens is a token count for a status line: 950, 1.2k, 3.4M.
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return itoa(int(n))
	case n < 1_000_000:
		return trimTenths(float64(n)/1000) + "k"
	default:
		return trimTenths(float64(n)/1_000_000) + "M"
	}
}

func trimTenths(f float64) string {
	s := ftoa1(f)
	return strings.TrimSuffix(s, ".0")
}

// ---- messages ----

// Notice writes an informational line.
func (r *Renderer) Notice(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if r.tty && r.width > 20 {
		s = WordWrap(clean(s, true), r.width-1)
	}
	r.writeStatic(r.styledLines(s, r.p.dim)...)
}

// HookBlock writes the stop hooks' output after an answer: a marked title
// line, then each line of body behind a bar, set apart from the answer.
func (r *Renderer) HookBlock(title, body string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	lines := []string{r.p.cyan("◆ " + clean(title, r.tty))}
	for _, l := range strings.Split(strings.TrimRight(clean(body, r.tty), "\n"), "\n") {
		lines = append(lines, r.fit(r.p.cyan("│ ")+l))
	}
	r.writeStatic(lines...)
}

// Error writes an error line; on a TTY a long one is word-wrapped under
// its mark (errors carry a hint and often outgrow a row).
func (r *Renderer) Error(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if avail := r.width - 3; r.tty && avail >= 10 {
		s = WordWrap(clean(s, true), avail)
	}
	lines := r.styledLines(s, r.p.red)
	for i := range lines {
		if i == 0 {
			lines[i] = r.p.red("✗ ") + lines[i]
		} else {
			lines[i] = "  " + lines[i]
		}
	}
	r.writeStatic(lines...)
}

// styledLines cleans s for the terminal and styles each of its lines.
func (r *Renderer) styledLines(s string, style func(string) string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(clean(s, r.tty), "\n"), "\n") {
		lines = append(lines, style(l))
	}
	return lines
}

// Abort ends everything still running (after Ctrl+C): unfinished text is
// ended, running tools and tasks are shown as stopped with reason, and the
// status region is cleared. The Renderer stays usable.
func (r *Renderer) Abort(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	r.live.retry = nil
	r.eraseLive()
	r.settle()
	r.md.reset()
	var lines []string
	for _, t := range r.tools {
		if t.kind == ToolTask {
			lines = append(lines, t.heldLines()...)
			continue
		}
		lines = append(lines, r.fit(r.mark(false)+" "+r.p.bold(shortCommand(t.cmd))+r.p.dim(" · "+reason)))
	}
	for _, t := range r.tasks {
		for i := range t.recent {
			if t.recent[i].st == running {
				t.recent[i].st = failed
			}
		}
		lines = append(lines, r.fit(r.mark(false)+" "+r.p.bold(r.taskTitle(t))+r.p.dim(" · "+reason)))
		lines = append(lines, r.recentLines(t)...)
	}
	r.tools, r.tasks = nil, nil
	r.writeStatic(lines...)
}
