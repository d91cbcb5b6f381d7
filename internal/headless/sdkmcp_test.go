package headless

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// The host's in-process MCP servers: each message is an mcp_message
// control request, in the order sent; the answer is the host's
// mcp_response; what the server sends on its own reaches the receiver and
// is acknowledged; a failed answer, or stdin ending, is an error.
func TestControlMCPMessages(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	c := NewControl(out, errw, Handlers{})
	inR, inW := io.Pipe()
	go c.Serve(inR)
	host := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func() map[string]any {
		select {
		case m := <-out.next:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("nothing written")
			return nil
		}
	}
	type result struct {
		b   []byte
		err error
	}
	answers := make(chan result, 4)
	answer := func(b []byte, err error) { answers <- result{b, err} }

	c.Send(context.Background(), "calc", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), answer)
	c.Send(context.Background(), "calc", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), func([]byte, error) {})
	r1, r2 := next(), next()
	req := r1["request"].(map[string]any)
	if r1["type"] != "control_request" || req["subtype"] != "mcp_message" || req["server_name"] != "calc" ||
		req["message"].(map[string]any)["method"] != "tools/list" {
		t.Fatalf("first request = %v", r1)
	}
	if r2["request"].(map[string]any)["message"].(map[string]any)["method"] != "notifications/initialized" {
		t.Fatalf("second request = %v (order lost)", r2)
	}
	host(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r2["request_id"].(string) + `","response":{"mcp_response":{"jsonrpc":"2.0","result":{},"id":0}}}}`)
	host(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r1["request_id"].(string) + `","response":{"mcp_response":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}}}`)
	got := <-answers
	var resp map[string]any
	if got.err != nil || json.Unmarshal(got.b, &resp) != nil || resp["id"] != float64(1) {
		t.Fatalf("answer = %s, %v", got.b, got.err)
	}

	// An error response fails the request.
	c.Send(context.Background(), "calc", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`), answer)
	r3 := next()
	host(`{"type":"control_response","response":{"subtype":"error","request_id":"` + r3["request_id"].(string) + `","error":"boom"}}`)
	if got := <-answers; got.err == nil {
		t.Fatalf("an error response answered %s", got.b)
	}

	// The server's own message: delivered and acknowledged; to a server
	// with no session, an error.
	recv := make(chan string, 1)
	c.Receive("calc", func(b []byte) { recv <- string(b) })
	host(`{"type":"control_request","request_id":"h1","request":{"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}}`)
	if m := <-recv; !strings.Contains(m, "list_changed") {
		t.Fatalf("received %s", m)
	}
	if r := next()["response"].(map[string]any); r["subtype"] != "success" || r["request_id"] != "h1" {
		t.Fatalf("ack = %v", r)
	}
	c.Receive("calc", nil)
	host(`{"type":"control_request","request_id":"h2","request":{"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0","method":"x"}}}`)
	if r := next()["response"].(map[string]any); r["subtype"] != "error" || r["request_id"] != "h2" {
		t.Fatalf("to a closed session = %v", r)
	}

	// A request still waiting when stdin ends fails; so does one sent after.
	c.Send(context.Background(), "calc", []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), answer)
	next()
	_ = inW.Close()
	if got := <-answers; got.err == nil {
		t.Fatal("a request pending at the end of stdin succeeded")
	}
	c.Send(context.Background(), "calc", []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`), answer)
	if got := <-answers; got.err == nil {
		t.Fatal("a request after the end of stdin succeeded")
	}
}
