package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// KindHost is a server the embedding host runs in its own process (the
// Claude Agent SDK's "type":"sdk" servers): nothing is started, the
// messages travel through the host's control protocol (ServerConfig.Host).
const KindHost = "sdk"

// HostLink carries JSON-RPC messages to and from the host's in-process
// MCP servers (headless.Control implements it with mcp_message requests).
type HostLink interface {
	// Send writes msg (one JSON-RPC message) to the host's server at once,
	// in the order Send is called. The host's reply is given to answer, in
	// another goroutine: for a request its JSON-RPC response, otherwise
	// whatever the host acknowledged (ignored). answer gets an error when
	// the host failed, went away or ctx ended first.
	Send(ctx context.Context, server string, msg []byte, answer func([]byte, error))
	// Receive sets what gets the messages the host's server sends on its
	// own (notifications, requests to the client); nil stops it.
	Receive(server string, fn func(msg []byte))
}

// hostTransport is an sdk.Transport over a HostLink.
type hostTransport struct {
	link   HostLink
	server string
}

func (t *hostTransport) Connect(context.Context) (sdk.Connection, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &hostConn{link: t.link, server: t.server, ctx: ctx, cancel: cancel, more: make(chan struct{}, 1)}
	t.link.Receive(t.server, c.received)
	return c, nil
}

// hostConn is one session with a host's server: Write sends, Read yields
// the host's responses and the messages its server sent on its own.
type hostConn struct {
	link   HostLink
	server string
	ctx    context.Context // ends at Close: pending answers are dropped
	cancel context.CancelFunc

	mu    sync.Mutex
	queue []jsonrpc.Message
	more  chan struct{}
	once  sync.Once
}

func (c *hostConn) push(m jsonrpc.Message) {
	c.mu.Lock()
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// received takes a message the host's server sent on its own.
func (c *hostConn) received(data []byte) {
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return // not JSON-RPC: nothing to answer
	}
	c.push(m)
}

func (c *hostConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-c.ctx.Done():
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *hostConn) Write(_ context.Context, m jsonrpc.Message) error {
	if c.ctx.Err() != nil {
		return errors.New("the connection to the host's MCP server is closed")
	}
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		// A notification or our response to the server's request: the
		// host acknowledges it with a placeholder, which is not ours to read.
		c.link.Send(c.ctx, c.server, data, func([]byte, error) {})
		return nil
	}
	c.link.Send(c.ctx, c.server, data, func(b []byte, err error) {
		if c.ctx.Err() != nil {
			return
		}
		var resp *jsonrpc.Response
		if err == nil {
			var msg jsonrpc.Message
			if msg, err = jsonrpc.DecodeMessage(b); err == nil {
				if r, ok := msg.(*jsonrpc.Response); ok {
					resp, r.ID = r, req.ID // the host keys its answers by server and id
				} else {
					err = fmt.Errorf("the host answered %s with something other than its JSON-RPC response", req.Method)
				}
			}
		}
		if resp == nil {
			resp = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the host's MCP server " + c.server + ": " + err.Error()}}
		}
		c.push(resp)
	})
	return nil
}

func (c *hostConn) Close() error {
	c.once.Do(func() {
		c.cancel()
		c.link.Receive(c.server, nil)
	})
	return nil
}

func (c *hostConn) SessionID() string { return "" }
