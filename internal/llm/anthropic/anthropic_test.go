package anthropic

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

func newProvider(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
	return New(Options{APIKey: "test-key", BaseURL: srv.URL(), Retry: llmtest.RetryPolicy(maxRetries, w)})
}

func baseRequest(msgs ...llm.Message) llm.Request {
	return llmtest.BaseRequest("claude-sonnet-4-5", msgs...)
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %q", want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}

func TestStreamAssemblesToolCalls(t *testing.T) {
	tests := []struct {
		name      string
		turn      llmtest.Turn
		wantText  string
		wantCalls []string // id:name:json
		wantStop  string
	}{
		{
			name:      "one call split into single-byte deltas",
			turn:      llmtest.Turn{ToolCalls: []llmtest.ToolCall{llmtest.BashCall("c1", "ls -la /tmp && echo 'done ✓'")}, Fragment: 1},
			wantCalls: []string{`c1:Bash:{"command":"ls -la /tmp && echo 'done ✓'"}`},
			wantStop:  llm.StopToolUse,
		},
		{
			name: "text then three calls in one message",
			turn: llmtest.Turn{Text: "Let me look around.", Fragment: 3, ToolCalls: []llmtest.ToolCall{
				llmtest.BashCall("a", "read go.mod"),
				llmtest.BashCall("b", "task:explore internal/"),
				{ID: "c", Name: "Bash", Input: map[string]any{"command": "git status", "restart": true}},
			}},
			wantText: "Let me look around.",
			wantCalls: []string{
				`a:Bash:{"command":"read go.mod"}`,
				`b:Bash:{"command":"task:explore internal/"}`,
				`c:Bash:{"command":"git status","restart":true}`,
			},
			wantStop: llm.StopToolUse,
		},
		{
			name:      "call without arguments",
			turn:      llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "n", Name: "Bash"}}},
			wantCalls: []string{`n:Bash:{}`},
			wantStop:  llm.StopToolUse,
		},
		{
			name:     "plain text",
			turn:     llmtest.TextTurn("héllo, wörld"),
			wantText: "héllo, wörld",
			wantStop: llm.StopEndTurn,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turn)
			resp, c := llmtest.Stream(t, newProvider(srv, nil, 0), baseRequest())
			if c.Text != tc.wantText || resp.Message.Text != tc.wantText {
				t.Errorf("text: events %q, message %q, want %q", c.Text, resp.Message.Text, tc.wantText)
			}
			if resp.StopReason != tc.wantStop {
				t.Errorf("stop %q, want %q", resp.StopReason, tc.wantStop)
			}
			if len(c.Calls) != len(tc.wantCalls) || len(resp.Message.ToolCalls) != len(tc.wantCalls) {
				t.Fatalf("calls: events %v, message %v, want %v", c.Calls, resp.Message.ToolCalls, tc.wantCalls)
			}
			// Each call is announced when its block starts, before its input.
			if len(tc.wantCalls) > 0 && !c.Announced() || len(tc.wantCalls) == 0 && len(c.Seq) > 0 {
				t.Errorf("tool call events %v", c.Seq)
			}
			for i, want := range tc.wantCalls {
				parts := strings.SplitN(want, ":", 3)
				for _, got := range []llm.ToolCall{c.Calls[i], resp.Message.ToolCalls[i]} {
					if got.ID != parts[0] || got.Name != parts[1] {
						t.Errorf("call %d = %s/%s, want %s/%s", i, got.ID, got.Name, parts[0], parts[1])
					}
					jsonEqual(t, got.Input, parts[2])
				}
			}
			if resp.Message.Role != llm.RoleAssistant || resp.Model != "claude-sonnet-4-5" {
				t.Errorf("role %q model %q", resp.Message.Role, resp.Model)
			}
		})
	}
}

