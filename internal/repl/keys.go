package repl

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
)

// keys pumps the terminal's input from one goroutine, so that the line
// editor (between turns) and the turn's watcher (during a turn) read the
// same stream without two readers racing on stdin. Both decode it with one
// decoder, so a sequence or a paste cut by the end of a turn is finished by
// whichever reads next.
type keys struct {
	// ch carries the reads; an empty one means escDelay passed after a
	// read that may have ended inside a key, with nothing more: the
	// decoder then takes what it holds back as it is (see decode).
	ch chan []byte
	// escDelay is how long to wait for the rest of an escape sequence a
	// read may have cut (a lone Esc, "Esc [") before taking it as it is:
	// the Esc key, Alt+[. ncurses' ESCDELAY and vim's ttimeoutlen do the
	// same. Set before start.
	escDelay time.Duration

	mu  sync.Mutex
	dec decoder
	// rest is input decoded but not yet used: the keys after the Enter that
	// sent a prompt belong to the turn watcher (or the next prompt).
	rest []keyInput
}

// escDelay is long enough for the rest of a sequence a terminal wrote at
// once (even over ssh it comes in the same packet or right after) and short
// enough not to be felt on an Esc press.
const escDelay = 50 * time.Millisecond

func startKeys(in io.Reader) *keys {
	k := &keys{escDelay: escDelay}
	k.start(in)
	return k
}

