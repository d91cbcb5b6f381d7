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

	"github.com/synapse-agent/synapse/internal/command"
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
		edit      *tool.Input // the command to run instead
	}{
		{"allow", run, `{"behavior":"allow","updatedInput":{"command":"touch a"}}`, tool.AnswerOnce, false, nil},
		{"allow always", run, `{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"}]}`, tool.AnswerAlways, false, nil},
		{"another command", run, `{"behavior":"allow","updatedInput":{"command":"rm -rf /"}}`, tool.AnswerOnce, false, &tool.Input{Command: "rm -rf /"}},
		{"same command, restarted", run, `{"behavior":"allow","updatedInput":{"command":"touch a","restart":true}}`, tool.AnswerOnce, false, &tool.Input{Command: "touch a", Restart: true}},
		{"grant as another command", grant, `{"behavior":"allow","updatedInput":{"command":"cat /tmp/y"}}`, tool.AnswerOnce, false, &tool.Input{Command: "cat /tmp/y"}},
		{"install changed", tool.Question{Kind: tool.AskInstall, Command: "skill:install x"}, `{"behavior":"allow","updatedInput":{"command":"skill:install y"}}`, tool.AnswerDeny, false, nil},
		{"deny", run, `{"behavior":"deny","message":"no"}`, tool.AnswerDeny, false, nil},
		{"deny and stop", run, `{"behavior":"deny","message":"no","interrupt":true}`, tool.AnswerDeny, true, nil},
		{"grant for the session", grant, `{"behavior":"allow","updatedPermissions":[{"type":"addDirectories","directories":["/x/y"],"destination":"session"}]}`, tool.AnswerSession, false, nil},
		{"grant saved", grant, `{"behavior":"allow","updatedPermissions":[{"type":"addDirectories","directories":["/x/y"],"destination":"userSettings"}]}`, tool.AnswerPermanent, false, nil},
		{"garbage answer", run, `{"behavior":"maybe"}`, tool.AnswerDeny, false, nil},
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
			var edit *tool.Input
			go func() {
				var a tool.Answer
				a, edit = c.AskRewrite(context.Background(), tc.q)
				got <- a
			}()
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
			if a := <-got; a != tc.want || (edit == nil) != (tc.edit == nil) || (edit != nil && *edit != *tc.edit) {
				t.Errorf("answer %v %+v, want %v %+v", a, edit, tc.want, tc.edit)
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

// A question about a command the host changed names the call's original
// command to find its tool_use id; plain Ask (a caller that cannot run
// another command) refuses a change.
func TestControlAskRewritten(t *testing.T) {
	out := newLines()
	inR, inW := io.Pipe()
	var looked []string
	c := NewControl(out, io.Discard, Handlers{CallFor: func(cmd string) string { looked = append(looked, cmd); return "toolu_1" }})
	served := make(chan struct{})
	go func() { c.Serve(inR); close(served) }()
	answer := func(reply string) {
		req := <-out.next
		resp := `{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) + `","response":` + reply + "}}\n"
		if _, err := io.WriteString(inW, resp); err != nil {
			t.Error(err)
		}
	}
	q := tool.Question{Kind: tool.AskRun, Command: "touch b", Original: "touch a"}
	go answer(`{"behavior":"allow"}`)
	if a, in := c.AskRewrite(context.Background(), q); a != tool.AnswerOnce || in != nil {
		t.Errorf("allow: %v %+v", a, in)
	}
	go answer(`{"behavior":"allow","updatedInput":{"command":"touch c"}}`)
	if a := c.Ask(context.Background(), q); a != tool.AnswerDeny {
		t.Errorf("Ask with a change: %v", a)
	}
	if len(looked) != 2 || looked[0] != "touch a" {
		t.Errorf("CallFor asked for %q", looked)
	}
	_ = inW.Close()
	<-served
}

// recExec is a shell that echoes the command lines it runs.
type recExec struct {
	mu  sync.Mutex
	ran []string
}

func (e *recExec) Execute(_ context.Context, cmd, _ string) (command.Result, error) {
	e.mu.Lock()
	e.ran = append(e.ran, cmd)
	e.mu.Unlock()
	return command.OK("ran " + cmd + "\n"), nil
}
func (e *recExec) Cwd() string                   { return "/w" }
func (e *recExec) Restart(context.Context) error { return nil }

// End to end through the gate and the tool: the host's canUseTool allows
// the ask mode's question with another command; that one runs instead,
// and the model's result says so.
func TestControlUpdatedInputRuns(t *testing.T) {
	out := newLines()
	inR, inW := io.Pipe()
	c := NewControl(out, io.Discard, Handlers{CallFor: func(string) string { return "toolu_1" }})
	served := make(chan struct{})
	go func() { c.Serve(inR); close(served) }()
	ex := &recExec{}
	b := tool.New(tool.Options{Exec: ex, Approver: tool.NewPermissions(c, tool.ModeAsk, "/w")})
	got := make(chan tool.Result, 1)
	go func() { got <- b.Run(context.Background(), tool.Input{Command: "touch a"}) }()
	req := <-out.next
	if in := req["request"].(map[string]any)["input"].(map[string]any); in["command"] != "touch a" {
		t.Fatalf("asked about %v", in)
	}
	resp := `{"type":"control_response","response":{"subtype":"success","request_id":"` + req["request_id"].(string) +
		`","response":{"behavior":"allow","updatedInput":{"command":"echo changed"}}}}` + "\n"
	if _, err := io.WriteString(inW, resp); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if len(ex.ran) != 1 || ex.ran[0] != "echo changed" || !strings.Contains(r.Output, "changed the command to: echo changed") ||
		!strings.Contains(r.Output, "ran echo changed") {
		t.Errorf("ran %q, result %q", ex.ran, r.Output)
	}
	_ = inW.Close()
	<-served
}