func TestThinkingSignatureRoundTripAndToolResultsFolded(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Thinking: "I should list files first.", Signature: "sig-XYZ", RedactedThinking: "opaque==",
			ToolCalls: []llmtest.ToolCall{llmtest.BashCall("t1", "ls"), llmtest.BashCall("t2", "pwd")}},
		llmtest.TextTurn("two results seen"),
	)
	p := newProvider(srv, nil, 0)
	var c llmtest.Events
	req := baseRequest()
	req.ThinkingBudget = 2048
	resp, err := p.Stream(context.Background(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if c.Thinking != "I should list files first." {
		t.Errorf("thinking events %q", c.Thinking)
	}
	wantThinking := []llm.Thinking{{Text: "I should list files first.", Signature: "sig-XYZ"}, {Redacted: "opaque=="}}
	if !reflect.DeepEqual(resp.Message.Thinking, wantThinking) {
		t.Errorf("thinking %+v", resp.Message.Thinking)
	}
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "t1", Text: "a.txt\nb.txt"},
		llm.Message{Role: llm.RoleTool, ToolCallID: "t2", Text: "boom", IsError: true},
		llm.Message{Role: llm.RoleUser, Text: "[System Reminder] keep going"},
	)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	second := srv.Requests()[1]
	if len(second.Messages) != 3 {
		t.Fatalf("want user, assistant, user; got %d messages: %+v", len(second.Messages), second.Messages)
	}
	asst := second.Messages[1]
	if asst.Role != "assistant" || !reflect.DeepEqual(asst.Thinking, []llmtest.Thinking{{Text: "I should list files first.", Signature: "sig-XYZ"}, {Redacted: "opaque=="}}) {
		t.Errorf("assistant sent back %+v", asst)
	}
	if len(asst.ToolCalls) != 2 || asst.ToolCalls[1].ID != "t2" {
		t.Errorf("tool calls sent back %+v", asst.ToolCalls)
	}
	last := second.Messages[2]
	want := []llmtest.ToolResult{{ToolCallID: "t1", Content: "a.txt\nb.txt"}, {ToolCallID: "t2", Content: "boom", IsError: true}}
	if last.Role != "user" || !reflect.DeepEqual(last.ToolResults, want) || last.Text != "[System Reminder] keep going" {
		t.Errorf("folded user message %+v", last)
	}
	var raw struct {
		Thinking struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(second.Raw, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Thinking.Type != "enabled" || raw.Thinking.BudgetTokens != 2048 || raw.MaxTokens <= 2048 {
		t.Errorf("thinking config %+v", raw)
	}
}

func TestUsageIncludesCacheTokens(t *testing.T) {
	llmtest.CheckUsage(t, newProvider, baseRequest(),
		llmtest.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 5600, CacheCreationTokens: 780},
		llm.Usage{InputTokens: 12, OutputTokens: 34, CacheReadTokens: 5600, CacheCreationTokens: 780})
}

func TestCacheControlInRequest(t *testing.T) {
	type cc struct {
		CacheControl *struct {
			Type string `json:"type"`
		} `json:"cache_control"`
	}
	type body struct {
		System   []cc `json:"system"`
		Tools    []cc `json:"tools"`
		Messages []struct {
			Content []cc `json:"content"`
		} `json:"messages"`
	}
	for _, disable := range []bool{false, true} {
		srv := llmtest.New(t, llmtest.TextTurn("ok"))
		p := New(Options{APIKey: "k", BaseURL: srv.URL(), DisableCache: disable})
		if _, err := p.Stream(context.Background(), baseRequest(), nil); err != nil {
			t.Fatal(err)
		}
		var b body
		r, _ := srv.LastRequest()
		if err := json.Unmarshal(r.Raw, &b); err != nil {
			t.Fatal(err)
		}
		marked := func(c cc) bool { return c.CacheControl != nil && c.CacheControl.Type == "ephemeral" }
		msgs := b.Messages[len(b.Messages)-1].Content
		got := []bool{marked(b.System[0]), marked(b.Tools[len(b.Tools)-1]), marked(msgs[len(msgs)-1])}
		for i, g := range got {
			if g == disable {
				t.Errorf("disable=%v: breakpoint %d (system, tools, last message) marked=%v", disable, i, g)
			}
		}
		if r.Header.Get("X-Api-Key") == "" {
			t.Error("x-api-key header missing")
		}
	}
}

