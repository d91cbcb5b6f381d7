package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// spinnerFrames turn once a second at the 100 ms frame rate; each frame is
// one 3-byte rune.
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

const frameInterval = 100 * time.Millisecond

// maxThinking bounds the thinking text kept for one block.
const maxThinking = 64 << 10

// liveState is what the working indicator, thinking line, retry countdown
// and footer show.
type liveState struct {
	busy      bool
	busySince time.Time
	tokIn     int64 // prompt tokens of this turn's requests
	tokOut    int64 // output tokens of this turn's finished requests
	streamed  int   // bytes streamed since the last usage report (an estimate of output)

	thinking      strings.Builder
	thinkingSince time.Time
	thinkingOn    bool
	// thinkingPrinted is how much of thinking verbose mode has written
	// whole (it ends at a line's end).
	thinkingPrinted int

	retry  *retryState
	status *Status
	// pausedAt is when the clocks stopped for a question (zero: running).
	pausedAt time.Time

	stopTick chan struct{}
	tickDone chan struct{}
}

type retryState struct {
	info  Retry
	until time.Time
}

// Retry describes a failed model request that will be tried again.
type Retry struct {
	Reason  string        // what failed ("rate limited (429)")
	Attempt int           // the retry about to be made, from 1
	Max     int           // how many retries there may be (0: unknown)
	Wait    time.Duration // until the next attempt
}

// Status is the footer's content.
type Status struct {
	Model string
	// ContextPercent is how full the context window is, -1: unknown.
	ContextPercent int
	CostUSD        float64
	Priced         bool
	Sandbox        string // "on", "off", "degraded", …
	// Jobs counts the background jobs still running.
	Jobs int
	// Mode is the permission mode when not the default ("plan", …).
	Mode string
	// Queued is what the user typed during the turn (shown under the
	// footer; "" hides the line).
	Queued string
	// QueuedSends: Queued holds a line ended with Enter, sent when the turn
	// ends; otherwise it is an unfinished line the editor takes over.
	QueuedSends bool
}

// StartTurn shows the working indicator until EndTurn: a spinner, the
// time since the turn started, tokens in and out so far, and the key that
// interrupts. On a TTY with Options.Animate it is redrawn at that interval.
func (r *Renderer) StartTurn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	if r.live.busy {
		return
	}
	r.live.busy = true
	r.live.busySince = r.now()
	r.folds = foldRecord{turned: true} // the last turn's parts only
	r.live.tokIn, r.live.tokOut, r.live.streamed = 0, 0, 0
	if !r.tty {
		return
	}
	r.redraw()
	if r.animate > 0 {
		stop, done := make(chan struct{}), make(chan struct{})
		r.live.stopTick, r.live.tickDone = stop, done
		go r.tickLoop(r.animate, stop, done)
	}
}

func (r *Renderer) tickLoop(every time.Duration, stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			r.Tick()
		}
	}
}

// EndTurn removes the working indicator and the footer.
func (r *Renderer) EndTurn() {
	r.mu.Lock()
	stop, done := r.live.stopTick, r.live.tickDone
	r.live.stopTick, r.live.tickDone = nil, nil
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done // the loop may be waiting for the lock: released above
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.endThinking()
	r.live.busy = false
	r.live.retry = nil
	r.live.pausedAt = time.Time{}
	r.redraw()
}

// TurnUsage adds one model request's tokens to the indicator's counts.
func (r *Renderer) TurnUsage(in, out int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.live.tokIn += in
	r.live.tokOut += out
	r.live.streamed = 0
}

// SetStatus sets the footer (model · context · cost · sandbox), shown
// under the indicator while a turn runs and never written to the scrollback.
func (r *Renderer) SetStatus(s Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.live.status = &s
	if r.live.busy {
		r.redraw()
	}
}