// start reads in on one goroutine (it blocks in Read, so it cannot also
// watch a clock) and hands the reads on through pump on another. Both end
// when in does.
func (k *keys) start(in io.Reader) {
	k.ch = make(chan []byte, 16)
	reads := make(chan []byte, 16)
	go func() {
		defer close(reads)
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				reads <- append([]byte(nil), buf[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	go k.pump(reads)
}

// pump passes reads on to ch. After a read that may end inside a key it
// waits escDelay for the next; when none comes it sends an empty read so
// that the decoder lets go of what it holds (the Esc key rather than the
// start of a sequence). At the end of input it does the same, then closes
// ch.
func (k *keys) pump(reads <-chan []byte) {
	defer close(k.ch)
	var held []byte // the input's end that may be the start of a key
	var wait <-chan time.Time
	got := func(b []byte, ok bool) bool {
		if !ok {
			if held != nil {
				k.ch <- []byte{}
			}
			return false
		}
		k.ch <- b
		held, wait = heldBack(append(held, b...)), nil
		if held != nil {
			wait = time.After(k.escDelay)
		}
		return true
	}
	for {
		select {
		case b, ok := <-reads:
			if !got(b, ok) {
				return
			}
		case <-wait:
			select {
			case b, ok := <-reads: // came as the delay ran out: still in time
				if !got(b, ok) {
					return
				}
			default:
				k.ch <- []byte{}
				held, wait = nil, nil
			}
		}
	}
}

// heldBack is the end of the input (b: what was held back before and the
// latest read) that the decoder may be holding back until the delay
// passes, nil when none: an unfinished escape sequence from the last Esc.
// (A cut character is not on a clock; see cutRune.) It may say so when the
// decoder holds nothing (inside a paste); then the empty read does nothing.
func heldBack(b []byte) []byte {
	if i := bytes.LastIndexByte(b, 0x1b); i >= 0 && cutEscape(b[i:]) {
		return b[i:]
	}
	return nil
}

// decode turns one read into inputs, after any left over from before; an
// empty read (the pump's: the delay passed) lets go of a key held back.
func (k *keys) decode(b []byte) []keyInput {
	k.mu.Lock()
	defer k.mu.Unlock()
	var got []keyInput
	if len(b) == 0 {
		got = k.dec.flush()
	} else {
		got = k.dec.decode(b)
	}
	in := append(k.rest, got...)
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
	carry   []byte // the start of a key cut by the end of a read (see unfinished)
	pasting bool
	paste   []byte
}

// decode turns one read into keys. The start of a key the read may have
// cut is held back for the next read, or for flush.
func (d *decoder) decode(b []byte) []keyInput {
	if len(d.carry) > 0 {
		b = append(d.carry, b...)
		d.carry = nil
	}
	return d.run(b, false)
}

// flush takes what is held back as it is: no more came within the delay,
// so a lone Esc is the Esc key, "Esc [" is Alt+[, "Esc O" is Alt+Shift+O.
// A cut character is kept: its rest is on its way, however late.
func (d *decoder) flush() []keyInput {
	if cutRune(d.carry) {
		return nil
	}
	b := d.carry
	d.carry = nil
	return d.run(b, true)
}

// run decodes b; unless final, an unfinished key at its end is carried.
func (d *decoder) run(b []byte, final bool) []keyInput {
	var out []keyInput
	for len(b) > 0 {
		if d.pasting {
			from := max(0, len(d.paste)-len(pasteEnd)+1) // the end marker may have been cut
			d.paste = append(d.paste, b...)
			i := bytes.Index(d.paste[from:], []byte(pasteEnd))
			if i < 0 {
				return out
			}
			i += from
			b = append([]byte(nil), d.paste[i+len(pasteEnd):]...)
			out = append(out, keyInput{paste: pasteText(string(d.paste[:i])), isPaste: true})
			d.pasting, d.paste = false, nil
			continue
		}
		if !final && unfinished(b) {
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

// unfinished reports input (from a key's start to the end of a read) that
// may be cut: the decoder holds it back for the next read.
func unfinished(b []byte) bool { return cutRune(b) || cutEscape(b) }

// cutRune reports part of a UTF-8 character, alone or after an Esc (Alt
// and the character). A terminal writes a character whole, only a read
// cuts it, so the rest is waited for without a delay: taken as it is it
// would be dropped as invalid (under load reads of a long paste can come
// more than the delay apart). A stray byte that is not followed by the
// rest is dropped with the next key.
func cutRune(b []byte) bool {
	if len(b) > 0 && b[0] == 0x1b {
		b = b[1:]
	}
	return len(b) > 0 && !utf8.FullRune(b) // an invalid byte is "full": decoded (and dropped) at once
}

// cutEscape reports a lone Esc, Esc O, or a CSI sequence with its final
// byte still to come: the Esc key, Alt+Shift+O or Alt+[ (and what follows)
// or the start of a sequence; the pump's delay tells.
func cutEscape(b []byte) bool {
	if len(b) == 0 || b[0] != 0x1b {
		return false
	}
	if len(b) == 1 {
		return true
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
	ctrlB    func()        // Ctrl+B: the running command to the background (nil: ignored; guarded by mu)
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

// setCtrlB sets what Ctrl+B does during the turn.
func (w *turnWatch) setCtrlB(fn func()) {
	w.mu.Lock()
	w.ctrlB = fn
	w.mu.Unlock()
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
		case ans != nil && !ki.isPaste && w.answerOf(k) != 0: // a question is open: its answer
			select {
			case ans <- w.answerOf(k):
			default: // an answer is already waiting
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
		case !ki.isPaste && k.String() == "ctrl+b":
			w.mu.Lock()
			fn := w.ctrlB
			w.mu.Unlock()
			if fn != nil {
				go fn() // it waits for the shell; keys go on meanwhile
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

// answerOf is the byte k gives the open question, 0 when k is type-ahead:
// a digit; Esc (deny) unless text is queued, which Esc clears first (a
// digit typed just before the question opened was queued, and the Esc
// that clears it must not deny); Enter (the default) when nothing is
// being typed, since an Enter that ends typed text queues that line.
func (w *turnWatch) answerOf(k tea.KeyPressMsg) byte {
	w.mu.Lock()
	empty, partial := w.q.empty(), w.q.Partial
	w.mu.Unlock()
	switch {
	case k.Code == tea.KeyEscape && k.Mod == 0 && !empty:
		return 0
	case k.Code == tea.KeyEnter && k.Mod == 0 && partial == "":
		return '\r'
	}
	return answerKey(k)
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
	w.setAnswers(ch)
	return ch
}

func (w *turnWatch) endAsk() { w.setAnswers(nil) }

// setAnswers opens or closes the question; what is queued is shown again,
// since Esc now answers the question or clears the queue again.
func (w *turnWatch) setAnswers(ch chan byte) {
	w.mu.Lock()
	w.answers = ch
	queued := !w.q.empty()
	w.mu.Unlock()
	if queued && w.onQueue != nil {
		w.onQueue(w.Queue())
	}
}

func (w *turnWatch) Stop() {
	close(w.stop)
	<-w.done
}

// keyPipe hands the terminal's input on raw, as read (bash mode's command
// reads it), until closed.
type keyPipe struct {
	k    *keys
	buf  []byte
	stop chan struct{}
	once sync.Once
}

// forward passes what is typed on raw until the returned pipe is closed.
// Keys typed ahead (after the Enter that ran the command) come first, as
// the bytes a terminal sends for them.
func (k *keys) forward() io.ReadCloser {
	var b []byte
	for _, ki := range k.takeRest() {
		b = append(b, keyBytes(ki)...)
	}
	return &keyPipe{k: k, buf: b, stop: make(chan struct{})}
}

// keyBytes is what a terminal sends for a decoded key (the common ones;
// others are dropped).
func keyBytes(ki keyInput) string {
	if ki.isPaste {
		return ki.paste
	}
	switch ki.key.String() {
	case "enter":
		return "\r"
	case "tab":
		return "\t"
	case "backspace":
		return "\x7f"
	case "esc":
		return "\x1b"
	case "ctrl+c":
		return "\x03"
	case "ctrl+d":
		return "\x04"
	}
	if typedText(ki.key) {
		return ki.key.Text
	}
	return ""
}

func (p *keyPipe) Read(b []byte) (int, error) {
	for len(p.buf) == 0 {
		select {
		case <-p.stop:
			return 0, io.EOF
		case c, ok := <-p.k.ch:
			if !ok {
				return 0, io.EOF
			}
			p.buf = c // an empty read (the Esc timer) is skipped
		}
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

func (p *keyPipe) Close() error {
	p.once.Do(func() { close(p.stop) })
	return nil
}
