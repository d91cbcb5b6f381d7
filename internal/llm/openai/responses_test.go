package openai

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

func newResponsesProvider(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) *Provider {
	return New(Options{APIKey: "test-key", BaseURL: srv.OpenAIBaseURL(), Wire: WireResponses, Retry: llmtest.RetryPolicy(maxRetries, w)})
}

func responsesRequest(msgs ...llm.Message) llm.Request {
	req := baseRequest(msgs...)
	req.Model = "gpt-5"
	return req
}

func TestWireChoice(t *testing.T) {
	for _, tc := range []struct {
		base, wire, model string
		want              bool
	}{
		{"", "", "gpt-5", true},
		{"", "", "gpt-5-mini", true},
		{"", "", "o3", true},
		{"", "", "o4-mini", true},
		{"", "", "gpt-4o", false},
		{"", "chat", "gpt-5", false},
		{"http://127.0.0.1:11434/v1", "", "gpt-5", false}, // a compatible server: its model names prove nothing
		{"http://127.0.0.1:11434/v1", "responses", "qwen3", true},
	} {
		p := New(Options{BaseURL: tc.base, Wire: tc.wire})
		if got := p.useResponses(tc.model); got != tc.want {
			t.Errorf("base %q wire %q model %q: responses = %v, want %v", tc.base, tc.wire, tc.model, got, tc.want)
		}
	}
}

