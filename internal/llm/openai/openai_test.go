package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

func newProvider(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
	return New(Options{APIKey: "test-key", BaseURL: srv.OpenAIBaseURL(), Retry: llmtest.RetryPolicy(maxRetries, w)})
}

func baseRequest(msgs ...llm.Message) llm.Request { return llmtest.BaseRequest("gpt-4o", msgs...) }

func TestStreamFragmentsAndUsage(t *testing.T) {
	tests := []struct {
		name      string
		turn      llmtest.Turn
		wantText  string
		wantCalls []llm.ToolCall
		wantStop  string
		wantUsage llm.Usage
	}{
		{
			name: "text and two calls in one-byte fragments",
			turn: llmtest.Turn{Text: "Looking…", Fragment: 1, ToolCalls: []llmtest.ToolCall{llmtest.BashCall("call_a", "ls -la"), llmtest.BashCall("call_b", "echo \"ü\"")},
				Usage: llmtest.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, Exact: true}},
			wantText: "Looking…",
			wantCalls: []llm.ToolCall{
				{ID: "call_a", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)},
				{ID: "call_b", Name: "Bash", Input: json.RawMessage(`{"command":"echo \"ü\""}`)},
			},
			wantStop:  llm.StopToolUse,
			wantUsage: llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60},
		},
		{
			name:      "plain answer",
			turn:      llmtest.Turn{Text: "done", Usage: llmtest.Usage{InputTokens: 7, OutputTokens: 1, Exact: true}},
			wantText:  "done",
			wantStop:  llm.StopEndTurn,
			wantUsage: llm.Usage{InputTokens: 7, OutputTokens: 1},
		},
		{
			name:      "length without tool call",
			turn:      llmtest.Turn{Text: "long", StopReason: "max_tokens", Usage: llmtest.Usage{InputTokens: 1, OutputTokens: 1, Exact: true}},
			wantText:  "long",
			wantStop:  llm.StopMaxTokens,
			wantUsage: llm.Usage{InputTokens: 1, OutputTokens: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turn)
			resp, c := llmtest.Stream(t, newProvider(srv, nil, 0), baseRequest())
			if c.Text != tc.wantText || resp.Message.Text != tc.wantText {
				t.Errorf("text %q / %q, want %q", c.Text, resp.Message.Text, tc.wantText)
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, tc.wantCalls) || !reflect.DeepEqual(c.Calls, tc.wantCalls) {
				t.Errorf("calls %+v / events %+v, want %+v", resp.Message.ToolCalls, c.Calls, tc.wantCalls)
			}
			// Each call is announced by its first fragment, long before
			// the calls are whole (at the stream's end).
			if len(tc.wantCalls) > 0 && !c.Announced() || len(tc.wantCalls) == 0 && len(c.Seq) > 0 {
				t.Errorf("tool call events %v", c.Seq)
			}
			if resp.StopReason != tc.wantStop {
				t.Errorf("stop %q, want %q", resp.StopReason, tc.wantStop)
			}
			if resp.Usage != tc.wantUsage || len(c.Usage) != 1 || c.Usage[0] != tc.wantUsage {
				t.Errorf("usage %+v events %+v, want %+v", resp.Usage, c.Usage, tc.wantUsage)
			}
			r, _ := srv.LastRequest()
			var raw struct {
				StreamOptions struct {
					IncludeUsage bool `json:"include_usage"`
				} `json:"stream_options"`
			}
			_ = json.Unmarshal(r.Raw, &raw)
			if !r.Stream || !raw.StreamOptions.IncludeUsage {
				t.Errorf("request must stream with include_usage: %s", r.Raw)
			}
		})
	}
}

func TestReasoningDeltasAreThinking(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Thinking: "hmm, let me see", Text: "42"})
	resp, c := llmtest.Stream(t, newProvider(srv, nil, 0), baseRequest())
	if c.Thinking != "hmm, let me see" || len(resp.Message.Thinking) != 1 || resp.Message.Thinking[0].Text != "hmm, let me see" {
		t.Errorf("thinking %q %+v", c.Thinking, resp.Message.Thinking)
	}
}

