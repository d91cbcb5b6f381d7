package web

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// A program that reads no input (hung, or hostile) must not make the server
// hold the input it is sent: what waits for the PTY is bounded per
// connection, and a connection that ends lets go of it, instead of leaving a
// goroutine blocked in the PTY write for good with everything queued behind
// it (which grew by up to 64 MiB per connection).
func TestInputToDeafProgramIsBounded(t *testing.T) {
	e := newTestEnv(t)
	st := e.start("codex-tui")
	defer e.stop(st.ID)
	c := e.dial(st.ID)
	c.waitOutput("CHILDREN-STARTED")
	c.typeLine("deaf 600")
	time.Sleep(300 * time.Millisecond) // let it stop reading
	_ = c.conn.CloseNow()

	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	baseHeap, baseG := heap(), runtime.NumGoroutine()
	frame := make([]byte, 512<<10)
	for i := range frame {
		frame[i] = 'k'
	}
	for round := 0; round < 3; round++ {
		c := e.dial(st.ID)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		for i := 0; i < 80; i++ {
			if c.conn.Write(ctx, websocket.MessageBinary, frame) != nil {
				break // the server stopped reading: the input backs up
			}
		}
		cancel()
		_ = c.conn.CloseNow()
	}
	// The last connection may live on until a ping notices it is gone
	// (its reader waits for room in the queue and reads nothing); what it
	// holds is bounded. Before, every connection left its queue behind.
	var grew uint64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		h := heap()
		grew = h - min(baseHeap, h)
		if grew < 8<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 connections sent input to a program that reads none, the server holds %d KiB more heap", grew>>10)
		}
	}
	t.Logf("heap grew %d KiB, %d more goroutines", grew>>10, runtime.NumGoroutine()-baseG)
}