func TestResponsesTextAnswer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Text: "Hello there, ü…", Fragment: 3,
		Usage: llmtest.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, Exact: true}})
	var c llmtest.Events
	req := responsesRequest()
	req.MaxTokens = 900
	resp, err := newResponsesProvider(srv, nil, 0).Stream(context.Background(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "Hello there, ü…" || c.Text != resp.Message.Text || resp.StopReason != llm.StopEndTurn || resp.Model != "gpt-5" {
		t.Errorf("resp %+v, streamed %q", resp, c.Text)
	}
	// input_tokens counts the cached ones: 160 in, 60 of them cached.
	want := llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60}
	if resp.Usage != want || len(c.Usage) != 1 || c.Usage[0] != want {
		t.Errorf("usage %+v, events %+v; want %+v", resp.Usage, c.Usage, want)
	}
	r, _ := srv.LastRequest()
	if r.Format != llmtest.FormatResponses || !r.Stream || r.System != "You are a test." || r.MaxTokens != 900 || r.FirstUserText() != "hi" {
		t.Errorf("request %+v", r)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Description != "Run a command" {
		t.Errorf("tools %+v", r.Tools)
	}
	var raw struct {
		Store          *bool    `json:"store"`
		Include        []string `json:"include"`
		PromptCacheKey string   `json:"prompt_cache_key"`
		Tools          []struct {
			Type   string `json:"type"`
			Strict *bool  `json:"strict"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Store == nil || *raw.Store || !reflect.DeepEqual(raw.Include, []string{"reasoning.encrypted_content"}) {
		t.Errorf("store %v include %v: want store false with the encrypted reasoning included", raw.Store, raw.Include)
	}
	if raw.Tools[0].Type != "function" || raw.Tools[0].Strict == nil || *raw.Tools[0].Strict {
		t.Errorf("tool %+v: want a function with strict false", raw.Tools[0])
	}
	if raw.PromptCacheKey != "" {
		t.Errorf("prompt_cache_key %q sent to a server that is not api.openai.com", raw.PromptCacheKey)
	}
}

// The bar of the Responses wire: reasoning items come back in the next
// request as the API returned them (encrypted, without ids, before the
// call they led to), with the call and its output paired by call_id.
func TestResponsesToolRoundTripKeepsReasoning(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Thinking: "I should list the files.", Signature: "ENCRYPTED-1", ToolCalls: []llmtest.ToolCall{llmtest.BashCall("call_a", "ls -la")}},
		llmtest.TextTurn("Two files."),
	)
	p := newResponsesProvider(srv, nil, 0)
	var c llmtest.Events
	history := []llm.Message{{Role: llm.RoleUser, Text: "what is here?"}}
	resp, err := p.Stream(context.Background(), responsesRequest(history...), c.On)
	if err != nil {
		t.Fatal(err)
	}
	wantCall := llm.ToolCall{ID: "call_a", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}
	if resp.StopReason != llm.StopToolUse || !reflect.DeepEqual(resp.Message.ToolCalls, []llm.ToolCall{wantCall}) || !reflect.DeepEqual(c.Calls, []llm.ToolCall{wantCall}) {
		t.Fatalf("stop %q calls %+v events %+v", resp.StopReason, resp.Message.ToolCalls, c.Calls)
	}
	wantThinking := []llm.Thinking{{Text: "I should list the files.", Encrypted: "ENCRYPTED-1"}}
	if !reflect.DeepEqual(resp.Message.Thinking, wantThinking) || c.Thinking != "I should list the files." {
		t.Fatalf("thinking %+v, streamed %q", resp.Message.Thinking, c.Thinking)
	}
	// The message survives a session: it is stored as JSON and read back.
	stored, err := json.Marshal(resp.Message)
	if err != nil {
		t.Fatal(err)
	}
	var resumed llm.Message
	if err := json.Unmarshal(stored, &resumed); err != nil {
		t.Fatal(err)
	}
	history = append(history, resumed, llm.Message{Role: llm.RoleTool, ToolCallID: "call_a", Text: "a.txt b.txt"})
	resp, err = p.Stream(context.Background(), responsesRequest(history...), nil)
	if err != nil || resp.Message.Text != "Two files." {
		t.Fatalf("second answer %q, %v", resp.Message.Text, err)
	}
	r := srv.Requests()[1]
	if len(r.Messages) != 3 || r.Messages[1].Role != "assistant" {
		t.Fatalf("messages %+v", r.Messages)
	}
	a := r.Messages[1]
	if !reflect.DeepEqual(a.Thinking, []llmtest.Thinking{{Text: "I should list the files.", Encrypted: "ENCRYPTED-1"}}) {
		t.Errorf("reasoning sent back %+v", a.Thinking)
	}
	if len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_a" || string(a.ToolCalls[0].Input) != `{"command":"ls -la"}` {
		t.Errorf("call sent back %+v", a.ToolCalls)
	}
	if tr, ok := r.ToolResult("call_a"); !ok || tr.Content != "a.txt b.txt" {
		t.Errorf("output %+v", tr)
	}
	var raw struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(r.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, it := range raw.Input {
		types = append(types, it["type"].(string))
		if _, ok := it["id"]; ok {
			t.Errorf("item %v has an id: with store false it refers to nothing", it)
		}
	}
	if got := strings.Join(types, " "); got != "message reasoning function_call function_call_output" {
		t.Errorf("input items %s", got)
	}
}

// Thinking that is not this API's (Anthropic's signed blocks, Chat
// Completions reasoning text) is not sent; nor is reasoning whose turn
// said nothing (the API refuses a reasoning item with nothing after it).
func TestResponsesSendsOnlyItsOwnReasoning(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	req := responsesRequest(
		llm.Message{Role: llm.RoleUser, Text: "one"},
		llm.Message{Role: llm.RoleAssistant, Text: "a", Thinking: []llm.Thinking{{Text: "t", Signature: "anthropic-sig"}, {Text: "plain"}}},
		llm.Message{Role: llm.RoleUser, Text: "two"},
		llm.Message{Role: llm.RoleAssistant, Thinking: []llm.Thinking{{Encrypted: "orphan"}}},
		llm.Message{Role: llm.RoleUser, Text: "three"},
	)
	if _, err := newResponsesProvider(srv, nil, 0).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	var roles []string
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
		if len(m.Thinking) > 0 {
			t.Errorf("reasoning sent: %+v", m.Thinking)
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant user user" {
		t.Errorf("roles %s", got)
	}
}

func TestResponsesErrorsAndRetries(t *testing.T) {
	tests := []struct {
		name       string
		script     []llmtest.Turn
		maxRetries int
		wantKind   llm.ErrorKind
		wantMsg    string
		wantCount  int
		wantWaits  []time.Duration
	}{
		{name: "429 retry-after then success", script: []llmtest.Turn{{Status: 429, RetryAfter: "3"}, llmtest.TextTurn("ok")}, maxRetries: 2, wantCount: 2, wantWaits: []time.Duration{3 * time.Second}},
		{name: "500 then success", script: []llmtest.Turn{{Status: 500}, llmtest.TextTurn("ok")}, maxRetries: 2, wantCount: 2},
		{name: "500 exhausted", script: []llmtest.Turn{{Status: 500}, {Status: 500}}, maxRetries: 1, wantKind: llm.ErrStatus, wantMsg: "gave up after 1 retry", wantCount: 2},
		{name: "error event retried", script: []llmtest.Turn{{StreamError: &llmtest.APIError{}}, llmtest.TextTurn("ok")}, maxRetries: 2, wantCount: 2},
		{name: "rate limit event retried", script: []llmtest.Turn{{StreamError: &llmtest.APIError{Code: "rate_limit_exceeded", Message: "slow down"}}, llmtest.TextTurn("ok")}, maxRetries: 2, wantCount: 2},
		{name: "401", script: []llmtest.Turn{llmtest.ErrorTurn(401, "Incorrect API key provided")}, maxRetries: 2, wantKind: llm.ErrAuth, wantMsg: "OPENAI_API_KEY", wantCount: 1},
		{name: "404: no Responses API", script: []llmtest.Turn{llmtest.ErrorTurn(404, "Not Found")}, maxRetries: 2, wantKind: llm.ErrStatus, wantMsg: "SYNAPSE_OPENAI_WIRE=chat", wantCount: 1},
		{name: "context overflow", script: []llmtest.Turn{{Status: 400, Error: llmtest.APIError{Type: "invalid_request_error", Code: "context_length_exceeded",
			Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}}}, maxRetries: 2, wantKind: llm.ErrBadRequest, wantMsg: "/compact", wantCount: 1},
		{name: "half-closed after output", script: []llmtest.Turn{{Text: "a fairly long answer", CutAfter: 6}}, maxRetries: 2, wantKind: llm.ErrConnection, wantMsg: "closed before", wantCount: 1},
		{name: "clean end without response.completed", script: []llmtest.Turn{{Raw: "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"hi\",\"item_id\":\"m\",\"sequence_number\":0}\n\n"}},
			maxRetries: 0, wantKind: llm.ErrConnection, wantMsg: "response.completed", wantCount: 1},
		{name: "not an event stream", script: []llmtest.Turn{{Raw: "<html>hello</html>"}}, maxRetries: 2, wantKind: llm.ErrProtocol, wantMsg: "SYNAPSE_OPENAI_WIRE=chat", wantCount: 1},
		{name: "output limit in the middle of a tool call", script: []llmtest.Turn{{StopReason: "max_tokens", ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "Bash", RawInput: `{"command":"write a.txt <<EOF`}}}},
			maxRetries: 2, wantKind: llm.ErrTruncated, wantMsg: "max_tokens", wantCount: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.script...)
			var w llmtest.Waits
			var c llmtest.Events
			resp, err := newResponsesProvider(srv, &w, tc.maxRetries).Stream(context.Background(), responsesRequest(), c.On)
			if tc.wantKind == "" {
				if err != nil || resp.Message.Text != "ok" {
					t.Fatalf("resp %+v err %v", resp, err)
				}
				if len(c.Retries) != tc.wantCount-1 {
					t.Errorf("retry notices %+v", c.Retries)
				}
			} else {
				if llmtest.KindOf(err) != tc.wantKind || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("err = %v (kind %q), want %s containing %q", err, llmtest.KindOf(err), tc.wantKind, tc.wantMsg)
				}
				if len(c.Calls) != 0 {
					t.Errorf("calls emitted despite the error: %+v", c.Calls)
				}
			}
			if srv.Count() != tc.wantCount {
				t.Errorf("%d requests, want %d", srv.Count(), tc.wantCount)
			}
			if tc.wantWaits != nil && !reflect.DeepEqual(w.List(), tc.wantWaits) {
				t.Errorf("waits %v, want %v", w.List(), tc.wantWaits)
			}
		})
	}
}