// Thinking shows streamed thinking: on a TTY its latest line, dimmed, above
// the indicator while it lasts; when the answer or a tool call follows, a
// "Thought for …" line with the first lines of it (all of it with
// Options.ShowThinking) goes to the scrollback.
func (r *Renderer) Thinking(delta string) {
	if delta == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	r.live.retry = nil
	r.live.streamed += len(delta)
	if !r.live.thinkingOn {
		r.live.thinkingOn = true
		r.live.thinkingSince = r.now()
		r.live.thinking.Reset()
		r.live.thinkingPrinted = 0
	}
	if r.live.thinking.Len() < maxThinking {
		r.live.thinking.WriteString(delta)
	}
	if r.verbose {
		r.streamThinking()
	}
	r.redraw()
}

// endThinking writes the finished thinking block to the scrollback:
// folded to its first lines (kept whole for Expand), whole with
// Options.ShowThinking, or, when verbose mode streamed it, its last lines.
func (r *Renderer) endThinking() {
	if !r.live.thinkingOn {
		return
	}
	r.live.thinkingOn = false
	raw, printed := r.live.thinking.String(), r.live.thinkingPrinted
	r.live.thinking.Reset()
	r.live.thinkingPrinted = 0
	head := "Thought for " + formatDuration(r.now().Sub(r.live.thinkingSince))
	if printed > 0 && r.verbose {
		lines := r.thinkingRows(raw[printed:])
		if len(raw) >= maxThinking {
			lines = append(lines, r.p.dim("  … thinking past "+sizeText(maxThinking)+" is not kept"))
		}
		r.writeStatic(append(lines, r.p.dim("✻ "+head))...)
		return
	}
	// Verbose mode turned off in the middle: the rest is folded.
	text := strings.TrimSpace(clean(raw[printed:], true))
	lines := []string{r.p.dim("✻ " + head)}
	if text != "" {
		var rows []string
		for _, para := range strings.Split(text, "\n") {
			if strings.TrimSpace(para) == "" {
				continue
			}
			if r.tty {
				rows = append(rows, strings.Split(ansi.Wrap(para, max(r.width-5, 10), ""), "\n")...)
			} else {
				rows = append(rows, para)
			}
		}
		if !r.showThinking && !r.verbose {
			// One dim line by default, as the peers show it; Ctrl+O shows it whole.
			r.folds.keep(foldedPart{thinking: true, head: head, text: raw})
			r.writeStatic(r.fit(r.p.dim("✻ " + head + " · " + plural(len(rows), "line", "lines") + r.expandHint())))
			return
		}
		for _, l := range rows {
			lines = append(lines, r.fit(r.p.dim("  "+r.p.italic(strings.TrimRight(l, " ")))))
		}
	}
	r.writeStatic(lines...)
}

// thinkingLine is the region's view of thinking in progress: its last line.
func (r *Renderer) thinkingLine() string {
	if !r.live.thinkingOn {
		return ""
	}
	text := strings.TrimRight(r.live.thinking.String(), "\n ")
	if r.verbose { // the finished lines are in the scrollback already
		text = r.live.thinking.String()[r.live.thinkingPrinted:]
	}
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSpace(clean(text, true))
	if text == "" {
		return ""
	}
	return r.p.dim("✻ " + r.p.italic(text))
}

// RetryNotice shows a model request being retried: a line in the scrollback
// with the reason and attempt, and on a TTY a countdown in the indicator.
func (r *Renderer) RetryNotice(x Retry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.flush()
	attempt := "retry " + itoa(x.Attempt)
	if x.Max > 0 {
		attempt += "/" + itoa(x.Max)
	}
	line := "↻ " + clean(x.Reason, true) + " · retrying in " + formatDuration(x.Wait) + " (" + attempt + ")"
	r.live.retry = &retryState{info: x, until: r.now().Add(x.Wait)}
	if !r.tty || r.width < 20 {
		r.writeStatic(r.fit(r.p.yellow(line)))
		return
	}
	// Wrapped, not cut: the wait and attempt come last and must stay visible.
	rows := strings.Split(WordWrap(line, r.width-3), "\n")
	for i := range rows {
		if i > 0 {
			rows[i] = "  " + rows[i]
		}
		rows[i] = r.p.yellow(strings.TrimRight(rows[i], " "))
	}
	r.writeStatic(rows...)
}