func TestRequestTranslation(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	req := baseRequest(llm.Message{Role: llm.RoleUser, Text: "first"}, llm.Message{Role: llm.RoleAssistant, Text: "answer"}, llm.Message{Role: llm.RoleUser, Text: "second"})
	if _, err := newProvider(srv, nil, 0).Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	if r.Model != "claude-sonnet-4-5" || r.System != "You are a test." || !r.Stream || r.MaxTokens != llm.MaxOutputTokens("claude-sonnet-4-5") {
		t.Errorf("request %+v", r)
	}
	if len(r.Messages) != 3 || r.Messages[2].Text != "second" || r.Messages[1].Role != "assistant" {
		t.Errorf("messages %+v", r.Messages)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Description != "Run a command" {
		t.Fatalf("tools %+v", r.Tools)
	}
	jsonEqual(t, r.Tools[0].Schema, string(llmtest.BashSchema))
}

func TestStopReasonsAndTruncation(t *testing.T) {
	tests := []struct {
		name     string
		turn     llmtest.Turn
		wantKind llm.ErrorKind
		wantStop string
		wantMsg  string
	}{
		{"max_tokens in the middle of a tool call", llmtest.Turn{Text: "Writing the file", StopReason: "max_tokens",
			ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "Bash", RawInput: `{"command":"write big.txt <<EOF\nline 1\nline`}}},
			llm.ErrTruncated, "", "max_tokens"},
		{"max_tokens in text only", llmtest.Turn{Text: "a long essay", StopReason: "max_tokens"}, "", llm.StopMaxTokens, ""},
		{"stop_sequence", llmtest.Turn{Text: "x", StopReason: "stop_sequence"}, "", llm.StopEndTurn, ""},
		{"refusal", llmtest.Turn{Text: "", StopReason: "refusal"}, "", llm.StopOther, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turn)
			var c llmtest.Events
			resp, err := newProvider(srv, nil, 3).Stream(context.Background(), baseRequest(), c.On)
			if tc.wantKind != "" {
				if llmtest.KindOf(err) != tc.wantKind || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Fatalf("err = %v, want kind %s containing %q", err, tc.wantKind, tc.wantMsg)
				}
				if len(c.Calls) != 0 {
					t.Errorf("a broken call was emitted: %+v", c.Calls)
				}
				if srv.Count() != 1 {
					t.Errorf("%d requests: a truncated reply must not be retried", srv.Count())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tc.wantStop {
				t.Errorf("stop %q, want %q", resp.StopReason, tc.wantStop)
			}
		})
	}
}

