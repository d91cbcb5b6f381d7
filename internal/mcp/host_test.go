package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHost plays the Agent SDK's side of mcp_message: it answers the
// client's requests (initialize, tools/list, tools/call) with JSON-RPC
// responses, acknowledges notifications with the SDK's placeholder, and
// can send a message of its server on its own.
type fakeHost struct {
	mu       sync.Mutex
	methods  []string // every message received, by method ("" for a response)
	tools    []string
	receiver map[string]func([]byte)
}

func (f *fakeHost) Send(_ context.Context, server string, msg []byte, answer func([]byte, error)) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string             `json:"protocolVersion"`
			Name            string             `json:"name"`
			Arguments       map[string]float64 `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		go answer(nil, err)
		return
	}
	f.mu.Lock()
	f.methods = append(f.methods, m.Method)
	tools := slices.Clone(f.tools)
	f.mu.Unlock()
	if m.Method == "" || len(m.ID) == 0 {
		go answer([]byte(`{"jsonrpc":"2.0","result":{},"id":0}`), nil)
		return
	}
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": m.Params.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo": map[string]any{"name": server, "version": "1.0.0"}}
	case "tools/list":
		var list []any
		for _, t := range tools {
			list = append(list, map[string]any{"name": t, "description": t + "s two numbers",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number"}, "b": map[string]any{"type": "number"}}, "required": []string{"a", "b"}}})
		}
		result = map[string]any{"tools": list}
	case "tools/call":
		v := m.Params.Arguments["a"] + m.Params.Arguments["b"]
		if m.Params.Name == "mul" {
			v = m.Params.Arguments["a"] * m.Params.Arguments["b"]
		}
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("%s = %g", m.Params.Name, v)}}}
	default:
		go answer([]byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"error":{"code":-32601,"message":"Method not found"}}`), nil)
		return
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	go answer(b, nil)
}

func (f *fakeHost) Receive(server string, fn func([]byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.receiver == nil {
		f.receiver = map[string]func([]byte){}
	}
	f.receiver[server] = fn
}

func (f *fakeHost) push(server, msg string) bool {
	f.mu.Lock()
	fn := f.receiver[server]
	f.mu.Unlock()
	if fn == nil {
		return false
	}
	fn([]byte(msg))
	return true
}

func TestHostServerIsAnMCPServer(t *testing.T) {
	host := &fakeHost{tools: []string{"add"}}
	mgr, h := newManager(t, Options{StartTimeout: 5 * time.Second}, ServerConfig{Name: "calc", Type: KindHost, Host: host})
	if rep := mgr.Start(context.Background()); rep.Servers != 0 || len(rep.Failures) != 0 {
		t.Fatalf("Start dialed the host's server (it answers only once the control protocol is read): %+v", rep)
	}
	if got := runOK(t, h, "mcp:calc:add --a=1 --b=2"); !strings.Contains(got, "add = 3") {
		t.Fatalf("mcp:calc:add --a=1 --b=2 = %q", got)
	}
	st := mgr.Status()
	if len(st) != 1 || !st[0].Connected || st[0].Kind != KindHost || st[0].Tools != 1 {
		t.Fatalf("status = %+v", st)
	}
	host.mu.Lock()
	// server/discover, which a server of an older protocol does not know,
	// may come first.
	methods := slices.DeleteFunc(slices.Clone(host.methods), func(m string) bool { return m == "server/discover" })
	host.mu.Unlock()
	if want := []string{"initialize", "notifications/initialized", "tools/list"}; len(methods) < 3 || !slices.Equal(methods[:3], want) {
		t.Fatalf("the host saw %q, want %q first (in order)", methods, want)
	}

	// The server's own notification (list_changed) reaches the client.
	host.mu.Lock()
	host.tools = append(host.tools, "mul")
	host.mu.Unlock()
	if !host.push("calc", `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`) {
		t.Fatal("no receiver registered for calc")
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(mgr.Tools()) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("tools after list_changed = %+v", mgr.Tools())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := runOK(t, h, "mcp:calc:mul --a=3 --b=4"); !strings.Contains(got, "mul = 12") {
		t.Fatalf("mcp:calc:mul = %q", got)
	}
}

// failingHost answers nothing: each request fails as a host gone away does.
type failingHost struct{}

func (failingHost) Send(_ context.Context, _ string, _ []byte, answer func([]byte, error)) {
	go answer(nil, fmt.Errorf("the host closed stdin"))
}
func (failingHost) Receive(string, func([]byte)) {}

func TestHostServerFailureIsReported(t *testing.T) {
	_, h := newManager(t, Options{}, ServerConfig{Name: "calc", Type: KindHost, Host: failingHost{}})
	r := h.Run(context.Background(), "mcp:calc:add --a=1 --b=2")
	if r.ExitCode == 0 || !strings.Contains(r.Stdout+r.Stderr, "the host closed stdin") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// Type sdk without a host (a config that reached a session that has no
	// control protocol) says so.
	_, h = newManager(t, Options{}, ServerConfig{Name: "calc", Type: KindHost})
	r = h.Run(context.Background(), "mcp:calc:add --a=1 --b=2")
	if r.ExitCode == 0 || !strings.Contains(r.Stdout+r.Stderr, "control protocol") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.ExitCode, r.Stdout, r.Stderr)
	}
}

