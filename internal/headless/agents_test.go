package headless

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// initialize's agents reach the Initialize handler as definitions, sorted
// by name; a definition of the wrong shape fails initialize with an error
// naming the agent and the field, and the handler is never called.
func TestInitializeAgents(t *testing.T) {
	tests := []struct {
		name   string
		agents string
		want   []string // names handed over; nil: an error
		errHas []string
	}{
		{name: "two agents", agents: `{"zeta":{"description":"z","prompt":"Z"},"reviewer":{"description":"Reviews","prompt":"You are R","tools":["Read"],"model":"haiku","skills":["x"]}}`,
			want: []string{"reviewer", "zeta"}},
		{name: "not an object", agents: `{"bad":"text"}`, errHas: []string{`agent "bad"`, "object"}},
		{name: "prompt not a string", agents: `{"r":{"description":"d","prompt":3}}`, errHas: []string{`agent "r"`, "prompt", "a string"}},
		{name: "tools not a list", agents: `{"r":{"description":"d","prompt":"p","tools":"Read"}}`, errHas: []string{`agent "r"`, "tools", "list"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errw := newLines(), &syncBuf{}
			var got Init
			called := false
			c := NewControl(out, errw, Handlers{Initialize: func(in Init) (map[string]any, error) { called, got = true, in; return nil, nil }})
			c.Serve(strings.NewReader(`{"type":"control_request","request_id":"1","request":{"subtype":"initialize","agents":` + tc.agents + `}}` + "\n"))
			r := (<-out.next)["response"].(map[string]any)
			if tc.want == nil {
				e, _ := r["error"].(string)
				for _, w := range tc.errHas {
					if !strings.Contains(e, w) {
						t.Errorf("error %q lacks %q", e, w)
					}
				}
				if r["subtype"] != "error" || called || c.Initialized() {
					t.Errorf("response %v, handler called %v", r, called)
				}
				return
			}
			if r["subtype"] != "success" || !slices.Equal(got.Agents, tc.want) {
				t.Fatalf("response %v, agents %v", r, got.Agents)
			}
			d := got.AgentDefs[0]
			if d.Name != "reviewer" || d.Prompt != "You are R" || d.Description != "Reviews" || !slices.Equal(d.Tools, []string{"Read"}) ||
				d.Model != "haiku" || !slices.Equal(d.Ignored, []string{"skills"}) {
				t.Errorf("definition = %+v", d)
			}
			if got.AgentDefs[1].Tools != nil {
				t.Errorf("no tools given, got %v", got.AgentDefs[1].Tools)
			}
		})
	}
}

func TestAgentModel(t *testing.T) {
	for in, want := range map[string]string{"": "", "inherit": "", " sonnet ": "claude-sonnet-4-5", "haiku": "claude-haiku-4-5", "gpt-5": "gpt-5"} {
		if got := AgentModel(in); got != want {
			t.Errorf("AgentModel(%q) = %q, want %q", in, got, want)
		}
	}
}

// mcp_set_servers hands the servers to the handler and answers the SDK's
// McpSetServersResult with every field present; without a handler, or
// when it fails, the answer is an error.
func TestMCPSetServers(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	var got map[string]json.RawMessage
	c := NewControl(out, errw, Handlers{SetMCPServers: func(s map[string]json.RawMessage) (MCPSetResult, error) {
		got = s
		return MCPSetResult{Added: []string{"echo"}}, nil
	}})
	c.Serve(strings.NewReader(`{"type":"control_request","request_id":"1","request":{"subtype":"mcp_set_servers","servers":{"echo":{"command":"echo-server"}}}}` + "\n"))
	r := (<-out.next)["response"].(map[string]any)
	res, _ := r["response"].(map[string]any)
	b, _ := json.Marshal(res)
	if r["subtype"] != "success" || string(b) != `{"added":["echo"],"errors":{},"removed":[]}` {
		t.Fatalf("response %v", r)
	}
	if string(got["echo"]) != `{"command":"echo-server"}` {
		t.Errorf("servers = %s", got["echo"])
	}

	out = newLines()
	c = NewControl(out, errw, Handlers{})
	c.Serve(strings.NewReader(`{"type":"control_request","request_id":"2","request":{"subtype":"mcp_set_servers","servers":{}}}` + "\n"))
	if r := (<-out.next)["response"].(map[string]any); r["subtype"] != "error" {
		t.Fatalf("without a handler: %v", r)
	}
}

// Begin runs before anything Control writes: for initialize after its
// handler applied the host's setup, for any other line before it is
// handled, and when stdin ends without a line.
func TestBeginComesFirst(t *testing.T) {
	for name, in := range map[string]string{
		"initialize": `{"type":"control_request","request_id":"1","request":{"subtype":"initialize"}}`,
		"bad agents": `{"type":"control_request","request_id":"1","request":{"subtype":"initialize","agents":{"x":1}}}`,
		"other":      `{"type":"control_request","request_id":"1","request":{"subtype":"mcp_status"}}`,
		"nothing":    ``,
	} {
		t.Run(name, func(t *testing.T) {
			out, errw := newLines(), &syncBuf{}
			var order []string
			begun := false
			c := NewControl(out, errw, Handlers{
				Begin: func() {
					if !begun {
						begun = true
						_, _ = out.Write([]byte(`{"type":"system","subtype":"init"}` + "\n"))
					}
				},
				Initialize: func(Init) (map[string]any, error) {
					order = append(order, fmt.Sprintf("handler (begun %v)", begun))
					return nil, nil
				},
			})
			c.Serve(strings.NewReader(in))
			if first := <-out.next; first["subtype"] != "init" {
				t.Fatalf("first line %v", first)
			}
			if in != "" {
				if r := <-out.next; r["type"] != "control_response" {
					t.Errorf("second line %v", r)
				}
			}
			if name == "initialize" && (len(order) != 1 || order[0] != "handler (begun false)") {
				t.Errorf("handler calls %v", order)
			}
		})
	}
}
