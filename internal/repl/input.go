package repl

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/rivo/uniseg"

	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// editorState is what one prompt being typed carries besides its text.
type editorState struct {
	note      string // a hint under the prompt until the next key (Tab candidates, Ctrl+R, Ctrl+C, mode)
	histIdx   int    // the history entry shown (-1: the prompt being typed)
	draft     string // the prompt being typed, kept while Up shows the history
	lastCtrlC time.Time
	history   bool   // the prompt goes into the history (not an answer to a question)
	footer    string // the status row under an idle prompt (idleFooter)
}

// exitWindow is how soon a second Ctrl+C must follow the first to exit.
const exitWindow = 2 * time.Second

// Pastes of at least collapseLines lines (or collapseBytes bytes, or with
// a tab, which the editor would turn into spaces) are shown as a
// placeholder; the text is sent whole.
const (
	collapseLines = 10
	collapseBytes = 4000
)

// readEditor reads one prompt from the terminal with the line editor;
// history adds it to the prompt history. Keys after the Enter that sends
// it are kept for whoever reads next.
func (r *REPL) readEditor(prompt string, history bool) (string, error) {
	e := r.ed
	select { // a resize during the turn: the size is read below anyway
	case <-r.resized:
	default:
	}
	e.setSize(r.size())
	e.setPrompt(prompt)
	r.es.history = history
	r.es.histIdx, r.es.draft, r.es.note = -1, "", ""
	r.es.footer = ""
	if history {
		r.es.footer = r.idleFooter()
	}
	r.search = nil
	r.redraw()
	pending := r.keys.takeRest()
	for {
		for len(pending) > 0 {
			if n := r.typeRun(pending); n > 0 {
				pending = pending[n:]
				continue
			}
			ki := pending[0]
			pending = pending[1:]
			if text, done, err := r.onKey(ki); done {
				r.keys.putBack(pending)
				return text, err
			}
		}
		r.redraw()
		select {
		case b, ok := <-r.keys.ch:
			if !ok {
				e.finish()
				return "", io.EOF
			}
			pending = r.keys.decode(b)
		case <-r.resized:
			w, h := r.size()
			e.eraseAt(w)
			e.setSize(w, h)
			e.setPrompt(e.prompt) // rewraps at the new width (the mode may have changed it)
		case <-r.done:
			e.finish()
			return "", io.EOF
		}
	}
}

// typeRun inserts a run of typed characters at the start of in at once
// and reports how many keys it took (0: none, in[0] goes to onKey). A
// terminal without bracketed paste sends a paste as keys; inserting each
// on its own rewraps the line each time, O(n²) in the line's length.
// Only keys onKey would insert as they are are taken: text without
// modifiers but Shift, one grapheme (no key name), not while searching.
func (r *REPL) typeRun(in []keyInput) int {
	if r.search != nil {
		return 0
	}
	n := 0
	for n < len(in) && !in[n].isPaste && typedText(in[n].key) {
		n++
	}
	if n < 2 {
		return 0
	}
	var b strings.Builder
	for _, ki := range in[:n] {
		b.WriteString(ki.key.Text)
	}
	// What onKey does for each typed key (keep in step; TestTypeRunSameAsKeys).
	r.es.note, r.es.lastCtrlC = "", time.Time{}
	r.ed.ta.InsertString(b.String())
	return n
}

// typedText reports a key that is a character typed.
func typedText(k tea.KeyPressMsg) bool {
	return k.Text != "" && k.Mod&^tea.ModShift == 0 && uniseg.GraphemeClusterCount(k.Text) == 1 &&
		!strings.ContainsFunc(k.Text, unicode.IsControl)
}

// redraw draws the prompt and the hints under it.
func (r *REPL) redraw() {
	if r.search != nil {
		rows, x := r.searchRows()
		r.ed.paint(append(rows, r.hints()...), 0, x)
		return
	}
	r.ed.draw(r.hints())
}

// hints are the dim rows under the prompt: a note for the last key (up
// to maxHintRows rows), or the one row of slash commands matching what is
// typed.
func (r *REPL) hints() []string {
	w := max(20, r.ed.width-1)
	if r.search != nil {
		return []string{r.dim(ansi.Truncate(r.searchHint(), w, "…"))}
	}
	if r.es.note == "" {
		if p := slashPopup(r.ed.ta.Value()); p != "" {
			return []string{r.dim(ansi.Truncate(p, w, "…"))}
		}
		if r.es.footer != "" && r.ed.width >= footerMinWidth && r.ed.height >= footerMinHeight {
			return []string{r.dim(ansi.Truncate(r.es.footer, w, "…"))}
		}
		return nil
	}
	var rows []string
	// Tab candidates are file names: a cloned repository's may hold escape
	// sequences, which are shown harmless.
	note := textutil.Sanitize(r.es.note)
	for _, l := range strings.Split(ansi.Wrap(note, w, " "), "\n") {
		if len(rows) == maxHintRows {
			break
		}
		rows = append(rows, r.dim(ansi.Truncate(l, w, "…")))
	}
	return rows
}

