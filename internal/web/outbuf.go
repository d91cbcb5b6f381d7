package web

import (
	"context"
	"errors"
	"sync"
	"time"
)

// outBuf holds a session's recent terminal output in a fixed-size ring and is
// the only place output is buffered. It does two jobs at once:
//
//   - replay: a client that (re)attaches starts at the oldest byte still in the
//     ring, so it sees recent output;
//   - flow control: the writer (the PTY pump) never overwrites bytes the
//     attached client has not been sent yet, and the client is never sent more
//     than `window` bytes it has not acknowledged. A slow client therefore
//     stalls the PTY (and so the program writing to it) instead of growing
//     memory: the ring is all the memory there is.
//
// Offsets are absolute byte counts since the session started.
type outBuf struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	ring    []byte
	total   int64 // bytes ever written
	closed  bool  // no more output will come
	window  int64
	reader  *cursor // the attached client, nil when none
}

// cursor is one attached client's position in the stream.
type cursor struct {
	sent  int64 // next offset to send
	acked int64 // bytes the client has confirmed processing

	// sendMu is held from claiming bytes (advancing sent) until they are
	// handed to the client, so that sends leave in stream order.
	sendMu sync.Mutex
	// direct sends small output straight from the writer (the PTY pump)
	// when the client is caught up: a keystroke's echo then skips the hop
	// through the connection's goroutine. nil: only Send sends.
	direct func([]byte) error
}

// directMax is the largest write sent directly; bigger ones (floods) go
// through the connection's goroutine, which keeps reading and sending in
// parallel.
const directMax = 4 << 10

var errDetached = errors.New("client detached: another client attached to this session")

func newOutBuf(size, window int) *outBuf {
	if window > size {
		window = size
	}
	return &outBuf{ring: make([]byte, size), window: int64(window), changed: make(chan struct{})}
}

