// Package render draws the agent's activity in a terminal: streamed model
// text (markdown on a TTY), tool lines with folded output, TodoWrite
// summaries, and parallel sub-agent tasks.
//
// On a TTY, running tools and tasks live in a small status region at the
// bottom of the output that is redrawn in place; everything finished scrolls
// above it as ordinary lines. Not on a TTY, every line is written once, in
// order, with no cursor movement or line clearing at all.
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

	"github.com/synapse-agent/synapse/internal/todo"
)

// Defaults for zero Options fields.
const (
	DefaultWidth          = 80
	DefaultHeight         = 24
	DefaultMaxRecentTools = 5
	DefaultSummaryLimit   = 60
	DefaultOutputLines    = 4
)

// Options configure a Renderer.
type Options struct {
	Out io.Writer
	// TTY enables in-place status updates and markdown styling.
	TTY bool
	// Color enables SGR colours. Callers pass false when NO_COLOR is set or
	// Out is not a terminal.
	Color bool
	// Width and Height of the terminal in cells (0: 80×24). Height bounds
	// the status region so it never scrolls off the screen.
	Width, Height int
	// MaxRecentTools is how many of a task's tools stay visible
	// (SYNAPSE_MAX_RECENT_TOOLS; 0: 5).
	MaxRecentTools int
	// SummaryLimit is the longest task description shown, in runes (0: 60).
	SummaryLimit int
	// OutputLines is how many lines of a tool's output are shown before the
	// rest is folded (0: 4).
	OutputLines int
}

// ToolMeta is extra information about a finished top-level tool call.
type ToolMeta struct {
	// Todos is the todo list after a TodoWrite call; when non-nil the
	// renderer shows its summary instead of the raw output (an empty,
	// non-nil list reads "todo list is empty").
	Todos []todo.Item
	// Message is a short error message (tool.Result.Message), shown on failure.
	Message string
}

type status int

const (
	running status = iota
	succeeded
	failed
)

type toolState struct {
	id, cmd string
}

type taskTool struct {
	cmd string
	st  status
}

type taskState struct {
	id, typ, desc string
	recent        []taskTool // the last MaxRecentTools tools
	total         int
}

// Renderer writes the agent's activity to Options.Out.
type Renderer struct {
	mu  sync.Mutex
	out io.Writer
	buf bytes.Buffer // one Write per call keeps concurrent output whole
	p   palette
	nl  string

	tty                             bool
	width, height                   int
	maxRecent, summary, outputLines int

	md      markdown
	line    strings.Builder // current incomplete line of model text
	shown   string          // the part of line already on screen (TTY)
	midLine bool            // the cursor is not at column 0
	// lineDirty: line holds bytes clean would change (escapes, tabs, C1
	// controls, invalid UTF-8). While it does not, shown is line itself and
	// a delta is shown without re-cleaning the whole line.
	lineDirty bool

	tools      []*toolState // running top-level tools, in start order
	tasks      []*taskState // running tasks, in start order
	regionRows int          // rows of the status region now on screen
}

