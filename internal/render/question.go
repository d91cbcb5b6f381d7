package render

import (
	"strings"
	"time"
)

// Question writes a question to the user in a frame: title on the top
// border, then body lines (word-wrapped, never cut, so a command is shown
// whole), cleaned for the terminal. Not on a TTY the lines are written
// plain under the title.
func (r *Renderer) Question(title string, body []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	title = clean(title, true)
	if !r.tty || r.width < 24 {
		lines := []string{r.p.bold(title)}
		for _, l := range body {
			lines = append(lines, "  "+clean(l, true))
		}
		r.writeStatic(lines...)
		return
	}
	inner := r.width - 5 // "│ " + text + " │", one column spare
	var rows []string
	for _, l := range body {
		for _, w := range strings.Split(WordWrap(clean(l, true), inner), "\n") {
			for width(w) > inner { // a word longer than the frame: cut it in pieces
				cut := truncateCells(w, inner)
				rows = append(rows, cut)
				w = w[len(cut):]
			}
			rows = append(rows, w)
		}
	}
	wide := width(title) + 4
	for _, l := range rows {
		wide = max(wide, width(l))
	}
	wide = min(wide, inner)
	top := "╭─ " + truncate(title, wide-2) + " "
	top += strings.Repeat("─", max(0, wide+3-width(top))) + "╮"
	lines := []string{r.p.cyan(top)}
	for _, l := range rows {
		lines = append(lines, r.p.cyan("│ ")+l+strings.Repeat(" ", max(0, wide-width(l)))+r.p.cyan(" │"))
	}
	lines = append(lines, r.p.cyan("╰"+strings.Repeat("─", wide+2)+"╯"))
	r.writeStatic(lines...)
}

// truncateCells is the longest prefix of s (plain text) at most n cells wide.
func truncateCells(s string, n int) string {
	w := 0
	for i, c := range s {
		cw := runeWidth(c)
		if w+cw > n {
			return s[:i]
		}
		w += cw
	}
	return s
}

// PauseClock stops the turn's clocks while the user is asked something:
// the spinners stand still, the indicator says it waits for an answer, and
// the time until ResumeClock is not counted in the turn's, the running
// commands' and the tasks' times.
func (r *Renderer) PauseClock() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if !r.live.pausedAt.IsZero() {
		return
	}
	r.live.pausedAt = r.now()
	r.redraw()
}

// ResumeClock starts the clocks PauseClock stopped.
func (r *Renderer) ResumeClock() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if r.live.pausedAt.IsZero() {
		return
	}
	d := r.now().Sub(r.live.pausedAt)
	r.live.pausedAt = time.Time{}
	r.live.busySince = r.live.busySince.Add(d)
	for _, t := range r.tools {
		t.start = t.start.Add(d)
		t.paused += d
	}
	for _, t := range r.tasks {
		t.start = t.start.Add(d)
		t.paused += d
	}
	r.redraw()
}

// clock is the time the live area shows: now, or the moment the clocks
// were paused.
func (r *Renderer) clock() time.Time {
	if !r.live.pausedAt.IsZero() {
		return r.live.pausedAt
	}
	return r.now()
}
