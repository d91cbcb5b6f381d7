package repl

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
)

// keys pumps the terminal's input from one goroutine, so that the line
// editor (between turns) and the turn's Ctrl+C watcher (during a turn) read
// the same stream without two readers racing on stdin.
type keys struct {
	ch chan []byte
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

const (
	keyCtrlC = 0x03
	keyCtrlD = 0x04
)

// editorInput is the line editor's view of the keys. It turns Ctrl+C into
// "clear the line" (Ctrl+E Ctrl+U for x/term's editor) and a second Ctrl+C
// within exitWindow into Ctrl+D on the now empty line, which ends input.
type editorInput struct {
	k       *keys
	pending []byte
	now     func() time.Time

	mu         sync.Mutex
	lastCtrlC  time.Time
	onCtrlC    func(exiting bool) // shows a hint; called outside the editor's lock
	onShiftTab func()             // cycles the permission mode; outside the editor's lock
	onEnter    func()             // before Enter reaches the editor (the prompt is still drawn)
	done       <-chan struct{}    // ends a wait for keys (the REPL's context)

	// onPaste turns a finished bracketed paste into the keys to type (the
	// text on one line, or a placeholder for a long one).
	onPaste  func(text string) []byte
	pasting  bool
	pasteBuf []byte
}

// prefill hands keys to the editor as if typed (a line typed during a
// turn and not yet sent).
func (e *editorInput) prefill(b []byte) {
	e.pending = append(append([]byte(nil), b...), e.pending...)
}

func (e *editorInput) setDone(done <-chan struct{}) {
	e.mu.Lock()
	e.done = done
	e.mu.Unlock()
}

const exitWindow = 2 * time.Second

func (e *editorInput) Read(p []byte) (int, error) {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	for len(e.pending) == 0 {
		select {
		case b, ok := <-e.k.ch:
			if !ok {
				return 0, io.EOF
			}
			e.pending = e.translate(b)
		case <-done:
			return 0, io.EOF
		}
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

// shiftTab is the key's sequence (back-tab).
var shiftTab = []byte("\x1b[Z")

// Bracketed paste markers, and the keys that insert a newline into the
// prompt instead of sending it: Alt+Enter, Ctrl+J, Shift+Enter (as
// terminals with CSI-u or modifyOtherKeys send it).
var (
	pasteStart   = []byte("\x1b[200~")
	pasteEnd     = []byte("\x1b[201~")
	newlineKeys  = [][]byte{[]byte("\x1b[13;2u"), []byte("\x1b[27;2;13~"), []byte("\x1b\r"), []byte("\n")}
	newlineBytes = []byte(newlineMark)
)

// newlineMark stands for a line break inside the one-line editor; it is
// turned back into "\n" when the prompt is sent.
const newlineMark = "⏎"

// translate turns the terminal's keys into the editor's: pastes are
// collected whole (across reads) and handed to onPaste, newline keys
// become newlineMark, Shift+Tab and Ctrl+C are acted on.
func (e *editorInput) translate(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		if e.pasting {
			e.pasteBuf = append(e.pasteBuf, b...)
			i := bytes.Index(e.pasteBuf, pasteEnd)
			if i < 0 {
				return out
			}
			rest := append([]byte(nil), e.pasteBuf[i+len(pasteEnd):]...)
			text := string(e.pasteBuf[:i])
			e.pasting, e.pasteBuf = false, nil
			if e.onPaste != nil {
				out = append(out, e.onPaste(text)...)
			} else {
				out = append(append(append(out, pasteStart...), text...), pasteEnd...)
			}
			b = rest
			continue
		}
		i := bytes.Index(b, pasteStart)
		if i < 0 {
			return append(out, e.keys(b)...)
		}
		out = append(out, e.keys(b[:i])...)
		e.pasting = true
		b = b[i+len(pasteStart):]
	}
	return out
}

// keys translates typed (not pasted) keys.
func (e *editorInput) keys(b []byte) []byte {
	for _, k := range newlineKeys {
		b = bytes.ReplaceAll(b, k, newlineBytes)
	}
	for n := bytes.Count(b, shiftTab); n > 0; n-- {
		b = bytes.Replace(b, shiftTab, nil, 1)
		if e.onShiftTab != nil {
			e.onShiftTab()
		}
	}
	if e.onEnter != nil && bytes.IndexByte(b, '\r') >= 0 {
		e.onEnter()
	}
	if bytes.IndexByte(b, keyCtrlC) < 0 {
		return b
	}
	var out []byte
	for _, c := range b {
		if c != keyCtrlC {
			out = append(out, c)
			continue
		}
		e.mu.Lock()
		now := e.now()
		exiting := !e.lastCtrlC.IsZero() && now.Sub(e.lastCtrlC) < exitWindow
		e.lastCtrlC = now
		e.mu.Unlock()
		out = append(out, 0x05, 0x15) // end of line, kill to start
		if exiting {
			out = append(out, keyCtrlD)
		}
		if e.onCtrlC != nil {
			e.onCtrlC(exiting)
		}
	}
	return out
}

// turnWatch consumes keys during a turn: Ctrl+C, and Esc when nothing is
// queued, cancel the turn; while a question is open (a permission prompt)
// keys go to it; other keys are typed ahead. A line ended with Enter is
// queued as the next prompt; /exit (/quit, /q) queued cancels the turn and
// ends the REPL; Esc clears what is queued; an unfinished line is handed
// to the editor when the turn ends.
type turnWatch struct {
	cancel  func()
	onQueue func(q Queue) // the typed-ahead text changed (the footer shows it)
	answers chan byte     // non-nil while a question waits
	mu      sync.Mutex
	q       Queue
	paste   bool // inside a bracketed paste: Enter is a newline
	stop    chan struct{}
	done    chan struct{}
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

func (k *keys) watchTurn(cancel func(), onQueue func(Queue)) *turnWatch {
	w := &turnWatch{cancel: cancel, onQueue: onQueue, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			case b, ok := <-k.ch:
				if !ok {
					w.cancel()
					return
				}
				w.feed(b)
			}
		}
	}()
	return w
}

const keyEsc = 0x1b

// feed handles one read's worth of keys.
func (w *turnWatch) feed(b []byte) {
	changed := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == keyCtrlC {
			w.cancel()
			continue
		}
		w.mu.Lock()
		ans := w.answers
		w.mu.Unlock()
		if ans != nil {
			select {
			case ans <- c:
			default:
			}
			continue
		}
		if c == keyEsc {
			n, seq := escapeSequence(b[i:])
			i += n - 1
			switch {
			case seq == "\x1b[200~":
				w.paste = true
			case seq == "\x1b[201~":
				w.paste = false
			case seq == "\x1b\r" || seq == "\x1b\n": // Alt+Enter
				w.mu.Lock()
				w.q.Partial += "\n"
				w.mu.Unlock()
				changed = true
			case n == 1: // a lone Esc
				w.mu.Lock()
				empty := w.q.empty()
				w.q.Prompts, w.q.Partial = nil, ""
				w.mu.Unlock()
				if empty {
					w.cancel()
				}
				changed = !empty
			}
			continue
		}
		w.mu.Lock()
		switch {
		case c == '\r' || c == '\n':
			if w.paste {
				w.q.Partial += "\n"
				break
			}
			line := w.q.Partial
			w.q.Partial = ""
			if strings.TrimSpace(line) == "" {
				break
			}
			if isExit(line) {
				w.q.Exit = true
				w.mu.Unlock()
				w.cancel()
				w.mu.Lock()
				break
			}
			w.q.Prompts = append(w.q.Prompts, line)
		case c == 0x7f || c == 0x08: // Backspace
			if r := []rune(w.q.Partial); len(r) > 0 {
				w.q.Partial = string(r[:len(r)-1])
			}
		case c == 0x15: // Ctrl+U
			w.q.Partial = ""
		case c == '\t' || c >= 0x20:
			w.q.Partial += string(c)
		default:
			w.mu.Unlock()
			continue // other control keys mean nothing here
		}
		w.mu.Unlock()
		changed = true
	}
	if changed && w.onQueue != nil {
		w.onQueue(w.Queue())
	}
}

// escapeSequence measures the escape sequence at the start of b (which
// starts with Esc): CSI and SS3 sequences whole, Esc plus one key (Alt+key),
// or a lone Esc (n == 1, the key itself).
func escapeSequence(b []byte) (n int, seq string) {
	if len(b) < 2 {
		return 1, "\x1b"
	}
	switch b[1] {
	case '[':
		for j := 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j + 1, string(b[:j+1])
			}
		}
		return len(b), string(b)
	case 'O':
		return min(3, len(b)), string(b[:min(3, len(b))])
	case keyEsc:
		return 1, "\x1b"
	}
	return 2, string(b[:2])
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