// A server added to a running manager (the host's, named in initialize)
// is served like a configured one; a taken or invalid name is refused.
func TestAddHostServerAtRunTime(t *testing.T) {
	mgr, h := newManager(t, Options{})
	mgr.Start(context.Background())
	host := &fakeHost{tools: []string{"add"}}
	if err := mgr.Add(ServerConfig{Name: "calc", Type: KindHost, Host: host}); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Add(ServerConfig{Name: "calc", Type: KindHost, Host: host}); err == nil {
		t.Fatal("a second calc was added")
	}
	if err := mgr.Add(ServerConfig{Name: "a:b", Type: KindHost, Host: host}); err == nil {
		t.Fatal("an invalid name was added")
	}
	mgr.Prefetch("calc")
	if got := runOK(t, h, "mcp:calc:add --a=2 --b=5"); !strings.Contains(got, "add = 7") {
		t.Fatalf("mcp:calc:add = %q", got)
	}
	if names := mgr.Names(); !slices.Equal(names, []string{"calc"}) {
		t.Fatalf("names = %q", names)
	}
}

// Remove takes an added server away and ends its session: its commands
// fail as unknown, its name can be added again, and removing a name that
// is not there says so.
func TestRemoveServerAtRunTime(t *testing.T) {
	mgr, h := newManager(t, Options{})
	mgr.Start(context.Background())
	host := &fakeHost{tools: []string{"add"}}
	if err := mgr.Add(ServerConfig{Name: "calc", Type: KindHost, Host: host}); err != nil {
		t.Fatal(err)
	}
	if got := runOK(t, h, "mcp:calc:add --a=2 --b=5"); !strings.Contains(got, "add = 7") {
		t.Fatalf("mcp:calc:add = %q", got)
	}
	if !mgr.Remove("calc") {
		t.Fatal("Remove(calc) = false")
	}
	if mgr.Remove("calc") {
		t.Fatal("a second Remove(calc) = true")
	}
	if names := mgr.Names(); len(names) != 0 {
		t.Fatalf("names after Remove = %q", names)
	}
	if _, err := mgr.Call(context.Background(), "calc", "add", map[string]any{"a": 1, "b": 1}); err == nil {
		t.Fatal("a removed server still answers")
	}
	if err := mgr.Add(ServerConfig{Name: "calc", Type: KindHost, Host: host}); err != nil {
		t.Fatalf("add again: %v", err)
	}
	if got := runOK(t, h, "mcp:calc:add --a=1 --b=1"); !strings.Contains(got, "add = 2") {
		t.Fatalf("after re-adding: %q", got)
	}
}