// The idle footer is left out on a terminal narrower or shorter than this:
// there the prompt's rows matter more.
const (
	footerMinWidth  = 40
	footerMinHeight = 12
)

// idleFooter is the dim status row under the prompt between turns (the
// renderer's footer shows during a turn): the mode when it is not the
// default, the model, how full the context is, verbose output when on, and
// where help is. It is
// one of the hints: Tab candidates, notes and the slash popup replace it,
// and it is erased when the prompt is sent.
func (r *REPL) idleFooter() string {
	var parts []string
	if m := r.perm.Mode(); m != tool.ModeDefault {
		parts = append(parts, string(m)+" mode (Shift+Tab to cycle)")
	}
	model := r.o.Agent.Model()
	if model != "" {
		parts = append(parts, model)
	}
	if pct := r.contextPercent(model); pct >= 0 {
		parts = append(parts, fmt.Sprintf("context %d%%", pct))
	}
	if u := r.o.Agent.SessionUsage(); u != nil && u.Priced { // as the turn's footer shows it
		parts = append(parts, fmt.Sprintf("$%.2f", u.CostUSD))
	}
	if r.r.Verbose() { // Ctrl+O during a turn switched it on; it stays on
		parts = append(parts, "verbose")
	}
	if r.o.Jobs != nil { // jobs run on between turns: say so, as the turn's footer does
		switch n := r.o.Jobs.Running(); {
		case n == 1:
			parts = append(parts, "1 job (/jobs)")
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d jobs (/jobs)", n))
		}
	}
	parts = append(parts, "/help")
	return textutil.Sanitize(strings.ReplaceAll(strings.Join(parts, " · "), "\n", " "))
}

// slashPopup is the one-line list of the commands matching a prompt that
// is a command being typed ("/", "/co"), or "" when it is not one.
func slashPopup(value string) string {
	if !strings.HasPrefix(value, "/") || strings.ContainsAny(value, " \t\n") {
		return ""
	}
	word := strings.ToLower(value[1:])
	var match []slashCommand
	for _, c := range slashCommands {
		if c.run != nil && strings.HasPrefix(c.name, word) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 0:
		return "no command starts with /" + word + " · /help lists them"
	case 1:
		c := match[0]
		return strings.TrimSpace("/"+c.name+" "+c.args) + " · " + c.help
	}
	names := make([]string, len(match))
	for i, c := range match {
		names[i] = "/" + c.name
	}
	return strings.Join(names, " ") + " · Tab completes"
}