// notifyLocked wakes every waiter; b.mu must be held.
func (b *outBuf) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Write appends p, waiting while the attached client has not yet been sent
// the bytes that would be overwritten. It returns ctx's error if ctx ends first.
// A small p for a caught-up client with a direct sender is sent from here.
func (b *outBuf) Write(ctx context.Context, p []byte) error {
	if b.writeDirect(p) {
		return nil
	}
	size := int64(len(b.ring))
	for len(p) > 0 {
		b.mu.Lock()
		free := size
		if b.reader != nil {
			free = size - (b.total - b.reader.sent)
		}
		if free <= 0 {
			ch := b.changed
			b.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		n := int64(len(p))
		if n > free {
			n = free
		}
		b.appendLocked(p[:n])
		p = p[n:]
		b.notifyLocked()
		b.mu.Unlock()
	}
	return nil
}

// writeDirect appends p and sends it through the attached client's direct
// sender, when that client has been sent everything before p, has window
// room for p and no send is under way. It reports whether it did.
func (b *outBuf) writeDirect(p []byte) bool {
	if len(p) == 0 || len(p) > directMax || len(p) > len(b.ring) {
		return false
	}
	b.mu.Lock()
	c := b.reader
	if c == nil || c.direct == nil || c.sent != b.total || b.window-(c.sent-c.acked) < int64(len(p)) || !c.sendMu.TryLock() {
		b.mu.Unlock()
		return false
	}
	b.appendLocked(p)
	c.sent = b.total
	// No wake-up: the client's goroutine has nothing new to send.
	b.mu.Unlock()
	// A failed send ends the connection; a reconnect replays from the ring.
	_ = c.direct(p)
	c.sendMu.Unlock()
	return true
}

// appendLocked copies p into the ring after the last byte; b.mu must be held
// and p must fit in the ring.
func (b *outBuf) appendLocked(p []byte) {
	size := int64(len(b.ring))
	for i := 0; i < len(p); {
		at := (b.total + int64(i)) % size
		i += copy(b.ring[at:], p[i:])
	}
	b.total += int64(len(p))
}

// SetDirect gives client c a direct sender (see cursor.direct).
func (b *outBuf) SetDirect(c *cursor, send func([]byte) error) {
	b.mu.Lock()
	c.direct = send
	b.mu.Unlock()
}

// Close marks the end of output; readers drain what is left and then see io.EOF-like done.
func (b *outBuf) Close() {
	b.mu.Lock()
	b.closed = true
	b.notifyLocked()
	b.mu.Unlock()
}

// Attach makes c the attached client, starting at the oldest byte in the ring
// (the replay), and detaches any previous one.
func (b *outBuf) Attach() *cursor {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := b.total - int64(len(b.ring))
	if start < 0 {
		start = 0
	}
	c := &cursor{sent: start, acked: start}
	b.reader = c
	b.notifyLocked()
	return c
}

// Detach removes c if it is still the attached client.
func (b *outBuf) Detach(c *cursor) {
	b.mu.Lock()
	if b.reader == c {
		b.reader = nil
		b.notifyLocked()
	}
	b.mu.Unlock()
}

// Ack records that the client processed n more bytes.
func (b *outBuf) Ack(c *cursor, n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	// A client cannot confirm bytes it was never sent. Compare before
	// adding: acked+n overflows for an absurd n and would empty the window.
	c.acked += min(n, c.sent-c.acked)
	b.notifyLocked()
	b.mu.Unlock()
}

// readResult says why Next returned.
type readResult int

const (
	readData    readResult = iota // dst holds bytes to send
	readEOF                       // output ended and everything was sent
	readStalled                   // the window is full: the client is not acknowledging
)

// Send claims up to len(dst) unsent bytes for c (waiting until there are
// some) and passes them to send(dst[:n]), with no direct send able to
// overtake those bytes in between.
func (b *outBuf) Send(ctx context.Context, c *cursor, dst []byte, stallAfter time.Duration, send func([]byte) error) (readResult, error) {
	n, res, err := b.claim(ctx, c, dst, stallAfter)
	if res != readData || err != nil {
		return res, err
	}
	defer c.sendMu.Unlock()
	return res, send(dst[:n])
}

// claim is Next, returning with c.sendMu held when it returns data.
func (b *outBuf) claim(ctx context.Context, c *cursor, dst []byte, stallAfter time.Duration) (int, readResult, error) {
	size := int64(len(b.ring))
	var stalled <-chan time.Time
	for {
		b.mu.Lock()
		if b.reader != c {
			b.mu.Unlock()
			return 0, readEOF, errDetached
		}
		avail := b.total - c.sent
		room := b.window - (c.sent - c.acked)
		if avail > 0 && room > 0 && !c.sendMu.TryLock() {
			// A direct send is under way: take the lock in order
			// (send lock before b.mu) and look again.
			b.mu.Unlock()
			c.sendMu.Lock()
			b.mu.Lock()
			avail, room = b.total-c.sent, b.window-(c.sent-c.acked)
			if b.reader != c || avail <= 0 || room <= 0 {
				c.sendMu.Unlock()
				b.mu.Unlock()
				continue
			}
		}
		if avail > 0 && room > 0 {
			n := min(avail, room, int64(len(dst)))
			for i := int64(0); i < n; {
				at := (c.sent + i) % size
				end := min(size, at+(n-i))
				i += int64(copy(dst[i:n], b.ring[at:end]))
			}
			c.sent += n
			b.notifyLocked()
			b.mu.Unlock()
			return int(n), readData, nil
		}
		if avail == 0 && b.closed {
			b.mu.Unlock()
			// A direct send still under way goes out before the end.
			c.sendMu.Lock()
			//lint:ignore SA2001 the lock is taken to wait for that send, not to guard anything
			c.sendMu.Unlock()
			return 0, readEOF, nil
		}
		ch := b.changed
		windowFull := avail > 0 && room <= 0
		b.mu.Unlock()
		if windowFull && stalled == nil && stallAfter > 0 {
			t := time.NewTimer(stallAfter)
			defer t.Stop()
			stalled = t.C
		}
		select {
		case <-ch:
		case <-stalled:
			return 0, readStalled, nil
		case <-ctx.Done():
			return 0, readEOF, ctx.Err()
		}
	}
}
