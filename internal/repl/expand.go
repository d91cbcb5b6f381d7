package repl

import "github.com/synapse-agent/synapse/internal/render"

// Ctrl+O shows what the renderer folded. Between turns it writes the last
// turn's folded parts whole into the scrollback (the full thinking, the
// full output of each folded tool call); during a turn it switches verbose
// output, where thinking streams whole and a tool's output is shown whole
// when the call ends, for the rest of the session.

// expandLast is Ctrl+O at the prompt: the editor steps aside while the
// renderer writes the parts, and is drawn again under them. When there is
// nothing to write, a hint under the prompt says why.
func (r *REPL) expandLast() {
	r.ed.erase()
	switch r.r.Expand() {
	case render.ExpandNoTurn:
		if r.resumedTurn != nil { // a resumed session: its last turn, whole, once
			r.println(r.resumedTurn...)
			r.resumedTurn = nil
			return
		}
		r.es.note = "Ctrl+O shows what the last turn folded (thinking, long output); no turn has run yet"
	case render.ExpandNothingFolded:
		r.es.note = "nothing was folded in the last turn"
		if r.r.Verbose() {
			r.es.note += " (verbose output is on; Ctrl+O during a turn folds again)"
		}
	case render.ExpandShownBefore:
		r.es.note = "nothing new since the last Ctrl+O: the last turn's folded parts are above"
	}
}

// toggleVerbose is Ctrl+O during a turn: verbose output on or off, said in
// a notice above the live area.
func (r *REPL) toggleVerbose() {
	on := !r.r.Verbose()
	if on {
		r.r.Notice("verbose output on: thinking streams whole and tool output is shown whole, for the rest of the session (Ctrl+O during a turn: fold again)")
	} else {
		r.r.Notice("verbose output off: thinking and long tool output are folded again (Ctrl+O after the turn shows what was folded)")
	}
	r.r.SetVerbose(on)
}
