package web

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i%61)
	}
	return b
}

// drain reads at least n bytes for client c through dst, acknowledging each read.
func drain(t *testing.T, b *outBuf, c *cursor, dst []byte, n int) []byte {
	t.Helper()
	var got []byte
	for len(got) < n {
		k, res, err := b.Next(context.Background(), c, dst, 0)
		if err != nil || res != readData {
			t.Fatalf("Next: %v %v", res, err)
		}
		got = append(got, dst[:k]...)
		b.Ack(c, int64(k))
	}
	return got
}

// Without a client, the ring keeps the newest bytes (the replay) and writes never block.
func TestOutBufReplayKeepsNewest(t *testing.T) {
	tests := []struct{ size, write int }{{16, 5}, {16, 16}, {16, 17}, {16, 100}, {7, 3}}
	for _, tt := range tests {
		b := newOutBuf(tt.size, tt.size)
		data := pattern(tt.write, 'A')
		for i := 0; i < len(data); i += 3 {
			if err := b.Write(context.Background(), data[i:min(i+3, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		want := data[max(0, len(data)-tt.size):]
		if got := b.Snapshot(); !bytes.Equal(got, want) {
			t.Errorf("size %d, wrote %d: snapshot %q, want %q", tt.size, tt.write, got, want)
		}
		got := drain(t, b, b.Attach(), make([]byte, 64), len(want))
		if !bytes.Equal(got, want) {
			t.Errorf("size %d, wrote %d: replay %q, want %q", tt.size, tt.write, got, want)
		}
	}
}

// With a client attached, the writer waits instead of overwriting unsent
// bytes, and the client never holds more than the window unacknowledged.
func TestOutBufBackpressureAndWindow(t *testing.T) {
	b := newOutBuf(8, 4)
	c := b.Attach()
	if err := b.Write(context.Background(), pattern(8, 'a')); err != nil {
		t.Fatal(err)
	}
	// The ring is full of unsent bytes: another write must wait.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	err := b.Write(ctx, []byte("X"))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write into a full ring: %v, want it to wait", err)
	}
	dst := make([]byte, 16)
	n, res, err := b.Next(context.Background(), c, dst, 0)
	if err != nil || res != readData || n != 4 {
		t.Fatalf("first read: n=%d res=%v err=%v, want the 4-byte window", n, res, err)
	}
	// Window full, nothing acknowledged: the next read stalls.
	_, res, err = b.Next(context.Background(), c, dst, 30*time.Millisecond)
	if err != nil || res != readStalled {
		t.Fatalf("read with a full window: res=%v err=%v, want stalled", res, err)
	}
	// 4 bytes were sent, so 4 bytes of room: a writer can proceed.
	if err := b.Write(context.Background(), []byte("WXYZ")); err != nil {
		t.Fatal(err)
	}
	b.Ack(c, 1000) // acknowledging more than was sent is clamped
	if c.acked != c.sent {
		t.Fatalf("acked %d > sent %d", c.acked, c.sent)
	}
	got := drain(t, b, c, dst, 8)
	if want := append(pattern(8, 'a')[4:], "WXYZ"...); !bytes.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	b.Close()
	if _, res, err := b.Next(context.Background(), c, dst, 0); res != readEOF || err != nil {
		t.Fatalf("after Close: %v %v", res, err)
	}
}

// A second attach detaches the first; a detached writer limit no longer applies.
func TestOutBufTakeover(t *testing.T) {
	b := newOutBuf(8, 8)
	c1 := b.Attach()
	c2 := b.Attach()
	if _, _, err := b.Next(context.Background(), c1, make([]byte, 4), 0); !errors.Is(err, errDetached) {
		t.Fatalf("old cursor: %v, want errDetached", err)
	}
	b.Detach(c1) // no effect on c2
	if b.reader != c2 {
		t.Fatal("detaching the old cursor removed the new one")
	}
	b.Detach(c2)
	if err := b.Write(context.Background(), pattern(100, 'a')); err != nil {
		t.Fatalf("write with no client: %v", err)
	}
}

// Small writes for a caught-up client leave through its direct sender; a
// client that is behind gets them through Send, in order.
func TestOutBufDirectSend(t *testing.T) {
	b := newOutBuf(64, 32)
	c := b.Attach()
	var direct [][]byte
	b.SetDirect(c, func(p []byte) error { direct = append(direct, bytes.Clone(p)); return nil })
	ctx := context.Background()
	if err := b.Write(ctx, []byte("k")); err != nil {
		t.Fatal(err)
	}
	if len(direct) != 1 || string(direct[0]) != "k" {
		t.Fatalf("direct sends = %q, want [k]", direct)
	}
	if got := b.Snapshot(); string(got) != "k" {
		t.Fatalf("ring = %q: a direct send must stay in the replay", got)
	}
	// Unacknowledged bytes count against the window: 31 more fit, 32 do not.
	if err := b.Write(ctx, pattern(32, 'a')); err != nil {
		t.Fatal(err)
	}
	if len(direct) != 1 {
		t.Fatalf("a write beyond the window went direct: %q", direct)
	}
	// Now the client is behind: the next small write waits for Send too.
	if err := b.Write(ctx, []byte("z")); err != nil {
		t.Fatal(err)
	}
	var sent []byte
	b.Ack(c, 1)
	for len(sent) < 33 {
		res, err := b.Send(ctx, c, make([]byte, 64), 0, func(p []byte) error { sent = append(sent, p...); return nil })
		if err != nil || res != readData {
			t.Fatalf("Send: %v %v", res, err)
		}
		b.Ack(c, int64(len(sent)))
	}
	if want := append(pattern(32, 'a'), 'z'); !bytes.Equal(sent, want) || len(direct) != 1 {
		t.Fatalf("sent %q (direct %q), want %q through Send", sent, direct, want)
	}
}

// Direct sends from the writer and Sends from the client's goroutine never
// reorder the stream.
func TestOutBufDirectAndSendKeepOrder(t *testing.T) {
	b := newOutBuf(1<<10, 512)
	c := b.Attach()
	var mu sync.Mutex
	var got []byte
	record := func(p []byte) error { mu.Lock(); got = append(got, p...); mu.Unlock(); return nil }
	b.SetDirect(c, record)
	var want []byte
	for i := range 2000 {
		want = append(want, pattern(1+i%200, byte('A'+i%20))...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		dst := make([]byte, 100)
		for {
			res, err := b.Send(ctx, c, dst, 0, func(p []byte) error {
				if err := record(p); err != nil {
					return err
				}
				b.Ack(c, int64(len(p)))
				return nil
			})
			if err != nil || res == readEOF {
				done <- err
				return
			}
		}
	}()
	for i, off := 0, 0; off < len(want); i++ {
		n := 1 + i%200
		if err := b.Write(ctx, want[off:off+n]); err != nil {
			t.Fatal(err)
		}
		// Acknowledge direct sends too, as the page does.
		mu.Lock()
		unacked := int64(len(got))
		mu.Unlock()
		b.mu.Lock()
		acked := c.acked
		b.mu.Unlock()
		b.Ack(c, unacked-acked)
		off += n
	}
	b.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("stream reordered or lost: got %d bytes, want %d", len(got), len(want))
	}
}

// An ack is the client's word and may be absurd: acknowledging more than
// was sent (even the largest int64, after some bytes were acknowledged, where
// the sum overflows) confirms exactly what was sent and never shrinks the
// window, so the client keeps receiving output.
func TestOutBufAbsurdAcks(t *testing.T) {
	const maxInt64 = int64(^uint64(0) >> 1)
	tests := []struct {
		name string
		acks []int64
	}{
		{"one huge", []int64{maxInt64}},
		{"some then huge", []int64{1, maxInt64}},
		{"huge twice", []int64{maxInt64, maxInt64}},
		{"negative and zero", []int64{-5, 0, 4}},
		{"just too many", []int64{2, maxInt64 - 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newOutBuf(16, 4)
			c := b.Attach()
			dst := make([]byte, 16)
			if err := b.Write(context.Background(), []byte("abcd")); err != nil {
				t.Fatal(err)
			}
			if n, res, err := b.Next(context.Background(), c, dst, 0); n != 4 || res != readData || err != nil {
				t.Fatalf("first read: %d %v %v", n, res, err)
			}
			for _, a := range tt.acks {
				b.Ack(c, a)
			}
			if err := b.Write(context.Background(), []byte("efgh")); err != nil {
				t.Fatal(err)
			}
			n, res, err := b.Next(context.Background(), c, dst, 50*time.Millisecond)
			if res != readData || err != nil || string(dst[:n]) != "efgh" {
				t.Fatalf("after acks %v: read %q %v %v, want efgh", tt.acks, dst[:n], res, err)
			}
		})
	}
}