func TestRetriesAndErrors(t *testing.T) {
	llmtest.CheckErrors(t, newProvider, baseRequest(), []llmtest.ErrorCase{
		{Name: "429 honours retry-after then succeeds", MaxRetries: 3,
			Script:    []llmtest.Turn{{Status: 429, RetryAfter: "2"}, llmtest.TextTurn("ok")},
			FirstWait: 2 * time.Second, WantTries: 2},
		{Name: "retry-after-ms is preferred", MaxRetries: 3,
			Script:    []llmtest.Turn{{Status: 429, RetryAfter: "9", RetryAfterMs: "1500"}, {Status: 529}, llmtest.TextTurn("ok")},
			FirstWait: 1500 * time.Millisecond, WantTries: 3},
		{Name: "529 overloaded then succeeds", MaxRetries: 3,
			Script: []llmtest.Turn{{Status: 529}, {Status: 503}, llmtest.TextTurn("ok")}, WantTries: 3},
		{Name: "overloaded error event inside the stream is retried", MaxRetries: 3,
			Script: []llmtest.Turn{{StreamError: &llmtest.APIError{Type: "overloaded_error"}}, llmtest.TextTurn("ok")}, WantTries: 2},
		{Name: "500 exhausted", MaxRetries: 2,
			Script:   []llmtest.Turn{{Status: 500}, {Status: 500}, {Status: 500}},
			WantKind: llm.ErrStatus, WantInErr: []string{"internal error", "gave up after 2 retries"}, WantTries: 3, WantStatus: 500},
		{Name: "429 exhausted is a rate-limit error", MaxRetries: 1,
			Script:   []llmtest.Turn{{Status: 429, RetryAfterMs: "5"}, {Status: 429, RetryAfterMs: "5"}},
			WantKind: llm.ErrRateLimit, WantInErr: []string{"rate limited", "SYNAPSE_MAX_PARALLEL_TASKS"}, WantTries: 2, WantStatus: 429},
		{Name: "retry-after beyond the cap is not waited for", MaxRetries: 3,
			Script:   []llmtest.Turn{{Status: 429, RetryAfter: "3600"}},
			WantKind: llm.ErrRateLimit, WantTries: 1, WantStatus: 429},
		{Name: "401 is an auth error naming the variable", MaxRetries: 3,
			Script:   []llmtest.Turn{llmtest.ErrorTurn(401, "invalid x-api-key")},
			WantKind: llm.ErrAuth, WantInErr: []string{"ANTHROPIC_API_KEY", "invalid x-api-key"}, WantTries: 1, WantStatus: 401},
		{Name: "403 is an auth error", MaxRetries: 3,
			Script:   []llmtest.Turn{{Status: 403}},
			WantKind: llm.ErrAuth, WantTries: 1, WantStatus: 403},
		{Name: "400 is a bad request with the server's reason", MaxRetries: 3,
			Script:   []llmtest.Turn{llmtest.ErrorTurn(400, "messages: roles must alternate")},
			WantKind: llm.ErrBadRequest, WantInErr: []string{"roles must alternate", "/clear"}, WantTries: 1, WantStatus: 400},
		{Name: "a history too long for the model says so", MaxRetries: 3,
			Script:   []llmtest.Turn{llmtest.ErrorTurn(400, "prompt is too long: 210000 tokens > 200000 maximum")},
			WantKind: llm.ErrBadRequest, WantInErr: []string{"210000 tokens", "context window", "/clear"}, WantTries: 1, WantStatus: 400},
		{Name: "404 points at the model name", MaxRetries: 3,
			Script:   []llmtest.Turn{llmtest.ErrorTurn(404, "model: claude-nope")},
			WantKind: llm.ErrStatus, WantInErr: []string{"claude-nope", "--model"}, WantTries: 1, WantStatus: 404},
		{Name: "stream cut before any output is retried", MaxRetries: 3,
			Script: []llmtest.Turn{{Text: "hello", CutAfter: 2}, llmtest.TextTurn("ok")}, WantTries: 2},
		{Name: "stream cut after output is a connection error", MaxRetries: 3,
			Script:   []llmtest.Turn{{Text: "hello world, this is long", CutAfter: 5}},
			WantKind: llm.ErrConnection, WantInErr: []string{"closed before the response was complete"}, WantTries: 1, WantStatus: llmtest.NoStatus},
	})
}

func TestRetryAfterMsPreferredAndBackoffBounded(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Status: 429, RetryAfter: "9", RetryAfterMs: "1500"}, llmtest.Turn{Status: 529}, llmtest.Turn{Status: 529}, llmtest.TextTurn("ok"))
	var w llmtest.Waits
	if _, err := newProvider(srv, &w, 5).Stream(context.Background(), baseRequest(), nil); err != nil {
		t.Fatal(err)
	}
	got := w.List()
	if len(got) != 3 || got[0] != 1500*time.Millisecond {
		t.Fatalf("waits %v", got)
	}
	// Backoff without retry-after: positive, capped by MaxDelay (40ms in newProvider).
	for _, d := range got[1:] {
		if d <= 0 || d > 40*time.Millisecond {
			t.Errorf("backoff %v out of (0, 40ms]", d)
		}
	}
}

