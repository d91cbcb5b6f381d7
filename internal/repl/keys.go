package repl

import (
	"bytes"
	"io"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
)

// keys pumps the terminal's input from one goroutine, so that the line
// editor (between turns) and the turn's watcher (during a turn) read the
// same stream without two readers racing on stdin. Both decode it with one
// decoder, so a sequence or a paste cut by the end of a turn is finished by
// whichever reads next.
type keys struct {
	ch chan []byte

	mu  sync.Mutex
	dec decoder
	// rest is input decoded but not yet used: the keys after the Enter that
	// sent a prompt belong to the turn watcher (or the next prompt).
	rest []keyInput
}

func startKeys(in io.Reader) *keys {
	k := &keys{ch: make(chan []byte, 16)}
	go func() {
		defer close(k.ch)
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				k.ch <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return k
}

// decode turns one read into inputs, after any left over from before.
func (k *keys) decode(b []byte) []keyInput {
	k.mu.Lock()
	defer k.mu.Unlock()
	in := append(k.rest, k.dec.decode(b)...)
	k.rest = nil
	return in
}

// takeRest hands over the inputs left over from the last reader.
func (k *keys) takeRest() []keyInput {
	k.mu.Lock()
	defer k.mu.Unlock()
	in := k.rest
	k.rest = nil
	return in
}

// putBack keeps inputs the reader did not use for the next one.
func (k *keys) putBack(in []keyInput) {
	if len(in) == 0 {
		return
	}
	k.mu.Lock()
	k.rest = append(append([]keyInput(nil), in...), k.rest...)
	k.mu.Unlock()
}

// keyInput is one thing the terminal sent: a key press, or a whole
// bracketed paste (isPaste, with its text).
type keyInput struct {
	key     tea.KeyPressMsg
	paste   string
	isPaste bool
}

// Bracketed paste's end marker: the paste's bytes are taken as they are
// up to it (they are text, not keys).
const pasteEnd = "\x1b[201~"

// decoder turns the terminal's bytes into keys with ultraviolet's decoder
// (the one Bubble Tea uses): CSI u and modifyOtherKeys encodings, Alt as an
// Esc prefix, SS3 arrows and the legacy control bytes all come out as the
// same named keys ("shift+enter", "alt+enter", "ctrl+j", "shift+tab", …).
type decoder struct {
	uv      uv.EventDecoder
	carry   []byte // an escape sequence cut by the end of a read
	pasting bool
	paste   []byte
}

func (d *decoder) decode(b []byte) []keyInput {
	if len(d.carry) > 0 {
		b = append(d.carry, b...)
		d.carry = nil
	}
	var out []keyInput
	for len(b) > 0 {
		if d.pasting {
			d.paste = append(d.paste, b...)
			i := bytes.Index(d.paste, []byte(pasteEnd))
			if i < 0 {
				return out
			}
			b = append([]byte(nil), d.paste[i+len(pasteEnd):]...)
			out = append(out, keyInput{paste: pasteText(string(d.paste[:i])), isPaste: true})
			d.pasting, d.paste = false, nil
			continue
		}
		if unfinished(b) {
			d.carry = append([]byte(nil), b...)
			return out
		}
		n, ev := d.uv.Decode(b)
		if n <= 0 {
			break
		}
		b = b[n:]
		switch ev := ev.(type) {
		case uv.PasteStartEvent:
			d.pasting = true
		case uv.KeyPressEvent:
			out = append(out, keyInput{key: tea.KeyPressMsg(ev)})
		}
	}
	return out
}

// unfinished reports a CSI or SS3 sequence with its final byte still to
// come (a lone Esc is the Esc key: it is not held back).
func unfinished(b []byte) bool {
	if len(b) < 2 || b[0] != 0x1b {
		return false
	}
	switch b[1] {
	case 'O':
		return len(b) == 2
	case '[':
		for _, c := range b[2:] {
			if c >= 0x40 && c <= 0x7e {
				return false
			}
			if c < 0x20 || c > 0x3f { // neither a parameter nor an intermediate byte
				return false
			}
		}
		return true
	}
	return false
}

// pasteText is a paste with the terminal's line ends made "\n" and trailing
// line breaks dropped.
func pasteText(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.TrimRight(s, "\n")
}

// turnWatch consumes keys during a turn: Ctrl+C, and Esc when nothing is
// queued, cancel the turn; while a question is open (a permission prompt)
// a digit or Esc answers it, and everything else stays type-ahead (text
// typed on without seeing the question must not answer it: "please" once
// granted "permanently" by its p); Shift+Tab cycles the permission mode; other keys are typed
// ahead. A line ended with Enter is queued as the next prompt; /exit
// (/quit, /q) queued cancels the turn and ends the REPL; Esc clears what is
// queued; Ctrl+O switches verbose output; an unfinished line is handed to
// the editor when the turn ends.
type turnWatch struct {
	cancel   func()
	onQueue  func(q Queue) // the typed-ahead text changed (the footer shows it)
	shiftTab func()        // Shift+Tab: the next permission mode (nil: ignored)
	ctrlO    func()        // Ctrl+O: verbose output on or off (nil: ignored)
	answers  chan byte     // non-nil while a question waits
	mu       sync.Mutex
	q        Queue
	stop     chan struct{}
	done     chan struct{}
}

// Queue is what was typed during a turn.
type Queue struct {
	Prompts []string // lines ended with Enter, to run in order
	Partial string   // the line being typed
	Exit    bool     // /exit was typed: leave once the turn has stopped
}

func (q Queue) empty() bool { return len(q.Prompts) == 0 && q.Partial == "" }

// Text is the queue as one line for the footer.
func (q Queue) Text() string {
	parts := append([]string(nil), q.Prompts...)
	if q.Partial != "" {
		parts = append(parts, q.Partial+"▏")
	}
	return strings.Join(parts, " ⏎ ")
}

// watchTurn starts watching keys for a turn; start is what is already
// queued (left from the turn before), shown and editable as if typed now.
func (k *keys) watchTurn(start Queue, cancel func(), onQueue func(Queue), shiftTab, ctrlO func()) *turnWatch {
	w := &turnWatch{q: start, cancel: cancel, onQueue: onQueue, shiftTab: shiftTab, ctrlO: ctrlO, stop: make(chan struct{}), done: make(chan struct{})}
	if !start.empty() && onQueue != nil {
		onQueue(w.Queue())
	}
	go func() {
		defer close(w.done)
		if rest := k.takeRest(); len(rest) > 0 { // typed right after the Enter that sent the prompt
			w.feed(rest)
		}
		for {
			select {
			case <-w.stop:
				return
			case b, ok := <-k.ch:
				if !ok {
					w.cancel()
					return
				}
				w.feed(k.decode(b))
			}
		}
	}()
	return w
}

// feed handles decoded keys.
func (w *turnWatch) feed(in []keyInput) {
	changed := false
	for _, ki := range in {
		w.mu.Lock()
		ans := w.answers
		w.mu.Unlock()
		k := ki.key
		switch {
		case !ki.isPaste && k.String() == "ctrl+c":
			w.cancel()
			continue
		case ans != nil && !ki.isPaste && answerKey(k) != 0: // a question is open: its answer
			select {
			case ans <- answerKey(k):
			default:
			}
			continue
		case !ki.isPaste && k.String() == "shift+tab":
			if w.shiftTab != nil {
				w.shiftTab()
			}
			continue
		case !ki.isPaste && k.String() == "ctrl+o":
			if w.ctrlO != nil {
				w.ctrlO()
			}
			continue
		}
		if w.edit(ki) {
			changed = true
		}
	}
	if changed && w.onQueue != nil {
		w.onQueue(w.Queue())
	}
}

// answerKey is the byte a key gives a question: a digit, or Esc (deny);
// 0 for any other key.
func answerKey(k tea.KeyPressMsg) byte {
	switch {
	case k.Code == tea.KeyEscape && k.Mod == 0:
		return 0x1b
	case k.Mod == 0 && len(k.Text) == 1 && k.Text[0] >= '0' && k.Text[0] <= '9':
		return k.Text[0]
	}
	return 0
}

// edit applies one key to the queue; it reports whether the queue changed.
func (w *turnWatch) edit(ki keyInput) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ki.isPaste {
		w.q.Partial += ki.paste
		return true
	}
	k := ki.key
	switch k.String() {
	case "esc":
		empty := w.q.empty()
		w.q.Prompts, w.q.Partial = nil, ""
		if empty {
			w.mu.Unlock()
			w.cancel()
			w.mu.Lock()
		}
		return !empty
	case "shift+enter", "alt+enter", "ctrl+j":
		w.q.Partial += "\n"
	case "enter":
		line := w.q.Partial
		w.q.Partial = ""
		switch {
		case strings.TrimSpace(line) == "":
			return line != ""
		case isExit(line):
			w.q.Exit = true
			w.mu.Unlock()
			w.cancel()
			w.mu.Lock()
		default:
			w.q.Prompts = append(w.q.Prompts, line)
		}
	case "backspace", "ctrl+h":
		r := []rune(w.q.Partial)
		if len(r) == 0 {
			return false
		}
		w.q.Partial = string(r[:len(r)-1])
	case "ctrl+u":
		w.q.Partial = ""
	default:
		if k.Text == "" {
			return false // other keys mean nothing here
		}
		w.q.Partial += k.Text
	}
	return true
}

// isExit reports a line that asks to leave.
func isExit(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "/exit", "/quit", "/q":
		return true
	}
	return false
}

// Queue is what has been typed so far.
func (w *turnWatch) Queue() Queue {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.q
	q.Prompts = append([]string(nil), q.Prompts...)
	return q
}

// ask opens the answer channel for one question.
func (w *turnWatch) ask() chan byte {
	ch := make(chan byte, 8)
	w.mu.Lock()
	w.answers = ch
	w.mu.Unlock()
	return ch
}

func (w *turnWatch) endAsk() {
	w.mu.Lock()
	w.answers = nil
	w.mu.Unlock()
}

func (w *turnWatch) Stop() {
	close(w.stop)
	<-w.done
}