// onKey acts on one key or paste. done reports the prompt read (text, or
// err: errExit or io.EOF to leave).
func (r *REPL) onKey(ki keyInput) (text string, done bool, err error) {
	e, st := r.ed, &r.es
	st.note = ""
	if ki.isPaste || ki.key.String() != "ctrl+c" {
		// Any other key disarms Ctrl+C's exit, as its note goes away: a
		// Ctrl+C after typing clears the line again rather than exiting.
		st.lastCtrlC = time.Time{}
	}
	if r.search != nil {
		if text, done, handled := r.searchKey(ki); done {
			return r.send(text), true, nil
		} else if handled {
			return "", false, nil
		}
		// Accepted into the editor: the key edits the match.
	}
	if ki.isPaste {
		e.ta.InsertString(r.pasted(ki.paste))
		return "", false, nil
	}
	k := ki.key
	switch k.String() {
	case "enter":
		value := e.ta.Value()
		if strings.HasSuffix(value, "\\") && !strings.HasSuffix(value, "\\\\") && e.atEnd() {
			// A trailing backslash continues on a new line (as in a shell).
			e.replaceBeforeCursor(1, "\n")
			return "", false, nil
		}
		return r.send(value), true, nil
	case "ctrl+c":
		now := r.now()
		exiting := !st.lastCtrlC.IsZero() && now.Sub(st.lastCtrlC) < exitWindow
		st.lastCtrlC = now
		e.ta.Reset()
		r.pastes = nil
		if exiting {
			e.finish()
			return "", true, errExit
		}
		st.note = "(press Ctrl+C again or Ctrl+D to exit)"
	case "esc":
		if !st.history { // an answer to a question (/resume's pick): Esc cancels it
			e.ta.Reset()
			return r.send(""), true, nil
		}
		e.update(k)
	case "ctrl+d":
		if e.ta.Value() == "" {
			e.finish()
			return "", true, io.EOF
		}
		e.update(k)
	case "tab":
		line, pos := e.lineAndColumn()
		newLine, newPos := r.complete(line, pos)
		before, newBefore := line[:pos], newLine[:newPos]
		same := commonPrefixOf([]string{before, newBefore})
		for !utf8.ValidString(same) { // whole runes only
			same = same[:len(same)-1]
		}
		e.replaceBeforeCursor(len([]rune(before[len(same):])), newBefore[len(same):])
	case "ctrl+r":
		if st.history { // answers to questions have no history to search
			r.search = newRevSearch(r.hist, e.ta.Value())
		}
	case "ctrl+o":
		if st.history { // not while answering a question
			r.expandLast()
		}
	case "shift+tab":
		st.note = r.cycleMode()
		if st.history { // the prompt and the footer show the mode
			e.setPrompt(r.prompt())
			st.footer = r.idleFooter()
		}
	case "up":
		if !e.onFirstRow() || st.histIdx+1 >= r.hist.Len() {
			e.update(k)
			break
		}
		if st.histIdx < 0 {
			st.draft = e.ta.Value()
		}
		st.histIdx++
		e.setValue(r.fitEditor(r.hist.At(st.histIdx)))
		e.ta.MoveToBegin()
		e.ta.CursorEnd()
	case "down":
		if !e.onLastRow() || st.histIdx < 0 {
			e.update(k)
			break
		}
		st.histIdx--
		if st.histIdx < 0 {
			e.setValue(st.draft)
		} else {
			e.setValue(r.fitEditor(r.hist.At(st.histIdx)))
		}
	default:
		if k.Text != "" && k.Mod&^tea.ModShift == 0 {
			// Typed text: inserted directly, as the textarea would, without
			// its Update rendering every row once more.
			e.ta.InsertString(k.Text)
			break
		}
		e.update(k)
	}
	return "", false, nil
}

// send finishes the prompt: it stays on screen as sent (without the rows
// under it), the placeholders of long pastes become their text, and a
// prompt (not an answer) goes into the history.
func (r *REPL) send(value string) string {
	e := r.ed
	e.finish()
	e.ta.Reset()
	for ph, full := range r.pastes {
		value = strings.ReplaceAll(value, ph, full)
	}
	r.pastes = nil
	if r.es.history {
		r.hist.Add(value)
	}
	return value
}

// pasted is what the editor shows for a finished paste: the text itself,
// or a placeholder for a long one (the text replaces it when sent).
func (r *REPL) pasted(text string) string {
	if strings.Count(text, "\n")+1 < collapseLines && len(text) < collapseBytes && !strings.Contains(text, "\t") {
		return text
	}
	return r.placeholder(text)
}

// Text that enters the editor other than by typing (a history entry, a
// search match, a line typed during a turn) is held as it is up to these
// sizes; past them the editor would cut it (it holds 10,000 lines) or lag
// on every key, so it goes behind a placeholder like a long paste.
const (
	recallMaxLines = 500
	recallMaxBytes = 32 << 10
)

// fitEditor is text from elsewhere as the editor holds it: as it is, or a
// placeholder when the editor could not keep it whole (a tab would become
// spaces, a huge text would be cut) or edit it quickly.
func (r *REPL) fitEditor(text string) string {
	if strings.Count(text, "\n") < recallMaxLines && len(text) <= recallMaxBytes && !strings.Contains(text, "\t") {
		return text
	}
	return r.placeholder(text)
}

// placeholder registers text to be sent in place of the returned
// placeholder, which the editor shows.
func (r *REPL) placeholder(text string) string {
	if r.pastes == nil {
		r.pastes = map[string]string{}
	}
	ph := fmt.Sprintf("[Pasted text #%d +%d lines]", len(r.pastes)+1, strings.Count(text, "\n")+1)
	r.pastes[ph] = text
	return ph
}

// prefill hands the editor a prompt typed during a turn and not yet sent.
func (r *REPL) prefill(text string) {
	r.ed.ta.InsertString(r.fitEditor(text))
}
