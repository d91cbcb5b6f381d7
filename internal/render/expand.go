package render

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// What the renderer keeps of a turn's folded parts, so that the user can
// see them whole afterwards (Expand) or as they come (SetVerbose). Only the
// last turn's parts are kept, and each within a bound: the memory does not
// grow with the length of the session.
const (
	// ExpandOutputBytes is the most of one part kept: the end of a longer
	// one (errors and results are usually last), with a note of the rest.
	ExpandOutputBytes = 32 << 10
	// expandBudget bounds all of a turn's kept parts; the oldest go first.
	expandBudget = 256 << 10
)

// foldedPart is one thing a turn showed folded: a thinking block or a tool
// call's output.
type foldedPart struct {
	thinking bool
	head     string // the command line, or the thinking's duration
	ok       bool
	markdown bool   // a sub-agent's answer
	laidOut  bool   // text is rows laid out already (a diff), one a line
	text     string // its end, at most ExpandOutputBytes
	size     int    // bytes of the whole text
	fullPath string // where the whole output was saved (a cut output), or ""
}

// foldRecord is the last turn's folded parts.
type foldRecord struct {
	parts   []foldedPart
	bytes   int
	dropped int  // parts left out to stay within expandBudget
	turned  bool // a turn has started since the renderer began
	shown   bool // Expand printed these parts already
}

// keep adds a folded part, cut to its end when long.
func (f *foldRecord) keep(p foldedPart) {
	p.size = len(p.text)
	// A copy: the cut must not hold the whole output's memory.
	p.text = strings.Clone(lastBytes(p.text, ExpandOutputBytes))
	f.parts = append(f.parts, p)
	f.bytes += len(p.text)
	for f.bytes > expandBudget && len(f.parts) > 1 {
		f.bytes -= len(f.parts[0].text)
		f.parts[0] = foldedPart{} // its text is not held by the array
		f.parts = f.parts[1:]
		f.dropped++
	}
	f.shown = false
}

// lastBytes is the end of s in at most n bytes, starting at a line when
// one starts in it and never inside a rune.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := textutil.TailBytes(s, n)
	if i := strings.IndexByte(cut, '\n'); i >= 0 && i < len(cut)-1 {
		return cut[i+1:]
	}
	return cut
}

// ExpandResult says what Expand did.
type ExpandResult int

const (
	// ExpandNoTurn: no turn has run yet.
	ExpandNoTurn ExpandResult = iota
	// ExpandNothingFolded: the last turn showed everything whole.
	ExpandNothingFolded
	// ExpandShown: the folded parts were written to the scrollback.
	ExpandShown
	// ExpandShownBefore: nothing happened since they were last written.
	ExpandShownBefore
)

// Expand writes the last turn's folded parts whole to the scrollback: the
// full thinking, and the output of each folded tool call under its command
// line (the end of a very long one, with where the rest is). It writes
// nothing when there is nothing folded or nothing new since the last call.
func (r *Renderer) Expand() ExpandResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	f := &r.folds
	switch {
	case !f.turned:
		return ExpandNoTurn
	case len(f.parts) == 0:
		return ExpandNothingFolded
	case f.shown:
		return ExpandShownBefore
	}
	f.shown = true
	lines := []string{r.p.dim("── folded in the last turn: " + plural(len(f.parts), "part", "parts") + " ──")}
	if f.dropped > 0 {
		lines = append(lines, r.p.dim("  ("+plural(f.dropped, "earlier part", "earlier parts")+" not kept: a turn keeps "+itoa(expandBudget>>10)+" KB of them)"))
	}
	for _, p := range f.parts {
		lines = append(lines, r.partLines(p, true)...)
	}
	r.writeStatic(lines...)
	return ExpandShown
}

// SetVerbose switches verbose output: thinking is written whole as it
// streams and a tool's output whole when the call ends, instead of folded.
func (r *Renderer) SetVerbose(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.verbose = on
	if on && r.live.thinkingOn {
		r.streamThinking() // what has come so far, then the rest as it comes
	}
}

// Verbose reports whether verbose output is on.
func (r *Renderer) Verbose() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.verbose
}