func TestMalformedStreams(t *testing.T) {
	tests := []struct {
		name     string
		raw      string
		wantKind llm.ErrorKind
	}{
		{"invalid JSON data", "event: message_start\ndata: {not json\n\n", llm.ErrProtocol},
		{"delta for a block never started", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{}}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", llm.ErrProtocol},
		{"negative index", "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":-1,\"content_block\":{\"type\":\"text\"}}\n\n", llm.ErrProtocol},
		{"no events at all", "this is not an event stream\n", llm.ErrProtocol},
		{"clean end without message_stop", "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{}}}\n\n", llm.ErrConnection},
		{"error event with garbage", "event: error\ndata: <html>\n\n", llm.ErrStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.Turn{Raw: tc.raw})
			_, err := newProvider(srv, nil, 0).Stream(context.Background(), baseRequest(), nil)
			if llmtest.KindOf(err) != tc.wantKind {
				t.Fatalf("err = %v (kind %q), want kind %s", err, llmtest.KindOf(err), tc.wantKind)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rp := llm.RetryPolicy{MaxRetries: 0}
	p := New(Options{APIKey: "k", BaseURL: "http://" + addr, Retry: &rp})
	_, err = p.Stream(context.Background(), baseRequest(), nil)
	if llmtest.KindOf(err) != llm.ErrConnection || !strings.Contains(err.Error(), "ANTHROPIC_BASE_URL") {
		t.Fatalf("err = %v", err)
	}
}

func TestCancelStopsPromptly(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newProvider(srv, nil, 3) })
}

func TestConcurrentStreams(t *testing.T) {
	srv := llmtest.New(t)
	srv.Handle(func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Turn{Text: "echo " + r.FirstUserText(), Delay: 20 * time.Millisecond}
	})
	p := newProvider(srv, nil, 0)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := "q" + string(rune('0'+i))
			resp, err := p.Stream(context.Background(), baseRequest(llm.Message{Role: llm.RoleUser, Text: q}), nil)
			if err != nil || resp.Message.Text != "echo "+q {
				t.Errorf("%s: %q %v", q, resp.Message.Text, err)
			}
		}()
	}
	wg.Wait()
	if srv.Count() != 4 {
		t.Errorf("count %d", srv.Count())
	}
}

