package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// The host's in-process MCP servers (the Agent SDK's createSdkMcpServer,
// "type":"sdk") are reached through the control protocol: each JSON-RPC
// message synapse's MCP client sends becomes a control_request
// {"subtype":"mcp_message","server_name":…,"message":…}, answered by a
// control_response whose response is {"mcp_response": <JSON-RPC response>};
// what the server sends on its own comes as the host's mcp_message request.
// Control implements mcp.HostLink with Send and Receive.

// mcpReceivers are the connections to the host's servers, by server name.
type mcpReceivers struct {
	mu sync.Mutex
	fn map[string]func([]byte)
}

// Send writes msg as an mcp_message control request at once and gives the
// host's mcp_response to answer when it comes (in another goroutine).
func (c *Control) Send(ctx context.Context, server string, msg []byte, answer func([]byte, error)) {
	ch := make(chan map[string]any, 1)
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		go answer(nil, errors.New("the host closed stdin"))
		return
	}
	c.seq++
	id := "synapse-" + strconv.Itoa(c.seq)
	c.pending[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"type": "control_request", "request_id": id,
		"request": map[string]any{"subtype": "mcp_message", "server_name": server, "message": json.RawMessage(msg)}})
	go func() {
		select {
		case r, ok := <-ch:
			if !ok || r == nil {
				answer(nil, errors.New("the host failed the mcp_message request or went away"))
				return
			}
			raw, found := r["mcp_response"]
			if !found {
				answer(nil, errors.New("the host's answer to mcp_message has no mcp_response"))
				return
			}
			b, err := json.Marshal(raw)
			answer(b, err)
		case <-ctx.Done():
			c.mu.Lock()
			_, waiting := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if waiting {
				c.send(map[string]any{"type": "control_cancel_request", "request_id": id})
			}
			answer(nil, ctx.Err())
		}
	}()
}

// Receive sets what gets the messages the host's server sends on its own.
func (c *Control) Receive(server string, fn func([]byte)) {
	c.mcpIn.mu.Lock()
	defer c.mcpIn.mu.Unlock()
	if c.mcpIn.fn == nil {
		c.mcpIn.fn = map[string]func([]byte){}
	}
	if fn == nil {
		delete(c.mcpIn.fn, server)
		return
	}
	c.mcpIn.fn[server] = fn
}

// mcpMessage answers the host's mcp_message request: a message its server
// sent on its own, handed to that server's connection. The reply is the
// placeholder the SDK's own CLI peer expects; a response of ours to a
// request of the server goes back as our own mcp_message.
func (c *Control) mcpMessage(id string, raw json.RawMessage) {
	var req struct {
		ServerName string          `json:"server_name"`
		Message    json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(raw, &req); err != nil || len(req.Message) == 0 {
		c.reply(id, nil, fmt.Errorf("malformed mcp_message: want server_name and message"))
		return
	}
	c.mcpIn.mu.Lock()
	fn := c.mcpIn.fn[req.ServerName]
	c.mcpIn.mu.Unlock()
	if fn == nil {
		c.reply(id, nil, fmt.Errorf("no session with the MCP server %q is open", req.ServerName))
		return
	}
	fn(req.Message)
	c.reply(id, map[string]any{"mcp_response": map[string]any{"jsonrpc": "2.0", "result": map[string]any{}, "id": 0}}, nil)
}

// MCPSetResult is the answer to mcp_set_servers (the SDK's
// McpSetServersResult): the servers added and removed, and why a server
// could not be added or connected, by name.
type MCPSetResult struct {
	Added   []string
	Removed []string
	Errors  map[string]string
}

// payload is the result as the SDK reads it: every field present.
func (r MCPSetResult) payload() map[string]any {
	added, removed, errs := r.Added, r.Removed, r.Errors
	if added == nil {
		added = []string{}
	}
	if removed == nil {
		removed = []string{}
	}
	if errs == nil {
		errs = map[string]string{}
	}
	return map[string]any{"added": added, "removed": removed, "errors": errs}
}
