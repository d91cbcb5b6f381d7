package web

import (
	"context"
	"time"
)

// Test-only views of an outBuf.

// Next copies up to len(dst) unsent bytes for c into dst, waiting until there
// are some. When the client's window stays full for stallAfter (0 means
// never) without an acknowledgement, Next returns readStalled.
func (b *outBuf) Next(ctx context.Context, c *cursor, dst []byte, stallAfter time.Duration) (int, readResult, error) {
	n, res, err := b.claim(ctx, c, dst, stallAfter)
	if res == readData && err == nil {
		c.sendMu.Unlock()
	}
	return n, res, err
}

// Snapshot returns a copy of the bytes still in the ring (for tests and diagnostics).
func (b *outBuf) Snapshot() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	size := int64(len(b.ring))
	start := max(b.total-size, 0)
	out := make([]byte, 0, b.total-start)
	for off := start; off < b.total; {
		at := off % size
		end := min(size, at+(b.total-off))
		out = append(out, b.ring[at:end]...)
		off += end - at
	}
	return out
}

// Total is the number of bytes written so far.
func (b *outBuf) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