func BenchmarkStreamToolCall(b *testing.B) {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Handle(func(*llmtest.Request) llmtest.Turn {
		return llmtest.ToolTurn(llmtest.BashCall("c", "ls -la /tmp && cat go.mod | head -20"))
	})
	p := New(Options{APIKey: "k", BaseURL: srv.URL()})
	req := baseRequest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamHistory measures one streamed tool call with a history of
// n earlier tool turns: the request is rebuilt and re-sent each step.
func BenchmarkStreamHistory(b *testing.B) {
	for _, n := range []int{1, 200, 1000} {
		b.Run("turns="+strconv.Itoa(n), func(b *testing.B) {
			// Scripted turns (not Handle): the server then skips decoding
			// the conversation, so the figure is mostly the client's cost.
			srv := llmtest.NewServer()
			defer srv.Close()
			turn := llmtest.ToolTurn(llmtest.BashCall("c", "ls -la /tmp"))
			p := New(Options{APIKey: "k", BaseURL: srv.URL()})
			req := baseRequest()
			req.Messages = append(req.Messages, llmtest.ToolHistory(n, "")...)
			b.ReportAllocs()
			for b.Loop() {
				srv.Script(turn)
				if _, err := p.Stream(context.Background(), req, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestMalformedToolArgumentsAreReturned(t *testing.T) {
	llmtest.CheckMalformedToolArguments(t, newProvider, baseRequest())
}

// Thinking comes back with its signature.
func TestPlainJSONAnswerToStreamingRequest(t *testing.T) {
	resp, _ := llmtest.CheckPlainJSONAnswer(t, newProvider, baseRequest())
	if want := []llm.Thinking{{Text: "hmm", Signature: "sig-1"}}; !reflect.DeepEqual(resp.Message.Thinking, want) {
		t.Errorf("thinking %+v, want %+v", resp.Message.Thinking, want)
	}
}

// Tool images are image blocks inside the tool_result, next to its text.
func TestToolImagesAreImageBlocks(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	srv := llmtest.New(t, llmtest.TextTurn("a cat"))
	p := newProvider(srv, nil, 0)
	_, err := p.Stream(context.Background(), baseRequest(
		llm.Message{Role: llm.RoleUser, Text: "show me"},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"mcp:x:shot"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Text: "[image: image/png, 12 bytes]\n", Images: []llm.Image{{MediaType: "image/png", Data: png}}},
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := srv.Requests()[0].ToolResult("c1")
	if !ok || len(tr.Images) != 1 || tr.Images[0].MediaType != "image/png" || string(tr.Images[0].Data) != string(png) {
		t.Fatalf("tool result = %+v, want one png image block", tr)
	}
	if !strings.Contains(tr.Content, "[image: image/png") {
		t.Errorf("tool result text = %q", tr.Content)
	}
}

// A prompt's images are image blocks of the user message, before its text.
func TestPromptImagesAreImageBlocks(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	srv := llmtest.New(t, llmtest.TextTurn("a cat"))
	p := newProvider(srv, nil, 0)
	_, err := p.Stream(context.Background(), baseRequest(
		llm.Message{Role: llm.RoleUser, Text: "what is this? [image 1: image/png]", Images: []llm.Image{{MediaType: "image/png", Data: png}}},
	), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := srv.Requests()[0].Messages[0]
	if m.Role != "user" || len(m.Images) != 1 || m.Images[0].MediaType != "image/png" || string(m.Images[0].Data) != string(png) {
		t.Fatalf("user message = %+v, want one png image block", m)
	}
	if m.Text != "what is this? [image 1: image/png]" {
		t.Errorf("user text = %q", m.Text)
	}
	var blocks struct {
		Messages []struct {
			Content []struct {
				Type string `json:"type"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Raw, &blocks); err != nil {
		t.Fatal(err)
	}
	if c := blocks.Messages[0].Content; len(c) != 2 || c[0].Type != "image" || c[1].Type != "text" {
		t.Errorf("user content blocks = %+v, want image then text", c)
	}
}

func TestStalledServer(t *testing.T) {
	llmtest.CheckStall(t, "ANTHROPIC_BASE_URL", func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		return New(Options{APIKey: "k", BaseURL: srv.URL(), IdleTimeout: idle, Retry: llmtest.RetryPolicy(maxRetries, &llmtest.Waits{})})
	})
}

// A retry notice says what went wrong, not the error's advice to try again
// later: the client is already trying again.
func TestRetryNoticeReasonHasNoHint(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Status: 529, Error: llmtest.APIError{Type: "overloaded_error", Message: "Overloaded"}}, llmtest.TextTurn("ok"))
	var w llmtest.Waits
	var reasons []string
	_, err := newProvider(srv, &w, 3).Stream(context.Background(), baseRequest(), func(ev llm.Event) {
		if ev.Type == llm.EventRetry {
			reasons = append(reasons, ev.Retry.Reason)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) != 1 || reasons[0] != "anthropic: the API is overloaded: Overloaded (HTTP 529)" {
		t.Errorf("retry reasons = %q, want the failure without its hint", reasons)
	}
}
