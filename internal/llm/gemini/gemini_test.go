package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

func newProvider(srv *llmtest.Server, w *llmtest.Waits, maxRetries int) llm.Provider {
	return New(Options{APIKey: "test-key", BaseURL: srv.URL(), Retry: llmtest.RetryPolicy(maxRetries, w)})
}

func baseRequest(msgs ...llm.Message) llm.Request {
	return llmtest.BaseRequest("gemini-2.5-pro", msgs...)
}

func TestTextAnswerAndUsage(t *testing.T) {
	srv := llmtest.New(t)
	req := baseRequest()
	req.MaxTokens = 900
	// promptTokenCount counts the cached ones: the server reports 160 in, 60 of them cached.
	resp, r := llmtest.CheckTextAnswer(t, newProvider(srv, nil, 0), srv, req)
	if resp.Model != "gemini-2.5-pro" || r.Format != llmtest.FormatGemini || r.Model != "gemini-2.5-pro" {
		t.Errorf("model %q, request %s for %q", resp.Model, r.Format, r.Model)
	}
	if got := r.Header.Get("X-Goog-Api-Key"); got != "test-key" {
		t.Errorf("x-goog-api-key = %q", got)
	}
}

func TestThinkingIsShownNotSentBack(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{Thinking: "Let me think.", Text: "42"}, llmtest.TextTurn("ok"))
	p := newProvider(srv, nil, 0)
	var c llmtest.Events
	req := baseRequest()
	req.ThinkingBudget = 1024
	resp, err := p.Stream(context.Background(), req, c.On)
	if err != nil {
		t.Fatal(err)
	}
	if c.Thinking != "Let me think." || !reflect.DeepEqual(resp.Message.Thinking, []llm.Thinking{{Text: "Let me think."}}) || resp.Message.Text != "42" {
		t.Errorf("thinking %q, message %+v", c.Thinking, resp.Message)
	}
	var raw struct {
		GenerationConfig struct {
			ThinkingConfig struct {
				IncludeThoughts bool `json:"includeThoughts"`
				ThinkingBudget  int  `json:"thinkingBudget"`
			} `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	r, _ := srv.LastRequest()
	if err := json.Unmarshal(r.Raw, &raw); err != nil || !raw.GenerationConfig.ThinkingConfig.IncludeThoughts || raw.GenerationConfig.ThinkingConfig.ThinkingBudget != 1024 {
		t.Errorf("thinking config %+v (%v) in %s", raw.GenerationConfig, err, r.Raw)
	}
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleUser, Text: "more"})
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	r, _ = srv.LastRequest()
	if m := r.Messages[1]; m.Role != "assistant" || m.Text != "42" || len(m.Thinking) != 0 {
		t.Errorf("assistant message sent back as %+v", m)
	}
}

// The bar of the Gemini wire: a function call comes back in the next
// request as it was made, with its thought signature (the server refuses
// a history without it, as Gemini 3 does), and its result is a
// functionResponse named after it, paired by id when the model gave one and
// by position when it did not (Gemini 2.5 gives none).
func TestToolRoundTripKeepsThoughtSignatures(t *testing.T) {
	for _, withID := range []bool{true, false} {
		name := map[bool]string{true: "model gives ids", false: "model gives no ids"}[withID]
		t.Run(name, func(t *testing.T) {
			calls := []llmtest.ToolCall{{Name: "Bash", Input: map[string]any{"command": "ls -la"}}, {Name: "Bash", Input: map[string]any{"command": "pwd"}}}
			if withID {
				calls[0].ID, calls[1].ID = "fc_a", "fc_b"
			}
			srv := llmtest.New(t,
				llmtest.Turn{Text: "Looking.", Signature: "opaque-state-1", ToolCalls: calls},
				llmtest.TextTurn("Two files."),
			)
			p := newProvider(srv, nil, 0)
			var c llmtest.Events
			history := []llm.Message{{Role: llm.RoleUser, Text: "what is here?"}}
			resp, err := p.Stream(context.Background(), baseRequest(history...), c.On)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.Message.ToolCalls
			if resp.StopReason != llm.StopToolUse || len(got) != 2 || !reflect.DeepEqual(c.Calls, got) {
				t.Fatalf("stop %q calls %+v events %+v", resp.StopReason, got, c.Calls)
			}
			if string(got[0].Input) != `{"command":"ls -la"}` || got[1].Name != "Bash" {
				t.Errorf("calls %+v", got)
			}
			if got[0].Signature != base64.StdEncoding.EncodeToString([]byte("opaque-state-1")) || got[1].Signature != "" {
				t.Errorf("signatures %q, %q: want the first call's only, as sent", got[0].Signature, got[1].Signature)
			}
			if withID && (got[0].ID != "fc_a" || got[1].ID != "fc_b") {
				t.Errorf("ids %q %q", got[0].ID, got[1].ID)
			}
			if got[0].ID == "" || got[0].ID == got[1].ID {
				t.Errorf("ids %q %q: want unique ids", got[0].ID, got[1].ID)
			}
			// The message survives a session: stored as JSON and read back.
			stored, err := json.Marshal(resp.Message)
			if err != nil {
				t.Fatal(err)
			}
			var back llm.Message
			if err := json.Unmarshal(stored, &back); err != nil {
				t.Fatal(err)
			}
			history = append(history, back,
				llm.Message{Role: llm.RoleTool, ToolCallID: got[0].ID, Text: "a.txt\nb.txt"},
				llm.Message{Role: llm.RoleTool, ToolCallID: got[1].ID, Text: "no such dir", IsError: true})
			resp, err = p.Stream(context.Background(), baseRequest(history...), nil)
			if err != nil || resp.Message.Text != "Two files." {
				t.Fatalf("second request: %+v, %v", resp, err)
			}
			r, _ := srv.LastRequest()
			if len(r.Messages) != 3 {
				t.Fatalf("messages %+v", r.Messages)
			}
			a := r.Messages[1]
			if a.Role != "assistant" || a.Text != "Looking." || len(a.ToolCalls) != 2 || a.ToolCalls[0].Signature != got[0].Signature || a.ToolCalls[1].Signature != "" {
				t.Errorf("assistant sent back as %+v", a)
			}
			wantIDs := []string{"fc_a", "fc_b"}
			if !withID {
				wantIDs = []string{"", ""} // made-up ids are not sent
			}
			for i, tc := range a.ToolCalls {
				if tc.ID != wantIDs[i] || !jsonEqual(tc.Input, got[i].Input) {
					t.Errorf("call %d sent back as %+v", i, tc)
				}
			}
			res := r.Messages[2].ToolResults
			if len(res) != 2 || res[0].Content != "a.txt\nb.txt" || res[0].IsError || res[1].Content != "no such dir" || !res[1].IsError ||
				res[0].ToolCallID != wantIDs[0] || res[1].ToolCallID != wantIDs[1] {
				t.Errorf("results %+v", res)
			}
			var raw struct {
				Contents []struct {
					Parts []struct {
						FunctionResponse *struct {
							Name string `json:"name"`
						} `json:"functionResponse"`
					} `json:"parts"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(r.Raw, &raw); err != nil {
				t.Fatal(err)
			}
			for _, part := range raw.Contents[2].Parts {
				if part.FunctionResponse == nil || part.FunctionResponse.Name != "Bash" {
					t.Errorf("result part %+v: want a functionResponse named Bash", part)
				}
			}
		})
	}
}