// New returns a Renderer writing to opts.Out.
func New(opts Options) *Renderer {
	r := &Renderer{
		out:         opts.Out,
		tty:         opts.TTY,
		p:           palette{on: opts.Color},
		nl:          "\n",
		width:       orDefault(opts.Width, DefaultWidth),
		height:      orDefault(opts.Height, DefaultHeight),
		maxRecent:   orDefault(opts.MaxRecentTools, DefaultMaxRecentTools),
		summary:     orDefault(opts.SummaryLimit, DefaultSummaryLimit),
		outputLines: orDefault(opts.OutputLines, DefaultOutputLines),
	}
	if r.out == nil {
		r.out = io.Discard
	}
	if r.tty {
		// The REPL may leave the terminal in raw mode, where \n does not
		// return the carriage; \r\n is right in both modes.
		r.nl = "\r\n"
	}
	r.md = markdown{p: r.p, width: r.width}
	return r
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// SetSize updates the terminal size (after SIGWINCH).
func (r *Renderer) SetSize(width, height int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.width = orDefault(width, DefaultWidth)
	r.height = orDefault(height, DefaultHeight)
	r.md.width = r.width
}

// flush writes what the call assembled. Write errors are ignored: there is
// nowhere better to report that the terminal went away.
func (r *Renderer) flush() {
	if r.buf.Len() > 0 {
		_, _ = r.out.Write(r.buf.Bytes())
		r.buf.Reset()
	}
}

// ---- model text ----

// TextDelta renders streamed model text. Complete lines are rendered as
// markdown on a TTY and as plain text otherwise; on a TTY the unfinished
// line is shown as it arrives and restyled once it completes.
func (r *Renderer) TextDelta(s string) {
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
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
	if r.tty && len(r.tools) == 0 && len(r.tasks) == 0 && r.line.Len() > 0 {
		r.showPartial(s)
	}
}

// EndText ends the model's message: an unfinished line is written out and
// the cursor returns to column 0.
func (r *Renderer) EndText() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if r.line.Len() > 0 || r.midLine {
		r.completeLine()
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
	styled := r.md.line(text)
	if r.shown != "" && r.regionRows == 0 && r.midLine {
		if styled == text && strings.HasPrefix(text, r.shown) {
			r.buf.WriteString(text[len(r.shown):])
		} else {
			r.erasePartial()
			r.buf.WriteString(styled)
		}
		r.buf.WriteString(r.nl)
		r.shown, r.midLine = "", false
		return
	}
	r.shown = ""
	r.writeStatic(styled)
}

// showPartial puts the unfinished line on screen (TTY, no status region);
// added is what the line just gained. A plain line is extended by added
// alone: re-cleaning and comparing the whole line for every delta made a
// long line quadratic.
func (r *Renderer) showPartial(added string) {
	if !r.lineDirty && r.midLine && r.shown != "" && len(r.shown)+len(added) == r.line.Len() {
		r.buf.WriteString(added)
		r.shown = r.line.String()
		return
	}
	text := clean(r.line.String(), true)
	if r.shown != "" && strings.HasPrefix(text, r.shown) {
		r.buf.WriteString(text[len(r.shown):])
	} else {
		if r.shown != "" {
			r.erasePartial()
		} else if r.midLine {
			r.buf.WriteString(r.nl)
		}
		r.buf.WriteString(text)
	}
	r.shown = text
	r.midLine = text != ""
}

// erasePartial removes the shown unfinished line, which may have wrapped,
// leaving the cursor at column 0 of its first row.
func (r *Renderer) erasePartial() {
	rows := 1
	if w := width(r.shown); w > r.width {
		rows = (w + r.width - 1) / r.width
	}
	r.buf.WriteString("\r")
	if rows > 1 {
		r.buf.WriteString(cursorUp(rows - 1))
	}
	r.buf.WriteString("\x1b[J")
	r.shown, r.midLine = "", false
}

// settle brings the cursor to column 0 before other output. An unfinished
// line of text is ended first (it continues on the next line later), so text
// and tool lines keep the order in which they arrived.
func (r *Renderer) settle() {
	switch {
	case r.tty && r.midLine && r.shown != "":
		styled := r.md.line(r.shown)
		if styled != r.shown {
			r.erasePartial()
			r.buf.WriteString(styled)
		}
		r.buf.WriteString(r.nl)
	case r.line.Len() > 0: // buffered, not on screen yet
		text := clean(r.line.String(), r.tty)
		if r.tty {
			text = r.md.line(text)
		}
		r.buf.WriteString(text)
		r.buf.WriteString(r.nl)
	case r.midLine:
		r.buf.WriteString(r.nl)
	}
	r.line.Reset()
	r.lineDirty = false
	r.shown, r.midLine = "", false
}

// ---- static output and the status region ----

// writeStatic writes finished lines above the status region.
func (r *Renderer) writeStatic(lines ...string) {
	r.clearRegion() // never drawn while a partial line is on screen
	r.settle()
	for _, l := range lines {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
	}
	r.drawRegion()
}

func cursorUp(n int) string { return "\x1b[" + itoa(n) + "A" }

func (r *Renderer) clearRegion() {
	if r.regionRows == 0 {
		return
	}
	// The cursor sits at column 0 just below the region.
	r.buf.WriteString(cursorUp(r.regionRows))
	r.buf.WriteString("\x1b[J")
	r.regionRows = 0
}

// drawRegion draws the running tools and tasks (TTY only). Every line is cut
// to the terminal width so that rows can be counted exactly.
func (r *Renderer) drawRegion() {
	if !r.tty || (len(r.tools) == 0 && len(r.tasks) == 0) {
		return
	}
	lines := r.regionLines()
	for _, l := range lines {
		r.buf.WriteString(l)
		r.buf.WriteString(r.nl)
	}
	r.regionRows = len(lines)
}

func (r *Renderer) redraw() {
	r.clearRegion()
	r.settle()
	r.drawRegion()
}

// regionLines lays out the running items, compacting them when they would not
// fit on the screen.
func (r *Renderer) regionLines() []string {
	max := r.height - 2
	if max < 3 {
		max = 3
	}
	for _, detail := range []int{2, 1, 0} {
		var lines []string
		for _, t := range r.tools {
			lines = append(lines, r.fit(r.p.yellow("◌")+" "+r.p.bold(shortCommand(t.cmd))))
		}
		for _, t := range r.tasks {
			lines = append(lines, r.taskLines(t, running, detail)...)
		}
		if len(lines) <= max || detail == 0 {
			if len(lines) > max {
				hidden := len(lines) - (max - 1)
				lines = append(lines[:max-1], r.p.dim("… "+plural(hidden, "more running", "more running")))
			}
			return lines
		}
	}
	return nil
}

// fit cuts a (possibly coloured) line to the width of the terminal.
func (r *Renderer) fit(s string) string {
	if !r.tty {
		return s
	}
	return truncate(s, r.width-1)
}

// ---- top-level tools ----

// ToolStart shows a top-level tool call starting.
func (r *Renderer) ToolStart(id, command string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.tools = append(r.tools, &toolState{id: id, cmd: command})
	if r.tty {
		r.redraw()
		return
	}
	r.writeStatic("▸ " + shortCommand(command))
}

// ToolEnd shows a top-level tool call's result: a success or failure mark
// and a few lines of its output, or for TodoWrite the list's summary.
func (r *Renderer) ToolEnd(id string, ok bool, output string, meta ToolMeta) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	cmd := id
	for i, t := range r.tools {
		if t.id == id {
			cmd = t.cmd
			r.tools = append(r.tools[:i], r.tools[i+1:]...)
			break
		}
	}
	lines := []string{r.fit(r.mark(ok) + " " + r.p.bold(shortCommand(cmd)))}
	if ok && isTodoWrite(cmd) && meta.Todos != nil {
		lines = append(lines, r.todoLines(meta.Todos, "    ")...)
	} else {
		if !ok && meta.Message != "" && !strings.Contains(output, meta.Message) {
			lines = append(lines, r.fit("    "+r.p.red(clean(meta.Message, true))))
		}
		lines = append(lines, r.outputLinesOf(output, ok)...)
	}
	r.writeStatic(lines...)
}

