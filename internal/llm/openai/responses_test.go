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

func newResponsesProvider(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
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
	srv := llmtest.New(t)
	req := responsesRequest()
	req.MaxTokens = 900
	// input_tokens counts the cached ones: the server reports 160 in, 60 of them cached.
	resp, r := llmtest.CheckTextAnswer(t, newResponsesProvider(srv, nil, 0), srv, req)
	if resp.Model != "gpt-5" || r.Format != llmtest.FormatResponses {
		t.Errorf("model %q, format %q", resp.Model, r.Format)
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
	if !c.Announced() {
		t.Errorf("the call was not announced (output_item.added) before it arrived: %v", c.Seq)
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
	llmtest.CheckErrors(t, newResponsesProvider, responsesRequest(), []llmtest.ErrorCase{
		{Name: "429 retry-after then success", Script: []llmtest.Turn{{Status: 429, RetryAfter: "3"}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2, FirstWait: 3 * time.Second},
		{Name: "500 then success", Script: []llmtest.Turn{{Status: 500}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "500 exhausted", Script: []llmtest.Turn{{Status: 500}, {Status: 500}}, MaxRetries: 1, WantKind: llm.ErrStatus, WantInErr: []string{"gave up after 1 retry"}, WantTries: 2},
		{Name: "error event retried", Script: []llmtest.Turn{{StreamError: &llmtest.APIError{}}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "rate limit event retried", Script: []llmtest.Turn{{StreamError: &llmtest.APIError{Code: "rate_limit_exceeded", Message: "slow down"}}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "401", Script: []llmtest.Turn{llmtest.ErrorTurn(401, "Incorrect API key provided")}, MaxRetries: 2, WantKind: llm.ErrAuth, WantInErr: []string{"OPENAI_API_KEY"}, WantTries: 1},
		{Name: "404: no Responses API", Script: []llmtest.Turn{llmtest.ErrorTurn(404, "Not Found")}, MaxRetries: 2, WantKind: llm.ErrStatus, WantInErr: []string{"SYNAPSE_OPENAI_WIRE=chat"}, WantTries: 1},
		{Name: "context overflow", Script: []llmtest.Turn{{Status: 400, Error: llmtest.APIError{Type: "invalid_request_error", Code: "context_length_exceeded",
			Message: "Your input exceeds the context window of this model. Please adjust your input and try again."}}}, MaxRetries: 2, WantKind: llm.ErrBadRequest, WantInErr: []string{"/compact"}, WantTries: 1},
		{Name: "half-closed after output", Script: []llmtest.Turn{{Text: "a fairly long answer", CutAfter: 6}}, MaxRetries: 2, WantKind: llm.ErrConnection, WantInErr: []string{"closed before"}, WantTries: 1},
		{Name: "clean end without response.completed", Script: []llmtest.Turn{{Raw: "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"hi\",\"item_id\":\"m\",\"sequence_number\":0}\n\n"}},
			MaxRetries: 0, WantKind: llm.ErrConnection, WantInErr: []string{"response.completed"}, WantTries: 1},
		{Name: "not an event stream", Script: []llmtest.Turn{{Raw: "<html>hello</html>"}}, MaxRetries: 2, WantKind: llm.ErrProtocol, WantInErr: []string{"SYNAPSE_OPENAI_WIRE=chat"}, WantTries: 1},
		{Name: "output limit in the middle of a tool call", Script: []llmtest.Turn{{StopReason: "max_tokens", ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "Bash", RawInput: `{"command":"write a.txt <<EOF`}}}},
			MaxRetries: 2, WantKind: llm.ErrTruncated, WantInErr: []string{"max_tokens"}, WantTries: 1},
	})
}

func TestResponsesContextOverflowIsPromptTooLong(t *testing.T) {
	llmtest.CheckPromptTooLong(t, newResponsesProvider, responsesRequest())
}

func TestResponsesOutputLimit(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Text: "long", StopReason: "max_tokens"})
	resp, err := newResponsesProvider(srv, nil, 0).Stream(context.Background(), responsesRequest(), nil)
	if err != nil || resp.StopReason != llm.StopMaxTokens || resp.Message.Text != "long" {
		t.Fatalf("resp %+v, %v", resp, err)
	}
}

// Reasoning comes back with its encrypted content, and is streamed.
func TestResponsesPlainJSONAnswer(t *testing.T) {
	resp, ev := llmtest.CheckPlainJSONAnswer(t, newResponsesProvider, responsesRequest())
	if want := []llm.Thinking{{Text: "hmm", Encrypted: "sig-1"}}; !reflect.DeepEqual(resp.Message.Thinking, want) || ev.Thinking != "hmm" {
		t.Errorf("thinking %+v, streamed %q; want %+v", resp.Message.Thinking, ev.Thinking, want)
	}
}

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
