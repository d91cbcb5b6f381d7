package shell

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// stream keeps what one of the shell's output pipes delivers while a
// command is active. The pipes are read continuously (see pump), so a
// chatty background job never blocks on a full pipe.
type stream struct {
	f  *os.File
	fd int // f's descriptor, read by the pump

	mu     sync.Mutex
	buf    []byte
	active bool
	// wake, while active, is the marker that ends what the command's loop
	// waits for (stdout's; stderr has none, see pump.drainErr): the loop is
	// woken when it arrived, at the end of a stream, or when notifyAt
	// bytes wait, and not for every piece in between (each wake is a
	// goroutine handoff: issue 30).
	wake   []byte
	eager  bool   // wake the loop after every read (a front end shows the output as it comes)
	seen   bool   // wake arrived since the stream became active
	sealed bool   // stderr: read to its end after stdout's marker arrived
	tail   []byte // the last bytes read, where a marker may have begun
	eof    bool
	// stray receives what arrives while no command is active: the output of
	// a command moved to the background (nil: dropped, as from `cmd &`).
	stray func([]byte)
}

// drainReads bounds drainErr's reads (of the pump's 64 KiB buffer).
const drainReads = 16

// notifyAt is how many bytes may wait for the command's loop before it is
// woken anyway, so a large output is capped (or spilled) as it arrives
// instead of piling up here.
const notifyAt = 64 << 10

// add keeps b, just read (end: the pipe ended or failed), and reports
// whether the command's loop needs it now (urgent) and whether the
// stream's wake marker has just arrived.
func (s *stream) add(b []byte, end bool) (urgent, marker bool) {
	s.mu.Lock()
	var stray func([]byte)
	switch {
	case len(b) > 0 && s.active:
		s.buf = append(s.buf, b...)
		urgent = s.eager || len(s.buf) >= notifyAt
		if s.wake != nil && !s.seen {
			// A marker may have begun in an earlier read, which the loop
			// may have taken from buf: the tail keeps those last bytes.
			k := len(s.wake) - 1
			joint := append(s.tail, b[:min(k, len(b))]...)
			s.seen = bytes.Contains(joint, s.wake) || bytes.Contains(b, s.wake)
			marker = s.seen
			s.tail = keepTail(append(s.tail, b[max(0, len(b)-k):]...), k)
		}
	case len(b) > 0:
		stray = s.stray
	}
	if end {
		s.eof, urgent = true, true
	}
	s.mu.Unlock()
	if stray != nil {
		stray(b) // the sink copies what it keeps
	}
	return urgent, marker
}

// setActive starts (with the marker to wake on, see stream.wake, and
// whether to wake after every read) or stops keeping data; either way the
// buffer is emptied.
func (s *stream) setActive(on bool, wake []byte, eager bool) {
	s.mu.Lock()
	s.active, s.buf, s.wake, s.eager, s.seen, s.sealed, s.tail = on, nil, wake, eager, false, false, nil
	s.mu.Unlock()
}

// seal marks the stream read to its end for the active command.
func (s *stream) seal() {
	s.mu.Lock()
	s.sealed = true
	s.mu.Unlock()
}

// isSealed reports whether seal was called since activation: what buf
// holds then is all the command wrote.
func (s *stream) isSealed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sealed
}

// ended reports whether the pipe ended.
func (s *stream) ended() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eof
}

func (s *stream) setStray(fn func([]byte)) {
	s.mu.Lock()
	s.stray = fn
	s.mu.Unlock()
}

func (s *stream) take() ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buf
	s.buf = nil
	return b, s.eof
}

// pump reads the shell's stdout and stderr in one goroutine (instead of a
// goroutine per pipe, each waking the command's loop: issue 30), which
// signals the loop on notify only when it has news (see stream.wake).
type pump struct {
	out, err *stream
	notify   chan struct{}
	stopR    *os.File // readable (at EOF) once stopW is closed
	stopW    *os.File
	done     chan struct{} // closed when the pump has returned
}

// newPump starts reading out and err; stop must be called to release them.
func newPump(out, err *os.File) (*pump, error) {
	so, se := &stream{f: out}, &stream{f: err}
	var ferr error
	so.fd, ferr = fdOf(out)
	if ferr == nil {
		se.fd, ferr = fdOf(err)
	}
	if ferr != nil {
		return nil, ferr
	}
	stopR, stopW, ferr := os.Pipe()
	if ferr != nil {
		return nil, fmt.Errorf("creating the reader's stop pipe: %w", ferr)
	}
	pu := &pump{out: so, err: se, notify: make(chan struct{}, 1), stopR: stopR, stopW: stopW, done: make(chan struct{})}
	stopFd, ferr := fdOf(stopR)
	if ferr == nil {
		ferr = pu.start(stopFd)
	}
	if ferr != nil {
		closeAll(stopR, stopW)
		return nil, ferr
	}
	return pu, nil
}

// fdOf is f's descriptor, without os.File.Fd's switch to blocking mode.
func fdOf(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, fmt.Errorf("reading the shell's pipes: %w", err)
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil {
		return -1, fmt.Errorf("reading the shell's pipes: %w", err)
	}
	return fd, nil
}

// readOne reads what waits on fd (one of the streams' descriptors) into b
// and keeps it. It reports how many bytes it read, whether the pipe ended,
// and whether the command's loop has news (urgent, or an end marker).
func (pu *pump) readOne(fd int, b []byte) (n int, end, urgent, marker bool) {
	s := pu.out
	if fd == pu.err.fd {
		s = pu.err
	}
	n, err := readNB(fd, b)
	for errors.Is(err, unix.EINTR) {
		n, err = readNB(fd, b)
	}
	if errors.Is(err, unix.EAGAIN) {
		return 0, false, false, false // it was read already
	}
	n = max(n, 0)
	end = err != nil || n == 0
	urgent, marker = s.add(b[:n], end)
	return n, end, urgent, marker
}

// tell signals the loop when it has news: urgent, or stdout's marker in
// (and stderr drained).
func (pu *pump) tell(urgent, marker bool) {
	if urgent || marker {
		pu.signal()
	}
}

// drainErr reads stderr to its current end once stdout's marker arrived,
// and seals it. The shell writes that marker after the command ended, so
// everything the command wrote to stderr is in the pipe by then: stderr
// needs no end marker of its own, which saves the shell a redirection and
// a write per command and the loop a wake (issue 30). It reports whether
// stderr ended.
func (pu *pump) drainErr(b []byte) (ended bool) {
	if !pu.err.ended() {
		// What the command wrote is at most what the pipe holds (1 MiB at
		// the most unless root raised the bound); more is a background job
		// writing still, which must not keep the command from ending.
		for range drainReads {
			n, end, _, _ := pu.readOne(pu.err.fd, b)
			if end {
				ended = true
				break
			}
			if n < len(b) { // the pipe is empty (or was: EAGAIN)
				break
			}
		}
	}
	pu.err.seal()
	return ended
}

// finish marks both streams ended: whatever ended the pump, nothing more
// will arrive.
func (pu *pump) finish() {
	pu.out.add(nil, true)
	pu.err.add(nil, true)
	pu.signal()
}

func (pu *pump) signal() {
	select {
	case pu.notify <- struct{}{}:
	default:
	}
}

// stop ends the pump, waits for it, and closes the pipes. A background job
// may hold the pipes open forever, so stopping does not wait for their end.
func (pu *pump) stop() {
	_ = pu.stopW.Close()
	<-pu.done
	closeAll(pu.out.f, pu.err.f, pu.stopR)
}