func TestResponsesContextOverflowIsPromptTooLong(t *testing.T) {
	srv := llmtest.New(t)
	srv.LimitTokens(5)
	_, err := newResponsesProvider(srv, nil, 2).Stream(context.Background(), responsesRequest(), nil)
	if !llm.IsPromptTooLong(err) || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests, want one refusal the agent compacts for", err, srv.Count())
	}
}

func TestResponsesOutputLimit(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Text: "long", StopReason: "max_tokens"})
	resp, err := newResponsesProvider(srv, nil, 0).Stream(context.Background(), responsesRequest(), nil)
	if err != nil || resp.StopReason != llm.StopMaxTokens || resp.Message.Text != "long" {
		t.Fatalf("resp %+v, %v", resp, err)
	}
}

func TestResponsesPlainJSONAnswer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{PlainJSON: true, Text: "Looking…", Thinking: "hmm", Signature: "E",
		ToolCalls: []llmtest.ToolCall{llmtest.BashCall("call_a", "ls")},
		Usage:     llmtest.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 4, Exact: true}})
	var c llmtest.Events
	resp, err := newResponsesProvider(srv, nil, 0).Stream(context.Background(), responsesRequest(), c.On)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "Looking…" || c.Text != "Looking…" || c.Thinking != "hmm" || len(c.Calls) != 1 ||
		!reflect.DeepEqual(resp.Message.Thinking, []llm.Thinking{{Text: "hmm", Encrypted: "E"}}) {
		t.Errorf("resp %+v events %+v", resp.Message, c)
	}
	if resp.StopReason != llm.StopToolUse || resp.Usage != (llm.Usage{InputTokens: 10, OutputTokens: 2, CacheReadTokens: 4}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
}

