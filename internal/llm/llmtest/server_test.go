package llmtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

type sseEvent struct {
	name string
	data string
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// readSSE reads events until the body ends; err is the read error, if any.
func readSSE(r io.Reader) ([]sseEvent, error) {
	var out []sseEvent
	sc := bufio.NewScanner(r)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out, sc.Err()
}

func TestAnthropicStreamEvents(t *testing.T) {
	s := New(t, Turn{
		Thinking:  "let me think",
		Text:      "héllo wörld, quite a long text",
		ToolCalls: []ToolCall{BashCall("c1", "ls -la /tmp"), {ID: "c2", Name: "Bash", Input: map[string]any{"command": "pwd"}}},
		Usage:     Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, CacheCreationTokens: 40},
	})
	resp := post(t, s.URL()+"/v1/messages", `{"model":"m1","stream":true,"system":[{"type":"text","text":"sys"}],"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{"type":"object"}}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events, err := readSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var text, thinking, sig string
	args := map[int]string{}
	var stop string
	var usage map[string]any
	for _, e := range events {
		var d map[string]any
		if err := json.Unmarshal([]byte(e.data), &d); err != nil {
			t.Fatalf("event %s: bad JSON %q", e.name, e.data)
		}
		if d["type"] != e.name {
			t.Errorf("event %q has type %v", e.name, d["type"])
		}
		names = append(names, e.name)
		if e.name == "content_block_delta" {
			delta := d["delta"].(map[string]any)
			idx := int(d["index"].(float64))
			switch delta["type"] {
			case "text_delta":
				text += delta["text"].(string)
			case "thinking_delta":
				thinking += delta["thinking"].(string)
			case "signature_delta":
				sig = delta["signature"].(string)
			case "input_json_delta":
				args[idx] += delta["partial_json"].(string)
			}
		}
		if e.name == "message_delta" {
			stop = d["delta"].(map[string]any)["stop_reason"].(string)
			usage = d["usage"].(map[string]any)
		}
	}
	if names[0] != "message_start" || names[1] != "ping" || names[len(names)-1] != "message_stop" {
		t.Errorf("event order: %v", names)
	}
	if text != "héllo wörld, quite a long text" || thinking != "let me think" || sig == "" {
		t.Errorf("text %q thinking %q sig %q", text, thinking, sig)
	}
	if args[2] != `{"command":"ls -la /tmp"}` || args[3] != `{"command":"pwd"}` {
		t.Errorf("args %v", args)
	}
	deltas := 0
	for _, n := range names {
		if n == "content_block_delta" {
			deltas++
		}
	}
	if deltas < 10 {
		t.Errorf("only %d deltas: arguments should arrive in many fragments", deltas)
	}
	if stop != "tool_use" || usage["cache_read_input_tokens"] != 30.0 || usage["cache_creation_input_tokens"] != 40.0 || usage["output_tokens"] != 20.0 {
		t.Errorf("stop %q usage %v", stop, usage)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m1" || reqs[0].System != "sys" || reqs[0].FirstUserText() != "hi" || reqs[0].ToolNames()[0] != "Bash" || !reqs[0].Stream {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestOpenAIStreamChunks(t *testing.T) {
	s := New(t, Turn{Text: "hello there", ToolCalls: []ToolCall{BashCall("call_1", "echo hi"), BashCall("call_2", "date")}, Usage: Usage{InputTokens: 5, OutputTokens: 7, CacheReadTokens: 3}})
	resp := post(t, s.OpenAIBaseURL()+"/chat/completions", `{"model":"gpt","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"sys"},{"role":"user","content":"hi"}]}`)
	events, err := readSSE(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if events[len(events)-1].data != "[DONE]" {
		t.Fatalf("last event %q", events[len(events)-1].data)
	}
	var text, finish string
	args := map[int]string{}
	ids := map[int]string{}
	var usage map[string]any
	for _, e := range events[:len(events)-1] {
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(e.data), &c); err != nil {
			t.Fatalf("bad chunk %q", e.data)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
		for _, ch := range c.Choices {
			text += ch.Delta.Content
			for _, tc := range ch.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.ID != "" {
					ids[tc.Index] = tc.ID
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if text != "hello there" || finish != "tool_calls" || ids[0] != "call_1" || ids[1] != "call_2" || args[1] != `{"command":"date"}` {
		t.Errorf("text %q finish %q ids %v args %v", text, finish, ids, args)
	}
	if usage["prompt_tokens"] != 8.0 || usage["completion_tokens"] != 7.0 {
		t.Errorf("usage %v", usage)
	}
	if r, _ := s.LastRequest(); r.System != "sys" || r.Format != FormatOpenAI {
		t.Errorf("recorded %+v", r)
	}
}

func TestNonStreamingReplies(t *testing.T) {
	tests := []struct {
		name, path, body, want string
	}{
		{"anthropic", "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, `"stop_reason":"tool_use"`},
		{"openai", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`, `"finish_reason":"tool_calls"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(t, ToolTurn(BashCall("a", "ls")))
			resp := post(t, s.URL()+tc.path, tc.body)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.Contains(string(b), tc.want) || !strings.Contains(string(b), `ls`) {
				t.Errorf("%d %s", resp.StatusCode, b)
			}
		})
	}
}

func TestErrorTurnAndRetryAfter(t *testing.T) {
	s := New(t, Turn{Status: 429, RetryAfter: "2", RetryAfterMs: "5"}, ErrorTurn(401, "bad key"))
	resp := post(t, s.URL()+"/v1/messages", `{"model":"m","messages":[]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || resp.Header.Get("Retry-After-Ms") != "5" || !strings.Contains(string(b), "rate_limit_error") {
		t.Errorf("%d %v %s", resp.StatusCode, resp.Header, b)
	}
	resp = post(t, s.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[]}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || !strings.Contains(string(b), "bad key") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

func TestCutAfterIsHalfClosed(t *testing.T) {
	s := New(t, Turn{Text: "a long answer that will be cut", CutAfter: 4})
	resp := post(t, s.URL()+"/v1/messages", `{"model":"m","stream":true,"messages":[]}`)
	events, err := readSSE(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want unexpected EOF", err)
	}
	if len(events) != 4 {
		t.Errorf("got %d events, want 4", len(events))
	}
}

func TestHandlerConcurrencyAndUnexpected(t *testing.T) {
	s := NewServer()
	defer s.Close()
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(3)
	s.Handle(func(r *Request) Turn {
		arrived.Done()
		<-release
		return TextTurn("echo: " + r.FirstUserText())
	})
	var wg sync.WaitGroup
	bodies := make([]string, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"q`+itoa(i)+`"}]}`))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
		}()
	}
	arrived.Wait()
	if got := s.InFlight(); got != 3 {
		t.Errorf("in flight %d, want 3", got)
	}
	close(release)
	wg.Wait()
	if s.MaxConcurrent() != 3 || s.Count() != 3 {
		t.Errorf("max %d count %d", s.MaxConcurrent(), s.Count())
	}
	for i, b := range bodies {
		if !strings.Contains(b, "echo: q"+itoa(i)) {
			t.Errorf("body %d: %s", i, b)
		}
	}

	s.Handle(nil)
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || len(s.Unexpected()) != 1 {
		t.Errorf("status %d unexpected %v", resp.StatusCode, s.Unexpected())
	}
}

func TestDelayEndsWhenClientLeaves(t *testing.T) {
	s := New(t, Turn{Text: "late", Delay: time.Hour})
	req, _ := http.NewRequest("POST", s.URL()+"/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	client := &http.Client{Timeout: 50 * time.Millisecond}
	if _, err := client.Do(req); err == nil {
		t.Fatal("expected a timeout")
	}
	// Close (in cleanup) must not hang on the abandoned handler.
}

func TestFragmentsKeepUTF8(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		s := "añb€c😀d"
		got := fragments(s, n)
		if strings.Join(got, "") != s {
			t.Fatalf("n=%d: %q", n, got)
		}
		for _, f := range got {
			if !utf8Valid(f) {
				t.Errorf("n=%d: fragment %q splits a rune", n, f)
			}
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestDecodeRequests(t *testing.T) {
	a, err := decodeAnthropic([]byte(`{"model":"m","messages":[
		{"role":"user","content":[{"type":"text","text":"q"}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"ok"},{"type":"tool_use","id":"1","name":"Bash","input":{"command":"ls"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"1","content":[{"type":"text","text":"out"}],"is_error":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Messages[1].Thinking[0].Signature != "s" || a.Messages[1].ToolCalls[0].Name != "Bash" || a.Turns() != 1 {
		t.Errorf("%+v", a)
	}
	if tr, ok := a.ToolResult("1"); !ok || tr.Content != "out" || !tr.IsError || len(a.LastToolResults()) != 1 {
		t.Errorf("%+v", a.ToolResults())
	}
	o, err := decodeOpenAI([]byte(`{"model":"m","messages":[{"role":"user","content":"q"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"Bash","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c","content":"res"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if tr, ok := o.ToolResult("c"); !ok || tr.Content != "res" || o.Messages[1].ToolCalls[0].ID != "c" {
		t.Errorf("%+v", o)
	}
	if _, err := decodeAnthropic([]byte(`{`)); err == nil {
		t.Error("want error for bad JSON")
	}
}

// LimitTokens refuses a request over the limit as the real APIs do, keeps
// the script for the next one, and counts a request at least as the agent's
// estimate does (four bytes a token, plus an overhead per block).
func TestLimitTokensRefusesLongPrompts(t *testing.T) {
	s := New(t, TextTurn("fits"))
	s.LimitTokens(100)
	long := strings.Repeat("x", 400)
	resp := post(t, s.URL()+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"`+long+`"}]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), `prompt is too long: 116 tokens \u003e 100 maximum`) {
		t.Errorf("anthropic: %d %s", resp.StatusCode, b)
	}
	resp = post(t, s.OpenAIBaseURL()+"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"`+long+`"}]}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "maximum context length is 100 tokens") {
		t.Errorf("openai: %d %s", resp.StatusCode, b)
	}
	resp = post(t, s.URL()+"/v1/messages", `{"model":"m","messages":[{"role":"user","content":"short"}]}`)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "fits") {
		t.Errorf("a request under the limit: %d %s", resp.StatusCode, b)
	}
	if got := s.Refused(); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Errorf("Refused() = %v, want [0 1]", got)
	}
}

// The Responses wire: event and data type agree, sequence numbers count up,
// every item is added, streamed and done in order, the final event carries
// the usage (input_tokens with the cached ones), and encrypted reasoning is
// sent only when the request includes it.
func TestResponsesStreamEvents(t *testing.T) {
	turn := Turn{Thinking: "let me think", Signature: "ENC", Text: "héllo wörld", ToolCalls: []ToolCall{BashCall("call_1", "ls -la /tmp")},
		Usage: Usage{InputTokens: 5, OutputTokens: 7, CacheReadTokens: 3}}
	for _, include := range []bool{true, false} {
		s := New(t, turn)
		body := `{"model":"gpt-5","stream":true,"instructions":"sys","input":[{"role":"user","content":"hi"}],"tools":[{"type":"function","name":"Bash","parameters":{"type":"object"},"strict":false}]}`
		if include {
			body = strings.Replace(body, `"stream":true`, `"stream":true,"include":["reasoning.encrypted_content"]`, 1)
		}
		resp := post(t, s.OpenAIBaseURL()+"/responses", body)
		events, err := readSSE(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var text, thinking, args, encrypted string
		var usage map[string]any
		for i, e := range events {
			var d map[string]any
			if err := json.Unmarshal([]byte(e.data), &d); err != nil {
				t.Fatalf("event %s: bad JSON %q", e.name, e.data)
			}
			if d["type"] != e.name || d["sequence_number"] != float64(i) {
				t.Errorf("event %d %q has type %v, sequence_number %v", i, e.name, d["type"], d["sequence_number"])
			}
			names = append(names, e.name)
			switch e.name {
			case "response.output_text.delta":
				text += d["delta"].(string)
			case "response.reasoning_summary_text.delta":
				thinking += d["delta"].(string)
			case "response.function_call_arguments.delta":
				args += d["delta"].(string)
			case "response.output_item.done":
				if item := d["item"].(map[string]any); item["type"] == "reasoning" {
					encrypted, _ = item["encrypted_content"].(string)
				}
			case "response.completed":
				usage = d["response"].(map[string]any)["usage"].(map[string]any)
			}
		}
		if names[0] != "response.created" || names[1] != "response.in_progress" || names[len(names)-1] != "response.completed" {
			t.Errorf("event order: %v", names)
		}
		if text != "héllo wörld" || thinking != "let me think" || args != `{"command":"ls -la /tmp"}` {
			t.Errorf("text %q thinking %q args %q", text, thinking, args)
		}
		if want := map[bool]string{true: "ENC", false: ""}[include]; encrypted != want {
			t.Errorf("include %v: encrypted_content %q, want %q", include, encrypted, want)
		}
		if usage["input_tokens"] != 8.0 || usage["input_tokens_details"].(map[string]any)["cached_tokens"] != 3.0 || usage["output_tokens"] != 7.0 {
			t.Errorf("usage %v", usage)
		}
		r, _ := s.LastRequest()
		if r.Format != FormatResponses || r.System != "sys" || r.FirstUserText() != "hi" || r.ToolNames()[0] != "Bash" || !r.Stream {
			t.Errorf("recorded %+v", r)
		}
	}
}

func TestDecodeResponsesRequest(t *testing.T) {
	r, err := decodeResponses([]byte(`{"model":"m","instructions":"sys","input":[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
		{"type":"reasoning","summary":[{"type":"summary_text","text":"t"}],"encrypted_content":"E"},
		{"type":"message","role":"assistant","content":"ok"},
		{"type":"function_call","call_id":"c","name":"Bash","arguments":"{}"},
		{"type":"function_call_output","call_id":"c","output":"res"},
		{"role":"user","content":"next"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	a := r.Messages[1]
	if len(r.Messages) != 4 || r.System != "sys" || r.Turns() != 1 || a.Text != "ok" || a.Thinking[0] != (Thinking{Text: "t", Encrypted: "E"}) || a.ToolCalls[0].ID != "c" {
		t.Errorf("%+v", r)
	}
	if tr, ok := r.ToolResult("c"); !ok || tr.Content != "res" || r.LastUserText() != "next" {
		t.Errorf("%+v", r.ToolResults())
	}
	if _, err := decodeResponses([]byte(`{"input":[{"type":"mystery"}]}`)); err == nil {
		t.Error("want an error for an unknown item type")
	}
}

func TestGeminiStream(t *testing.T) {
	s := New(t, Turn{
		Text:      "héllo wörld",
		ToolCalls: []ToolCall{BashCall("c1", "ls"), {Name: "Bash", Input: map[string]any{"command": "pwd"}}},
		Signature: "state",
		Usage:     Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 30, Exact: true},
	})
	resp := post(t, s.URL()+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"systemInstruction":{"role":"user","parts":[{"text":"sys"}]},"tools":[{"functionDeclarations":[{"name":"Bash","parametersJsonSchema":{"type":"object"}}]}]}`)
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := strings.Split(strings.TrimSuffix(string(body), "\r\n\r\n"), "\r\n\r\n")
	var text string
	var last map[string]any
	for _, e := range events {
		data, ok := strings.CutPrefix(e, "data: ")
		if !ok {
			t.Fatalf("event %q is not a data line", e)
		}
		var chunk struct {
			Candidates []struct {
				Content struct {
					Role  string           `json:"role"`
					Parts []map[string]any `json:"parts"`
				} `json:"content"`
			} `json:"candidates"`
			ModelVersion string `json:"modelVersion"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil || len(chunk.Candidates) != 1 || chunk.Candidates[0].Content.Role != "model" || chunk.ModelVersion != "gemini-2.5-pro" {
			t.Fatalf("chunk %s (%v)", data, err)
		}
		for _, p := range chunk.Candidates[0].Content.Parts {
			if s, ok := p["text"].(string); ok {
				text += s
			}
		}
		_ = json.Unmarshal([]byte(data), &last)
	}
	if text != "héllo wörld" {
		t.Errorf("text %q", text)
	}
	cand := last["candidates"].([]any)[0].(map[string]any)
	parts := cand["content"].(map[string]any)["parts"].([]any)
	first, second := parts[0].(map[string]any), parts[1].(map[string]any)
	if cand["finishReason"] != "STOP" || first["thoughtSignature"] != "c3RhdGU=" || second["thoughtSignature"] != nil {
		t.Errorf("last chunk %v", last)
	}
	if fc := first["functionCall"].(map[string]any); fc["id"] != "c1" || fc["name"] != "Bash" {
		t.Errorf("first call %v", fc)
	}
	if fc := second["functionCall"].(map[string]any); fc["id"] != nil {
		t.Errorf("a call the script gave no id has one: %v", fc)
	}
	u := last["usageMetadata"].(map[string]any)
	if u["promptTokenCount"] != 40.0 || u["cachedContentTokenCount"] != 30.0 || u["candidatesTokenCount"] != 20.0 || u["totalTokenCount"] != 60.0 {
		t.Errorf("usage %v", u)
	}
	r, _ := s.LastRequest()
	if r.Format != FormatGemini || r.Model != "gemini-2.5-pro" || !r.Stream || r.System != "sys" || r.FirstUserText() != "hi" || len(r.Tools) != 1 {
		t.Errorf("request %+v", r)
	}
}

func TestGeminiErrors(t *testing.T) {
	s := New(t, Turn{Status: 429, RetryAfter: "7"}, TextTurn("never"))
	resp := post(t, s.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != 429 || e.Error.Code != 429 || e.Error.Status != "RESOURCE_EXHAUSTED" ||
		len(e.Error.Details) != 1 || e.Error.Details[0]["retryDelay"] != "7s" {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
	// A model turn whose first call has no thought signature is refused, as Gemini 3 does.
	resp = post(t, s.URL()+"/v1beta/models/m:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"Bash","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"Bash","response":{"output":"x"}}}]}]}`)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "missing a thought_signature") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// ForgetRequests keeps the count and the newest request, nothing of the rest.
func TestForgetRequests(t *testing.T) {
	s := New(t, TextTurn("a"), TextTurn("b"), TextTurn("c"))
	s.ForgetRequests()
	for _, q := range []string{"first", "second", "third"} {
		resp := post(t, s.URL()+"/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"`+q+`"}]}`)
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	reqs := s.Requests()
	if len(reqs) != 3 || s.Count() != 3 {
		t.Fatalf("%d requests, count %d; want 3", len(reqs), s.Count())
	}
	if len(reqs[0].Messages) != 0 || len(reqs[0].Raw) != 0 || len(reqs[1].Messages) != 0 || reqs[1].Index != 1 {
		t.Errorf("an earlier request was kept: %+v", reqs[1])
	}
	if last, _ := s.LastRequest(); last.LastUserText() != "third" || last.Index != 2 {
		t.Errorf("newest request %q #%d, want third #2", last.LastUserText(), last.Index)
	}
}
