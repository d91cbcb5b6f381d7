package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// The terminal protocol, one WebSocket per attached page:
//
//	server → client  text   {"type":"state","session":{…}}        first frame, at once
//	server → client  binary raw terminal output (the handshake line first, then the program's)
//	server → client  text   {"type":"exit","code":N,"reason":"…","session":{…}}  then close 1000
//	client → server  binary raw input (keystrokes, pastes)
//	client → server  text   {"type":"input","data":"…"}             same, as text
//	client → server  text   {"type":"resize","cols":C,"rows":R}     the PTY follows
//	client → server  text   {"type":"ack","bytes":N}                N output bytes processed
//
// Flow control: the server never has more than sendWindow unacknowledged
// bytes in flight to a client, and the PTY pump stops when the client falls a
// ring behind, so a slow page slows the program instead of growing memory. A
// client that stops acknowledging for ackTimeout is disconnected (it can
// reconnect and gets the replay). A new connection to the same session takes
// over from the old one, which is closed with code 4001.
const (
	ackTimeout                          = 45 * time.Second
	writeTimeout                        = 30 * time.Second
	pingEvery                           = 30 * time.Second
	readLimit                           = 1 << 20
	inputQueueLen                       = 64
	inputQueueMax                       = 1 << 20 // bytes of input a connection may have waiting for the PTY
	closeTakenOver websocket.StatusCode = 4001
)

type clientMsg struct {
	Type  string `json:"type"`
	Data  string `json:"data"`
	Cols  int    `json:"cols"`
	Rows  int    `json:"rows"`
	Bytes int64  `json:"bytes"`
}

type stateFrame struct {
	Type    string       `json:"type"`
	Session SessionState `json:"session"`
}

type exitFrame struct {
	Type    string       `json:"type"`
	Code    int          `json:"code"`
	Reason  string       `json:"reason"`
	Session SessionState `json:"session"`
}

func (s *Server) handleTerminal(w http.ResponseWriter, r *http.Request) {
	// Browsers always send Origin on WebSocket upgrades; requiring it (and
	// requiring it to be this server) stops other sites from driving the PTY
	// with the user's cookie.
	if err := sameOrigin(r, false); err != nil {
		writeJSON(w, http.StatusForbidden, &StartError{Code: "bad_origin", Msg: "forbidden: " + err.Error()})
		return
	}
	sess := s.sessionOr404(w, r)
	if sess == nil {
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered the client
	}
	conn.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(s.baseCtx)
	defer cancel()
	serveTerminal(ctx, conn, sess)
}

func writeJSONFrame(ctx context.Context, conn *websocket.Conn, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, b)
}

func serveTerminal(ctx context.Context, conn *websocket.Conn, sess *Session) {
	defer conn.CloseNow()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := writeJSONFrame(ctx, conn, stateFrame{Type: "state", Session: sess.State()}); err != nil {
		return
	}
	cur := sess.attach()
	defer sess.out.Detach(cur)
	send := func(p []byte) error {
		wctx, wcancel := context.WithTimeout(ctx, writeTimeout)
		defer wcancel()
		return conn.Write(wctx, websocket.MessageBinary, p)
	}
	// Small output for a caught-up page leaves straight from the PTY pump
	// (a keystroke's echo is one hop shorter); the loop below sends the
	// replay and floods.
	sess.out.SetDirect(cur, func(p []byte) error {
		err := send(p)
		if err != nil {
			cancel()
		}
		return err
	})

	inputs := newInputQueue(sess)
	go inputs.run(ctx)
	go readClient(ctx, cancel, conn, sess, cur, inputs)
	go func() {
		t := time.NewTicker(pingEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				pctx, pcancel := context.WithTimeout(ctx, writeTimeout)
				err := conn.Ping(pctx)
				pcancel()
				if err != nil {
					cancel()
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()

	buf := make([]byte, frameMax)
	for {
		res, err := sess.out.Send(ctx, cur, buf, ackTimeout, send)
		switch {
		case errors.Is(err, errDetached):
			_ = conn.Close(closeTakenOver, "the terminal was opened in another window")
			return
		case err != nil:
			return
		case res == readStalled:
			_ = conn.Close(websocket.StatusPolicyViolation, "the terminal stopped acknowledging output; reconnect to resume")
			return
		case res == readEOF:
			st := sess.State()
			code := -1
			if st.ExitCode != nil {
				code = *st.ExitCode
			}
			if writeJSONFrame(ctx, conn, exitFrame{Type: "exit", Code: code, Reason: st.EndReason, Session: st}) == nil {
				_ = conn.Close(websocket.StatusNormalClosure, "session ended")
			}
			return
		}
	}
}

// inputQueue writes keystrokes to the PTY. A write that fits goes straight
// from the connection's reader; what the PTY cannot take at once waits for
// a goroutine of its own, so a program not reading its input never stalls
// the reader (and with it the acks). What waits is bounded, in messages and
// in bytes: beyond that the reader waits too, so a program that reads no
// input costs no more memory however much is typed or pasted.
type inputQueue struct {
	sess    *Session
	ch      chan []byte
	pending atomic.Int64 // queued writes not yet done

	mu     sync.Mutex
	queued int           // bytes in ch or being written
	room   chan struct{} // closed and replaced when queued shrinks
}

func newInputQueue(sess *Session) *inputQueue {
	return &inputQueue{sess: sess, ch: make(chan []byte, inputQueueLen), room: make(chan struct{})}
}

func (q *inputQueue) run(ctx context.Context) {
	for {
		select {
		case p := <-q.ch:
			_ = q.sess.Input(ctx, p)
			q.mu.Lock()
			q.queued -= len(p)
			close(q.room)
			q.room = make(chan struct{})
			q.mu.Unlock()
			q.pending.Add(-1)
		case <-ctx.Done():
			return
		}
	}
}

// put writes p, or queues what could not be written without waiting. Only
// the connection's reader calls it, so nothing can be queued between the
// check of pending and the direct write: input stays in order.
func (q *inputQueue) put(ctx context.Context, p []byte) error {
	if q.pending.Load() == 0 {
		p = q.sess.tryInput(p)
		if len(p) == 0 {
			return nil
		}
	}
	if err := q.reserve(ctx, len(p)); err != nil {
		return err
	}
	q.pending.Add(1)
	select {
	case q.ch <- p:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reserve waits until n more bytes may be queued: always when nothing is,
// so one message of any size (up to readLimit) can wait.
func (q *inputQueue) reserve(ctx context.Context, n int) error {
	for {
		q.mu.Lock()
		if q.queued == 0 || q.queued+n <= inputQueueMax {
			q.queued += n
			q.mu.Unlock()
			return nil
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readClient handles input, resize and ack messages until the connection ends.
func readClient(ctx context.Context, cancel context.CancelFunc, conn *websocket.Conn, sess *Session, cur *cursor, inputs *inputQueue) {
	defer cancel()
	resized := false
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		if typ == websocket.MessageBinary {
			if inputs.put(ctx, data) != nil {
				return
			}
			continue
		}
		var m clientMsg
		if json.Unmarshal(data, &m) != nil {
			continue // ignore what we do not understand rather than drop the terminal
		}
		switch m.Type {
		case "input":
			if inputs.put(ctx, []byte(m.Data)) != nil {
				return
			}
		case "resize":
			// The first resize of a connection also asks for a repaint, so a
			// reattached page gets a whole screen, not just the replay.
			_ = sess.Resize(m.Cols, m.Rows, !resized)
			resized = true
		case "ack":
			sess.out.Ack(cur, m.Bytes)
		}
	}
}