// spinner is the frame for now, counted from the renderer's start so that
// every spinner on the screen turns together.
func (r *Renderer) spinner(now time.Time) string {
	n := len(spinnerFrames) / 3
	i := int(now.Sub(r.epoch)/frameInterval) % n
	if i < 0 {
		i = 0
	}
	return r.p.yellow(spinnerFrames[3*i : 3*i+3])
}

// indicatorLine is the working indicator, or "" between turns.
func (r *Renderer) indicatorLine(now time.Time) string {
	if !r.live.busy {
		return ""
	}
	label := "Working…"
	switch {
	case !r.live.pausedAt.IsZero():
		// The turn waits for the user: no clock runs, no key interrupts
		// it but the question's own.
		return r.p.yellow("?") + " Waiting for your answer… " + r.p.dim(formatElapsed(now.Sub(r.live.busySince))+" · esc to deny")
	case r.live.retry != nil:
		x := r.live.retry.info
		attempt := itoa(x.Attempt)
		if x.Max > 0 {
			attempt += "/" + itoa(x.Max)
		}
		if left := r.live.retry.until.Sub(now); left > 0 {
			label = "Retrying in " + itoa(int((left+time.Second-1)/time.Second)) + "s (retry " + attempt + ")…"
		} else {
			label = "Retrying (retry " + attempt + ")…"
		}
	case r.live.thinkingOn:
		label = "Thinking…"
	case len(r.tools) > 0 || len(r.tasks) > 0:
		label = "Running…"
	}
	info := formatElapsed(now.Sub(r.live.busySince))
	out := r.live.tokOut + int64(r.live.streamed/4)
	// Each direction once it is known: the first request's prompt size
	// arrives with its usage, and "↑ 0" while it streams would be wrong.
	switch {
	case r.live.tokIn > 0 && out > 0:
		info += " · ↑ " + formatTokens(r.live.tokIn) + " ↓ " + formatTokens(out)
	case r.live.tokIn > 0:
		info += " · ↑ " + formatTokens(r.live.tokIn)
	case out > 0:
		info += " · ↓ " + formatTokens(out)
	}
	info += " · " + r.interruptKey + " to interrupt"
	return r.spinner(now) + " " + label + " " + r.p.dim(info)
}

// footerLine is the status footer, or "" when there is none to show.
func (r *Renderer) footerLine() string {
	s := r.live.status
	if !r.live.busy || s == nil {
		return ""
	}
	var parts []string
	if s.Mode != "" {
		parts = append(parts, "mode "+clean(s.Mode, true))
	}
	if s.Model != "" {
		parts = append(parts, clean(s.Model, true))
	}
	if s.ContextPercent >= 0 {
		parts = append(parts, "context "+itoa(s.ContextPercent)+"%")
	}
	if s.Priced {
		parts = append(parts, fmt.Sprintf("$%.2f", s.CostUSD))
	}
	if s.Sandbox != "" {
		parts = append(parts, "sandbox "+clean(s.Sandbox, true))
	}
	if s.Jobs == 1 {
		parts = append(parts, "1 job")
	} else if s.Jobs > 1 {
		parts = append(parts, itoa(s.Jobs)+" jobs")
	}
	if len(parts) == 0 {
		return ""
	}
	return r.p.dim(strings.Join(parts, " · "))
}

// queuedLine shows the prompt typed during the turn, or "".
func (r *Renderer) queuedLine() string {
	s := r.live.status
	if !r.live.busy || s == nil || s.Queued == "" {
		return ""
	}
	hint := "  (Enter queues it"
	if s.QueuedSends {
		hint = "  (sent when the turn ends"
	}
	hint += "; Esc clears)" // also while a question is open: Esc clears first, then denies
	return r.p.dim("queued › ") + clean(strings.ReplaceAll(s.Queued, "\n", " ↵ "), true) + r.p.dim(hint)
}