func TestHistoryTranslation(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	req := baseRequest(
		llm.Message{Role: llm.RoleUser, Text: "list files"},
		llm.Message{Role: llm.RoleAssistant, Text: "sure", Thinking: []llm.Thinking{{Text: "t", Signature: "s"}}, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
			{ID: "c2", Name: "Bash", Input: json.RawMessage(`{"command":"pwd"}`)},
		}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Text: "a b"},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c2", Text: "/w", IsError: true},
		llm.Message{Role: llm.RoleUser, Text: "thanks"},
	)
	req.MaxTokens = 500
	if _, err := newProvider(srv, nil, 0).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	if r.System != "You are a test." || r.Model != "gpt-4o" || r.MaxTokens != 500 {
		t.Errorf("request %+v", r)
	}
	roles := []string{}
	for _, m := range r.Messages {
		roles = append(roles, m.Role)
	}
	if !reflect.DeepEqual(roles, []string{"user", "assistant", "tool", "tool", "user"}) {
		t.Fatalf("roles %v", roles)
	}
	a := r.Messages[1]
	if a.Text != "sure" || len(a.ToolCalls) != 2 || a.ToolCalls[1].ID != "c2" || string(a.ToolCalls[0].Input) != `{"command":"ls"}` || len(a.Thinking) != 0 {
		t.Errorf("assistant %+v", a)
	}
	if tr, ok := r.ToolResult("c2"); !ok || tr.Content != "/w" {
		t.Errorf("tool result %+v", tr)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Description != "Run a command" {
		t.Errorf("tools %+v", r.Tools)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("authorization %q", got)
	}
	var raw map[string]any
	_ = json.Unmarshal(r.Raw, &raw)
	if _, ok := raw["max_completion_tokens"]; ok {
		t.Error("a compatible server gets max_tokens, not max_completion_tokens")
	}
}