// A history made by another provider (after /model) has calls without a
// Gemini signature: the first call of each step gets the documented
// placeholder instead of being refused.
func TestForeignHistoryGetsPlaceholderSignature(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	history := []llm.Message{
		{Role: llm.RoleUser, Text: "list"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "toolu_1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
			{ID: "toolu_2", Name: "Bash", Input: json.RawMessage(`{"command":"pwd"}`)}},
			Thinking: []llm.Thinking{{Text: "Anthropic's", Signature: "anthropic-sig"}}},
		{Role: llm.RoleTool, ToolCallID: "toolu_1", Text: "a"},
		{Role: llm.RoleTool, ToolCallID: "toolu_2", Text: "/"},
	}
	if _, err := newProvider(srv, nil, 0).Stream(context.Background(), baseRequest(history...), nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	calls := r.Messages[1].ToolCalls
	if len(calls) != 2 || calls[1].Signature != "" || len(r.Messages[1].Thinking) != 0 {
		t.Fatalf("calls %+v", r.Messages[1])
	}
	if !strings.Contains(string(r.Raw), `"thoughtSignature":"skip/thought/signature/validator"`) {
		t.Errorf("want the placeholder signature on the first call: %s", r.Raw)
	}
}

func TestErrorsAndRetries(t *testing.T) {
	llmtest.CheckErrors(t, newProvider, baseRequest(), []llmtest.ErrorCase{
		{Name: "429 with RetryInfo, then success", Script: []llmtest.Turn{{Status: 429, RetryAfter: "3", Error: llmtest.APIError{Message: "Resource has been exhausted (e.g. check quota)."}}, llmtest.TextTurn("ok")},
			MaxRetries: 2, WantTries: 2, FirstWait: 3 * time.Second},
		{Name: "503 then success", Script: []llmtest.Turn{{Status: 503, Error: llmtest.APIError{Message: "The model is overloaded. Please try again later."}}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "500 exhausted", Script: []llmtest.Turn{{Status: 500}, {Status: 500}}, MaxRetries: 1, WantKind: llm.ErrStatus, WantInErr: []string{"gave up after 1 retry"}, WantTries: 2},
		{Name: "error event retried", Script: []llmtest.Turn{{StreamError: &llmtest.APIError{}}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "bad key (Google says so with a 400)", Script: []llmtest.Turn{llmtest.ErrorTurn(400, "API key not valid. Please pass a valid API key.")},
			MaxRetries: 2, WantKind: llm.ErrAuth, WantInErr: []string{"GEMINI_API_KEY"}, WantTries: 1},
		{Name: "401", Script: []llmtest.Turn{llmtest.ErrorTurn(401, "Request had invalid authentication credentials.")}, MaxRetries: 2, WantKind: llm.ErrAuth, WantInErr: []string{"GEMINI_API_KEY"}, WantTries: 1},
		{Name: "404 model", Script: []llmtest.Turn{llmtest.ErrorTurn(404, "models/gemini-9 is not found for API version v1beta")}, MaxRetries: 2, WantKind: llm.ErrStatus, WantInErr: []string{"SYNAPSE_MODEL"}, WantTries: 1},
		{Name: "half-closed after output", Script: []llmtest.Turn{{Text: "a fairly long answer", CutAfter: 2}}, MaxRetries: 2, WantKind: llm.ErrConnection, WantInErr: []string{"closed before"}, WantTries: 1},
		{Name: "clean end without finishReason", Script: []llmtest.Turn{{Raw: "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"hi\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n"}},
			MaxRetries: 0, WantKind: llm.ErrConnection, WantInErr: []string{"finishReason"}, WantTries: 1},
		{Name: "not an event stream", Script: []llmtest.Turn{{Raw: "<html>hello</html>"}}, MaxRetries: 2, WantKind: llm.ErrProtocol, WantInErr: []string{"GOOGLE_GEMINI_BASE_URL"}, WantTries: 1},
		{Name: "malformed function call: retried", Script: []llmtest.Turn{{StopReason: "MALFORMED_FUNCTION_CALL"}, llmtest.TextTurn("ok")}, MaxRetries: 2, WantTries: 2},
		{Name: "prompt blocked", Script: []llmtest.Turn{{Raw: "data: {\"promptFeedback\": {\"blockReason\": \"PROHIBITED_CONTENT\"},\"usageMetadata\": {\"promptTokenCount\": 8,\"totalTokenCount\": 8}}\r\n\r\n"}},
			MaxRetries: 2, WantKind: llm.ErrBadRequest, WantInErr: []string{"PROHIBITED_CONTENT"}, WantTries: 1},
	})
}

// A gateway that ignores alt=sse and answers the whole response as JSON is
// read as one complete response.
func TestPlainJSONAnswer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Turn{PlainJSON: true, Text: "whole", ToolCalls: []llmtest.ToolCall{llmtest.BashCall("c1", "ls")},
		Usage: llmtest.Usage{InputTokens: 10, OutputTokens: 5, Exact: true}})
	resp, c := llmtest.Stream(t, newProvider(srv, nil, 0), baseRequest())
	if resp.Message.Text != "whole" || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != "c1" || resp.StopReason != llm.StopToolUse ||
		resp.Usage != (llm.Usage{InputTokens: 10, OutputTokens: 5}) || c.Text != "whole" {
		t.Errorf("resp %+v, events %+v", resp, c)
	}
}

func TestContextOverflowIsPromptTooLong(t *testing.T) {
	llmtest.CheckPromptTooLong(t, newProvider, baseRequest(llm.Message{Role: llm.RoleUser, Text: strings.Repeat("long ", 50)}))
}

func TestPromptImages(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("a cat"))
	png := []byte("\x89PNG fake")
	msg := llm.Message{Role: llm.RoleUser, Text: "what is this? [image 1]", Images: []llm.Image{{MediaType: "image/png", Data: png}}}
	if _, err := newProvider(srv, nil, 0).Stream(context.Background(), baseRequest(msg), nil); err != nil {
		t.Fatal(err)
	}
	r, _ := srv.LastRequest()
	if m := r.Messages[0]; m.Text != msg.Text || len(m.Images) != 1 || m.Images[0].MediaType != "image/png" || string(m.Images[0].Data) != string(png) {
		t.Errorf("message %+v", m)
	}
}

func TestCancel(t *testing.T) {
	llmtest.CheckCancel(t, func(srv *llmtest.Server) llm.Provider { return newProvider(srv, nil, 3) })
}

func TestStalledServer(t *testing.T) {
	llmtest.CheckStallTextFirst(t, "GOOGLE_GEMINI_BASE_URL", func(srv *llmtest.Server, idle time.Duration, maxRetries int) llm.Provider {
		return New(Options{APIKey: "k", BaseURL: srv.URL(), IdleTimeout: idle, Retry: llmtest.RetryPolicy(maxRetries, &llmtest.Waits{})})
	})
}

// A server on this machine needs no key: the request goes out without one.
func TestNoKeyForLocalServer(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("ok"))
	resp, err := New(Options{BaseURL: srv.URL()}).Stream(context.Background(), baseRequest(), nil)
	if err != nil || resp.Message.Text != "ok" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if r, _ := srv.LastRequest(); r.Header.Get("X-Goog-Api-Key") != "" {
		t.Errorf("x-goog-api-key = %q, want none", r.Header.Get("X-Goog-Api-Key"))
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Models are named as users write them or as the API lists them.
func TestStreamURL(t *testing.T) {
	p := New(Options{BaseURL: "https://gw.example/gemini/"})
	for model, want := range map[string]string{
		"gemini-2.5-pro":        "https://gw.example/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		"models/gemini-2.5-pro": "https://gw.example/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
		"tunedModels/mine":      "https://gw.example/gemini/v1beta/tunedModels/mine:streamGenerateContent?alt=sse",
	} {
		if got, err := p.streamURL(model); err != nil || got != want {
			t.Errorf("streamURL(%q) = %q, %v; want %q", model, got, err, want)
		}
	}
	for _, bad := range []string{"", "x?key=1", "../other"} {
		if _, err := p.streamURL(bad); err == nil {
			t.Errorf("streamURL(%q): no error", bad)
		}
	}
}