// On api.openai.com a conversation's requests share a prompt_cache_key, so
// they reach the same cache; another conversation gets another key.
func TestResponsesPromptCacheKey(t *testing.T) {
	p := New(Options{Wire: WireResponses})
	key := func(first string, more ...llm.Message) string {
		req := responsesRequest(append([]llm.Message{{Role: llm.RoleUser, Text: first}}, more...)...)
		return p.responsesParams(req).PromptCacheKey.Value
	}
	a := key("task one")
	if a == "" || a != key("task one", llm.Message{Role: llm.RoleAssistant, Text: "x"}, llm.Message{Role: llm.RoleUser, Text: "more"}) {
		t.Errorf("keys of one conversation differ or are empty: %q", a)
	}
	if a == key("task two") {
		t.Error("two conversations share a key")
	}
}

func TestResponsesToolImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	srv := llmtest.New(t, llmtest.TextTurn("a cat"))
	p := New(Options{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), Wire: WireResponses, Images: "on"})
	history := []llm.Message{
		{Role: llm.RoleUser, Text: "show me"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"mcp:x:shot"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Text: "[image: image/png, 12 bytes]\n", Images: []llm.Image{{MediaType: "image/png", Data: png}}},
	}
	if _, err := p.Stream(context.Background(), responsesRequest(history...), nil); err != nil {
		t.Fatal(err)
	}
	tr, ok := srv.Requests()[0].ToolResult("c1")
	if !ok || !strings.HasPrefix(tr.Content, "[image: image/png") || len(tr.Images) != 1 || string(tr.Images[0].Data) != string(png) {
		t.Errorf("tool result %+v: want the image inside the function_call_output", tr)
	}
}

func TestResponsesCancel(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newResponsesProvider(srv, nil, 3) })
}

func TestResponsesStalledServer(t *testing.T) {
	llmtest.CheckStall(t, "OPENAI_BASE_URL", func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		return New(Options{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), Wire: WireResponses, IdleTimeout: idle, Retry: llmtest.RetryPolicy(maxRetries, &llmtest.Waits{})})
	})
}

// Growing and rewriting the history through one cache gives, at every
// step, the body of the whole request encoded afresh by a new provider.
func TestResponsesCachedBodyMatchesFullConversion(t *testing.T) {
	cached := New(Options{APIKey: "k", Wire: WireResponses, Images: "on"})
	check := func(req llm.Request, what string) {
		t.Helper()
		fresh := New(Options{APIKey: "k", Wire: WireResponses, Images: "on"})
		got, err := cached.responsesBody(cached.responsesParams(req), req.Messages)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fresh.responsesBody(fresh.responsesParams(req), req.Messages)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || !json.Valid(got) {
			t.Errorf("%s:\n got  %s\n want %s", what, got, want)
		}
	}
	h := history()
	h[1].Thinking = append(h[1].Thinking, llm.Thinking{Text: "summary", Encrypted: "ENC"})
	for n := 0; n <= len(h); n++ {
		req := responsesRequest(h[:n]...)
		check(req, "grow")
		check(req, "again")
	}
	req := responsesRequest(h...)
	req.Messages[3].Text = "[offloaded to sessions/x/offloaded/1.txt]"
	check(req, "offload")
	req.Messages[1].Thinking[1].Encrypted = "ENC2"
	check(req, "reasoning replaced")
	req.Messages = append([]llm.Message{{Role: llm.RoleUser, Text: "[Summary of the earlier conversation] ..."}}, req.Messages[8:]...)
	check(req, "compacted")
}
