package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// lines collects what Control writes, one JSON object a line, and lets a
// test wait for the next one.
type lines struct {
	mu   sync.Mutex
	buf  strings.Builder
	next chan map[string]any
}

func newLines() *lines { return &lines{next: make(chan map[string]any, 64)} }

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	sc := bufio.NewScanner(strings.NewReader(string(p)))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			l.next <- m
		}
	}
	return len(p), nil
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The host's control requests get one response each — an error for what
// is unknown or malformed — and bad lines are reported on stderr, never
// fatal; user messages queue up for Next.
func TestControlRequests(t *testing.T) {
	out, errw := newLines(), &syncBuf{}
	var mode, model string
	interrupted := 0
	c := NewControl(out, errw, Handlers{
		Initialize:        func(in Init) (map[string]any, error) { return map[string]any{"prompt": in.SystemPrompt}, nil },
		Interrupt:         func() { interrupted++ },
		SetPermissionMode: func(m string) error { mode = m; return nil },
		SetModel: func(m string) error {
			if m == "bad" {
				return errors.New("no such model")
			}
			model = m
			return nil
		},
		MCPStatus: func() []MCPStatus { return []MCPStatus{{Name: "docs", Status: "connected"}} },
	})
	in := strings.Join([]string{
		`{"type":"control_request","request_id":"1","request":{"subtype":"initialize","systemPrompt":["a","b"]}}`,
		`{"type":"user","message":{"role":"user","content":"first"}}`,
		`not json`,
		`{"type":"control_request","request_id":"2","request":{"subtype":"set_permission_mode","mode":"plan"}}`,
		`{"type":"control_request","request_id":"3","request":{"subtype":"set_model","model":"bad"}}`,
		`{"type":"control_request","request_id":"4","request":{"subtype":"set_model","model":"m2"}}`,
		`{"type":"control_request","request_id":"5","request":{"subtype":"rewind_files"}}`,
		`{"type":"control_request","request_id":"6","request":{"subtype":"interrupt"}}`,
		`{"type":"control_request","request_id":"7","request":{"subtype":"mcp_status"}}`,
		`{"type":"control_request","request_id":"8","request":"nonsense"}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"nobody"}}`,
		`{"type":"assistant","message":{}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second"}]}}`,
		`{"type":"user","message":{"role":"user","content":"half a line, no newline`,
	}, "\n")
	c.Serve(strings.NewReader(in))

	want := map[string]string{"1": "success", "2": "success", "3": "error", "4": "success", "5": "error", "6": "success", "7": "success", "8": "error"}
	got := map[string]map[string]any{}
	for range want {
		m := <-out.next
		r := m["response"].(map[string]any)
		got[r["request_id"].(string)] = r
	}
	for id, sub := range want {
		if got[id]["subtype"] != sub {
			t.Errorf("request %s: %v, want %s", id, got[id], sub)
		}
	}
	if p := got["1"]["response"].(map[string]any)["prompt"]; p != "a\n\nb" {
		t.Errorf("initialize's systemPrompt parts: %q", p)
	}
	if e := got["5"]["error"].(string); !strings.Contains(e, `"rewind_files"`) {
		t.Errorf("unknown subtype's error %q does not name it", e)
	}
	if mode != "plan" || model != "m2" || interrupted != 1 || !c.Initialized() {
		t.Errorf("mode %q model %q interrupts %d initialized %v", mode, model, interrupted, c.Initialized())
	}
	for _, w := range []string{"first", "second"} {
		if text, ok, err := c.Next(context.Background()); !ok || err != nil || text != w {
			t.Errorf("Next = %q, %v, %v; want %q", text, ok, err, w)
		}
	}
	if _, ok, err := c.Next(context.Background()); ok || err != nil {
		t.Errorf("after stdin ended: ok %v err %v", ok, err)
	}
	stderr := errw.String()
	for _, w := range []string{"line 3 skipped: not a JSON object", `"nobody"`, `type "assistant"`, "line 14 skipped"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}

// The gate's questions go to the host as can_use_tool; its answer decides.
func TestControlAsk(t *testing.T) {
	run := tool.Question{Kind: tool.AskRun, Command: "touch a", Reasons: []writecheck.Reason{{Word: "touch", Why: "writes a"}}, Words: []string{"touch"}}
	grant := tool.Question{Kind: tool.AskGrant, Command: "cat /x/y", Resource: "/x/y", Reason: "outside"}
	cases := []struct {
		name      string
		q         tool.Question
		reply     string // the host's response payload; "" cancels
		want      tool.Answer
		interrupt bool
	}{
		{"allow", run, `{"behavior":"allow","updatedInput":{"command":"touch a"}}`, tool.AnswerOnce, false},
		{"allow always", run, `{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}]}`, tool.AnswerAlways, false},
		{"another command", run, `{"behavior":"allow","updatedInput":{"command":"rm -rf /"}}`, tool.AnswerDeny, false},
		{"deny", run, `{"behavior":"deny","message":"no"}`, tool.AnswerDeny, false},
		{"deny and stop", run, `{"behavior":"deny","message":"no","interrupt":true}`, tool.AnswerDeny, true},
		{"grant for the session", grant, `{"behavior":"allow","updatedPermissions":[{"type":"addDirectories","directories":["/x/y"],"destination":"session"}]}`, tool.AnswerSession, false},
		{"grant saved", grant, `{"behavior":"allow","updatedPermissions":[{"type":"addDirectories","directories":["/x/y"],"destination":"userSettings"}]}`, tool.AnswerPermanent, false},
		{"garbage answer", run, `{"behavior":"maybe"}`, tool.AnswerDeny, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := newLines()
			inR, inW := io.Pipe()
			interrupted, denied := false, ""
			c := NewControl(out, io.Discard, Handlers{Interrupt: func() { interrupted = true },
				CallFor: func(string) string { return "toolu_9" }, Denied: func(id, _ string) { denied = id }})
			served := make(chan struct{})
			go func() { c.Serve(inR); close(served) }()
			got := make(chan tool.Answer, 1)
			go func() { got <- c.Ask(context.Background(), tc.q) }()
			req := <-out.next
			r := req["request"].(map[string]any)
			if r["subtype"] != "can_use_tool" || r["tool_name"] != "Bash" || r["tool_use_id"] != "toolu_9" || r["input"].(map[string]any)["command"] != tc.q.Command {
				t.Fatalf("request %v", req)
			}
			if tc.q.Kind == tool.AskGrant && r["blocked_path"] != "/x/y" {
				t.Errorf("blocked_path %v", r["blocked_path"])
			}
			resp := `{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":` + tc.reply + "}}\n"
			if _, err := io.WriteString(inW, resp); err != nil {
				t.Fatal(err)
			}
			if a := <-got; a != tc.want {
				t.Errorf("answer %v, want %v", a, tc.want)
			}
			if interrupted != tc.interrupt || (tc.want == tool.AnswerDeny) != (denied == "toolu_9") {
				t.Errorf("interrupted %v denied %q", interrupted, denied)
			}
			_ = inW.Close()
			<-served
		})
	}
}

// A question the host never answers ends with stdin (denied), with the
// turn (ctx), and is not asked at all in dontAsk.
func TestControlAskEnds(t *testing.T) {
	q := tool.Question{Kind: tool.AskRun, Command: "touch a"}
	out := newLines()
	inR, inW := io.Pipe()
	c := NewControl(out, io.Discard, Handlers{})
	served := make(chan struct{})
	go func() { c.Serve(inR); close(served) }()
	got := make(chan tool.Answer, 1)
	go func() { got <- c.Ask(context.Background(), q) }()
	<-out.next
	_ = inW.Close() // the host went away
	if a := <-got; a != tool.AnswerDeny {
		t.Errorf("after stdin closed: %v", a)
	}
	<-served

	c = NewControl(out, io.Discard, Handlers{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- c.Ask(ctx, q) }()
	<-out.next
	cancel()
	if a := <-got; a != tool.AnswerDeny {
		t.Errorf("after the turn ended: %v", a)
	}
	if m := <-out.next; m["type"] != "control_cancel_request" {
		t.Errorf("no cancel sent: %v", m)
	}
	c.SetAsking(false)
	if a := c.Ask(context.Background(), q); a != tool.Unanswered {
		t.Errorf("dontAsk: %v", a)
	}
}
