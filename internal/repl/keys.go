package repl

import (
	"bytes"
	"io"
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

	mu        sync.Mutex
	lastCtrlC time.Time
	onCtrlC   func(exiting bool) // shows a hint; called outside the editor's lock
	done      <-chan struct{}    // ends a wait for keys (the REPL's context)
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

func (e *editorInput) translate(b []byte) []byte {
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

// turnWatch consumes keys during a turn: Ctrl+C cancels the turn; while a
// question is open (a permission prompt) keys go to it; other keys are
// dropped (no type-ahead into the next prompt).
type turnWatch struct {
	cancel  func()
	answers chan byte // non-nil while a question waits
	mu      sync.Mutex
	stop    chan struct{}
	done    chan struct{}
}

func (k *keys) watchTurn(cancel func()) *turnWatch {
	w := &turnWatch{cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
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
				for _, c := range b {
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
					}
				}
			}
		}
	}()
	return w
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