func TestNoKeySendsNoAuthorization(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	if _, err := New(Options{BaseURL: srv.OpenAIBaseURL()}).Stream(context.Background(), baseRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if r, _ := srv.LastRequest(); r.Header.Get("Authorization") != "" {
		t.Errorf("authorization sent: %q", r.Header.Get("Authorization"))
	}
}

func TestErrorsAndRetries(t *testing.T) {
	llmtest.CheckErrors(t, newProvider, baseRequest(), []llmtest.ErrorCase{
		{Name: "429 retry-after then success", Script: []llmtest.Turn{{Status: 429, RetryAfter: "3"}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2, FirstWait: 3 * time.Second},
		{Name: "500 exhausted", Script: []llmtest.Turn{{Status: 500}, {Status: 500}}, MaxRetries: 1, WantKind: llm.ErrStatus, WantInErr: []string{"gave up after 1 retry"}, WantTries: 2},
		{Name: "401", Script: []llmtest.Turn{llmtest.ErrorTurn(401, "Incorrect API key provided")}, MaxRetries: 2, WantKind: llm.ErrAuth, WantInErr: []string{"OPENAI_API_KEY"}, WantTries: 1},
		{Name: "404 model", Script: []llmtest.Turn{llmtest.ErrorTurn(404, "model 'qwen9' not found, try pulling it first")}, MaxRetries: 2, WantKind: llm.ErrStatus, WantInErr: []string{"qwen9"}, WantTries: 1},
		{Name: "stream error event retried", Script: []llmtest.Turn{{StreamError: &llmtest.APIError{}}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "half-closed after output", Script: []llmtest.Turn{{Text: "a fairly long answer", CutAfter: 3}}, MaxRetries: 2, WantKind: llm.ErrConnection, WantInErr: []string{"closed before"}, WantTries: 1},
		{Name: "clean end without finish_reason", Script: []llmtest.Turn{{Raw: "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"}}, MaxRetries: 0, WantKind: llm.ErrConnection, WantInErr: []string{"finish_reason"}, WantTries: 1},
		{Name: "context overflow", Script: []llmtest.Turn{llmtest.ErrorTurn(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130001 tokens.")}, MaxRetries: 2, WantKind: llm.ErrBadRequest, WantInErr: []string{"context window"}, WantTries: 1},
		{Name: "malformed chunk", Script: []llmtest.Turn{{Raw: "data: {oops\n\n"}}, MaxRetries: 2, WantKind: llm.ErrProtocol, WantTries: 1},
		{Name: "not an event stream", Script: []llmtest.Turn{{Raw: "<html>hello</html>"}}, MaxRetries: 2, WantKind: llm.ErrProtocol, WantInErr: []string{"/v1"}, WantTries: 1},
		{Name: "length in the middle of a tool call", Script: []llmtest.Turn{{StopReason: "max_tokens", ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "Bash", RawInput: `{"command":"write a.txt <<EOF`}}}}, MaxRetries: 2, WantKind: llm.ErrTruncated, WantInErr: []string{"max_tokens"}, WantTries: 1},
	})
}

func TestWholeCallsAtIndexZero(t *testing.T) {
	// Some compatible servers send each whole call in one chunk, all with index 0.
	raw := `data: {"id":"1","model":"llama","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}}]}}]}

data: {"id":"1","model":"llama","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"pwd\"}"}}]}}]}

data: {"id":"1","model":"llama","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`
	srv := llmtest.New(t, llmtest.Turn{Raw: raw})
	resp, err := newProvider(srv, nil, 0).Stream(context.Background(), baseRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[1].ID != "c2" || string(resp.Message.ToolCalls[1].Input) != `{"command":"pwd"}` {
		t.Errorf("calls %+v", resp.Message.ToolCalls)
	}
	if resp.StopReason != llm.StopToolUse || resp.Model != "llama" {
		t.Errorf("stop %q model %q", resp.StopReason, resp.Model)
	}
}

func TestCancel(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newProvider(srv, nil, 3) })
}

func TestMalformedToolArgumentsAreReturned(t *testing.T) {
	llmtest.CheckMalformedToolArguments(t, newProvider, baseRequest())
}

// Chat Completions reasoning text comes back unsigned.
func TestPlainJSONAnswerToStreamingRequest(t *testing.T) {
	resp, _ := llmtest.CheckPlainJSONAnswer(t, newProvider, baseRequest())
	if want := []llm.Thinking{{Text: "hmm"}}; !reflect.DeepEqual(resp.Message.Thinking, want) {
		t.Errorf("thinking %+v, want %+v", resp.Message.Thinking, want)
	}
}

// Tool images reach the model as image_url parts of a user message after the
// turn's tool messages when images are on, and not at all when off (the tool
// text names them; compatible servers are off unless told otherwise).
func TestToolImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	history := []llm.Message{
		{Role: llm.RoleUser, Text: "show me"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"mcp:x:shot"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Text: "[image: image/png, 12 bytes]\n", Images: []llm.Image{{MediaType: "image/png", Data: png}}},
	}
	for _, c := range []struct {
		images string
		want   bool
	}{{"on", true}, {"", false}, {"off", false}} {
		t.Run("images="+c.images, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.TextTurn("a cat"))
			p := New(Options{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), Images: c.images})
			if _, err := p.Stream(context.Background(), baseRequest(history...), nil); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Requests()[0].Messages
			last := msgs[len(msgs)-1]
			if !c.want {
				if last.Role != "tool" || len(last.Images) != 0 {
					t.Errorf("images sent with Images=%q: %+v", c.images, msgs)
				}
				return
			}
			if last.Role != "user" || len(last.Images) != 1 || last.Images[0].MediaType != "image/png" || string(last.Images[0].Data) != string(png) {
				t.Fatalf("last message = %+v, want a user message carrying the png", last)
			}
			if !strings.Contains(last.Text, "c1") || msgs[len(msgs)-2].Role != "tool" {
				t.Errorf("image message does not follow the tool message naming its call: %+v", msgs)
			}
		})
	}
}

// A prompt's images are image_url parts of its user message when images
// are on; off, the message is its text alone (which names them).
func TestPromptImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("images=", on), func(t *testing.T) {
			srv := llmtest.New(t, llmtest.TextTurn("a cat"))
			opts := Options{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), Images: "off"}
			if on {
				opts.Images = "on"
			}
			p := New(opts)
			req := baseRequest(llm.Message{Role: llm.RoleUser, Text: "what is this? [image 1: image/png]", Images: []llm.Image{{MediaType: "image/png", Data: png}}})
			if _, err := p.Stream(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			msgs := srv.Requests()[0].Messages
			m := msgs[len(msgs)-1]
			if m.Role != "user" || m.Text != "what is this? [image 1: image/png]" {
				t.Fatalf("user message = %+v", m)
			}
			if got := len(m.Images) == 1 && m.Images[0].MediaType == "image/png" && string(m.Images[0].Data) == string(png); got != on {
				t.Errorf("image sent = %v with images %v: %+v", got, on, m.Images)
			}
		})
	}
}

func TestStalledServer(t *testing.T) {
	llmtest.CheckStall(t, "OPENAI_BASE_URL", func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		return New(Options{APIKey: "k", BaseURL: srv.OpenAIBaseURL(), IdleTimeout: idle, Retry: llmtest.RetryPolicy(maxRetries, &llmtest.Waits{})})
	})
}