func isTodoWrite(cmd string) bool {
	c := strings.TrimSpace(cmd)
	return c == "TodoWrite" || strings.HasPrefix(c, "TodoWrite ") || strings.HasPrefix(c, "TodoWrite\t") || strings.HasPrefix(c, "TodoWrite\n")
}

func (r *Renderer) mark(ok bool) string {
	if ok {
		return r.p.green("✓")
	}
	return r.p.red("✗")
}

// outputLinesOf folds a tool's output: the first lines of a success, the last
// lines of a failure (where errors usually are), with a count of the rest.
func (r *Renderer) outputLinesOf(output string, ok bool) []string {
	text := strings.TrimRight(clean(output, r.tty), "\n ")
	if strings.TrimSpace(text) == "" {
		return nil
	}
	all := strings.Split(text, "\n")
	n := r.outputLines
	var shown []string
	var fold string
	switch {
	case len(all) <= n+1: // folding one line would save nothing
		shown = all
	case ok:
		shown = all[:n]
		fold = "… " + plural(len(all)-n, "more line", "more lines")
	default:
		shown = all[len(all)-n:]
		fold = "… " + plural(len(all)-n, "earlier line", "earlier lines")
	}
	var out []string
	if fold != "" && !ok {
		out = append(out, r.p.dim("    "+fold))
	}
	for _, l := range shown {
		out = append(out, r.fit("    "+r.p.dim(l)))
	}
	if fold != "" && ok {
		out = append(out, r.p.dim("    "+fold))
	}
	return out
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

// TaskStart shows a sub-agent task starting: its own Task(...) line at once.
func (r *Renderer) TaskStart(taskID, taskType, description string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	t := &taskState{id: taskID, typ: summarize(taskType, 40), desc: summarize(description, r.summary)}
	r.tasks = append(r.tasks, t)
	if r.tty {
		r.redraw()
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
	if r.tty {
		r.redraw()
	}
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
	if r.tty {
		r.redraw()
	}
}

// TaskEnd shows a task's outcome: its Task(...) line with a mark, its most
// recent tools (earlier ones counted) and its error, if any.
func (r *Renderer) TaskEnd(taskID string, ok bool, duration time.Duration, toolCount int, errText string) {
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
	if toolCount > t.total {
		t.total = toolCount
	}
	st := failed
	if ok {
		st = succeeded
	}
	for i := range t.recent {
		if t.recent[i].st == running { // the task ended, so did its tool
			t.recent[i].st = st
		}
	}
	lines := r.taskLines(t, st, 2)
	lines[0] = r.fit(lines[0] + r.p.dim(" · "+formatDuration(duration)))
	if !ok && strings.TrimSpace(errText) != "" {
		for i, l := range strings.Split(strings.TrimSpace(clean(errText, r.tty)), "\n") {
			if i == 3 {
				lines = append(lines, r.p.dim("    …"))
				break
			}
			lines = append(lines, r.fit("    "+r.p.red(l)))
		}
	}
	r.writeStatic(lines...)
}

// taskLines is a task's block. detail 2: header and the recent-tools window;
// 1: header and the latest tool; 0: header only.
func (r *Renderer) taskLines(t *taskState, st status, detail int) []string {
	var mark string
	switch st {
	case running:
		mark = r.p.yellow("◌")
	case succeeded:
		mark = r.p.green("✓")
	default:
		mark = r.p.red("✗")
	}
	head := mark + " " + r.p.bold(r.taskTitle(t))
	if t.total > 0 {
		head += r.p.dim(" · " + plural(t.total, "tool", "tools"))
	}
	lines := []string{r.fit(head)}
	recent := t.recent
	switch detail {
	case 0:
		return lines
	case 1:
		if len(recent) > 1 {
			recent = recent[len(recent)-1:]
		}
	}
	if earlier := t.total - len(recent); earlier > 0 {
		lines = append(lines, r.p.dim("    ... ("+plural(earlier, "earlier tool", "earlier tools")+")"))
	}
	for _, tt := range recent {
		var m string
		switch tt.st {
		case running:
			m = r.p.yellow("◌")
		case succeeded:
			m = r.p.green("✓")
		default:
			m = r.p.red("✗")
		}
		lines = append(lines, r.fit("    "+m+" "+tt.cmd))
	}
	return lines
}

func formatDuration(d time.Duration) string {
	if d < time.Minute {
		s := d.Round(100 * time.Millisecond).Seconds()
		return strings.TrimSuffix(strings.TrimRight(strings.TrimRight(ftoa1(s), "0"), "."), ".") + "s"
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

// ---- messages ----

// Notice writes an informational line.
func (r *Renderer) Notice(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
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

// Error writes an error line.
func (r *Renderer) Error(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
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
	r.clearRegion()
	r.settle()
	r.md.reset()
	var lines []string
	for _, t := range r.tools {
		lines = append(lines, r.fit(r.mark(false)+" "+r.p.bold(shortCommand(t.cmd))+r.p.dim(" · "+reason)))
	}
	for _, t := range r.tasks {
		for i := range t.recent {
			if t.recent[i].st == running {
				t.recent[i].st = failed
			}
		}
		ls := r.taskLines(t, failed, 2)
		ls[0] = r.fit(ls[0] + r.p.dim(" · "+reason))
		lines = append(lines, ls...)
	}
	r.tools, r.tasks = nil, nil
	r.clearRegion()
	r.writeStatic(lines...)
}