// partLines lays out a part whole: its head line (when head is set), a
// note of what was not kept, then every line, wrapped at the terminal's
// width rather than cut.
func (r *Renderer) partLines(p foldedPart, head bool) []string {
	var lines []string
	if head {
		if p.thinking {
			lines = append(lines, r.p.dim("✻ "+p.head))
		} else {
			lines = append(lines, r.fit(r.mark(p.ok)+" "+r.p.bold(shortCommand(p.head))))
		}
	}
	if p.size > len(p.text) {
		note := "    … the first " + sizeText(p.size-len(p.text)) + " of " + sizeText(p.size) + " are not shown"
		if p.fullPath != "" {
			note += "; the whole output is in " + clean(p.fullPath, true)
		}
		lines = append(lines, r.noteLines(note)...)
	} else if p.fullPath != "" {
		lines = append(lines, r.noteLines("    (the output was cut for the model; the whole of it is in "+clean(p.fullPath, true)+")")...)
	}
	if p.laidOut {
		return append(lines, strings.Split(p.text, "\n")...)
	}
	text := strings.TrimRight(clean(p.text, r.tty), "\n ")
	indent, style := "    ", func(s string) string { return s }
	if p.thinking {
		indent, style = "  ", func(s string) string { return r.p.dim(r.p.italic(s)) }
	}
	if p.markdown && r.tty {
		for _, l := range r.md.document(strings.TrimSpace(text), r.width-len(indent)) {
			lines = append(lines, indent+l)
		}
		return lines
	}
	for _, l := range strings.Split(text, "\n") {
		lines = append(lines, r.wrapped(l, indent, style)...)
	}
	return lines
}

// noteLines is a dim note, word-wrapped on a TTY (a path in it stays whole).
func (r *Renderer) noteLines(note string) []string {
	if r.tty && r.width > 20 {
		note = WordWrap(note, r.width-1)
	}
	return r.styledLines(note, r.p.dim)
}

// wrapped is one line of text as rows under indent, each fitting the
// terminal (not on a TTY: the line as it is).
func (r *Renderer) wrapped(l, indent string, style func(string) string) []string {
	l = strings.TrimRight(l, " ")
	if !r.tty || l == "" {
		return []string{indent + style(l)}
	}
	var rows []string
	for _, row := range strings.Split(ansi.Hardwrap(l, max(r.width-1-len(indent), 10), true), "\n") {
		rows = append(rows, indent+style(row))
	}
	return rows
}

// sizeText is a byte count for a person: 512 bytes, 40 KB, 1.2 MB.
func sizeText(n int) string {
	switch {
	case n < 1<<10:
		return plural(n, "byte", "bytes")
	case n < 1<<20:
		return itoa((n+1<<9)>>10) + " KB"
	default:
		return trimTenths(float64(n)/(1<<20)) + " MB"
	}
}

// unfold handles a tool output that rows show folded: in verbose mode it
// is shown whole instead; otherwise it is kept for Expand.
func (r *Renderer) unfold(p foldedPart, rows []string) []string {
	if r.verbose {
		p.size = len(p.text)
		p.text = lastBytes(p.text, ExpandOutputBytes)
		return r.partLines(p, false)
	}
	r.folds.keep(p)
	return rows
}

// maxDiffInput bounds the change a trimmed diff is laid out whole from.
const maxDiffInput = 1 << 20

// unfoldDiff handles a diff that rows show trimmed, as unfold does an
// output: whole in verbose mode, otherwise kept (laid out now) for Expand.
func (r *Renderer) unfoldDiff(cmd string, c FileChange, rows []string) []string {
	p := foldedPart{head: cmd, ok: true, laidOut: true}
	if size := len(c.Old) + len(c.New); size > maxDiffInput {
		p.laidOut = false
		p.text = "(a change of " + sizeText(size) + " is too large to show here; the file is " + c.Path + ")"
	} else {
		all, _ := r.diffLinesOf(c, 1<<30)
		p.text = strings.Join(all, "\n")
	}
	return r.unfold(p, rows)
}

// streamThinking writes the thinking's finished lines not yet written
// (verbose mode), under a heading the first time.
func (r *Renderer) streamThinking() {
	t := &r.live
	text := t.thinking.String()
	end := strings.LastIndexByte(text, '\n') + 1
	if end <= t.thinkingPrinted {
		return
	}
	var lines []string
	if t.thinkingPrinted == 0 {
		lines = append(lines, r.p.dim("✻ Thinking…"))
	}
	lines = append(lines, r.thinkingRows(text[t.thinkingPrinted:end])...)
	t.thinkingPrinted = end
	r.writeStatic(lines...)
}

// thinkingRows are lines of thinking as written whole: dimmed, in
// italics, wrapped under a two-space indent; blank lines are dropped.
func (r *Renderer) thinkingRows(text string) []string {
	var rows []string
	style := func(s string) string { return r.p.dim(r.p.italic(s)) }
	for _, l := range strings.Split(clean(text, true), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		rows = append(rows, r.wrapped(l, "  ", style)...)
	}
	return rows
}

// expandHint names the key that shows a folded part whole, for the line
// that says what was folded ("" when there is none).
func (r *Renderer) expandHint() string {
	if r.expandKey == "" {
		return ""
	}
	return " · " + r.expandKey + " to expand"
}
