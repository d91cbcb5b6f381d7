package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

// The shared checks below are the contract every provider adapter keeps,
// whatever its wire format: a provider test calls them with its own
// constructor and request, and keeps only what is particular to its wire.

// BashSchema is the input schema of the Bash tool that BaseRequest offers.
var BashSchema = json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)

// BaseRequest is the request provider tests send: the given model, the
// system prompt "You are a test.", the Bash tool (BashSchema, described as
// "Run a command"), and msgs, or one user message "hi" when there are none.
func BaseRequest(model string, msgs ...llm.Message) llm.Request {
	if len(msgs) == 0 {
		msgs = []llm.Message{{Role: llm.RoleUser, Text: "hi"}}
	}
	return llm.Request{Model: model, System: "You are a test.", Messages: msgs,
		Tools: []llm.ToolSpec{{Name: "Bash", Description: "Run a command", InputSchema: BashSchema}}}
}

// NewProvider points the provider under test at srv, allowing maxRetries
// retries; w, when not nil, records the retry waits instead of sleeping.
type NewProvider func(srv *Server, w *Waits, maxRetries int) llm.Provider

// ToolHistory is n earlier tool turns (an assistant call, then its result
// of 20 lines), for benchmarks of a long conversation. text is the
// assistant's text beside each call.
func ToolHistory(n int, text string) []llm.Message {
	var msgs []llm.Message
	for i := range n {
		id := "c" + strconv.Itoa(i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Text: text, ToolCalls: []llm.ToolCall{{ID: id, Name: "Bash", Input: json.RawMessage(`{"command":"cat file.go"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Text: strings.Repeat("package main // line\n", 20)})
	}
	return msgs
}

// ErrorCase is one scripted failure (or run of failures) and what the
// provider must make of it.
type ErrorCase struct {
	Name       string
	Script     []Turn
	MaxRetries int
	// WantKind is the llm.Error kind of the final error; "" means the
	// provider recovers and answers "ok".
	WantKind llm.ErrorKind
	// WantInErr are strings the error must contain.
	WantInErr []string
	// WantStatus, when not 0, is the HTTP status the llm.Error carries
	// (NoStatus: none, as for a connection that broke).
	WantStatus int
	// WantTries is how many requests reach the server; every one after the
	// first is a retry, with one wait and one retry notice.
	WantTries int
	// FirstWait, when not 0, is the first wait exactly (the server's
	// retry-after); other waits are jittered backoffs and only counted.
	FirstWait time.Duration
}

// NoStatus is ErrorCase.WantStatus for an error that carries no HTTP status.
const NoStatus = -1

// CheckErrors runs each case against a fresh server and a provider from
// newProvider, sending req. On failure the error must be of the wanted kind
// and say the wanted things, and no tool call may have been emitted.
func CheckErrors(t *testing.T, newProvider NewProvider, req llm.Request, cases []ErrorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			srv := New(t, tc.Script...)
			var w Waits
			var ev Events
			resp, err := newProvider(srv, &w, tc.MaxRetries).Stream(context.Background(), req, ev.On)
			checkOutcome(t, resp, err, tc.WantKind, tc.WantInErr)
			if tc.WantKind != "" {
				var le *llm.Error
				if want := max(tc.WantStatus, 0); tc.WantStatus != 0 && (!errors.As(err, &le) || le.StatusCode != want) {
					t.Errorf("err = %#v, want HTTP status %d", err, want)
				}
				if len(ev.Calls) != 0 {
					t.Errorf("calls emitted despite the error: %+v", ev.Calls)
				}
			}
			if srv.Count() != tc.WantTries {
				t.Errorf("%d requests, want %d", srv.Count(), tc.WantTries)
			}
			waits := w.List()
			if len(waits) != tc.WantTries-1 || len(ev.Retries) != tc.WantTries-1 {
				t.Errorf("waits %v, retry notices %+v; want %d of each", waits, ev.Retries, tc.WantTries-1)
			}
			if tc.FirstWait != 0 && (len(waits) == 0 || waits[0] != tc.FirstWait) {
				t.Errorf("waits %v, want the first to be %v", waits, tc.FirstWait)
			}
		})
	}
}

// checkOutcome checks that a Stream answered "ok" when kind is "", and
// otherwise failed with an error of that kind containing each of wants.
func checkOutcome(t *testing.T, resp llm.Response, err error, kind llm.ErrorKind, wants []string) {
	t.Helper()
	if kind == "" {
		if err != nil || resp.Message.Text != "ok" {
			t.Fatalf("Stream = %q, %v; want ok", resp.Message.Text, err)
		}
		return
	}
	if KindOf(err) != kind {
		t.Fatalf("err = %v (kind %q), want kind %q", err, KindOf(err), kind)
	}
	for _, s := range wants {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not contain %q", err, s)
		}
	}
}

// CheckTextAnswer scripts on srv a text answer in fragments whose usage
// counts 60 cache reads, streams req (which must be BaseRequest's) through
// p, and checks the text (streamed and returned), the end_turn stop, the
// usage (streamed once and returned), and what the request carried: a
// stream, the system prompt, the user's "hi", the max tokens when req sets
// them, and the Bash tool with its schema. It returns the response and the
// request the server got, for the wire's own checks.
func CheckTextAnswer(t *testing.T, p llm.Provider, srv *Server, req llm.Request) (llm.Response, Request) {
	t.Helper()
	const text = "Hello there, ü…"
	srv.Script(Turn{Text: text, Fragment: 3, Usage: Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, Exact: true}})
	resp, ev := Stream(t, p, req)
	if resp.Message.Text != text || ev.Text != text || resp.StopReason != llm.StopEndTurn {
		t.Errorf("resp %+v, streamed %q; want %q, end_turn", resp, ev.Text, text)
	}
	want := llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60}
	if resp.Usage != want || len(ev.Usage) != 1 || ev.Usage[0] != want {
		t.Errorf("usage %+v, events %+v; want %+v", resp.Usage, ev.Usage, want)
	}
	if f := srv.AuthFailures(); len(f) > 0 {
		t.Fatalf("auth failures: %v", f)
	}
	r, _ := srv.LastRequest()
	if !r.Stream || r.System != req.System || r.FirstUserText() != "hi" || (req.MaxTokens != 0 && r.MaxTokens != req.MaxTokens) || r.DecodeError != "" {
		t.Errorf("request %+v", r)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Description != "Run a command" || !jsonEqual(r.Tools[0].Schema, BashSchema) {
		t.Errorf("tools %+v", r.Tools)
	}
	return resp, r
}

// CheckJSON checks that body is valid JSON equal to want (a value that
// marshals to JSON), as decoded values: key order and spacing aside. what
// names the step in a failure.
func CheckJSON(t *testing.T, what string, body []byte, want any) {
	t.Helper()
	var got any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: invalid JSON body %s: %v", what, body, err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(body, w) {
		t.Errorf("%s:\n got  %s\n want %s", what, body, w)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// CheckPromptTooLong checks that a server refusing req as longer than the
// model's context window gives an error the agent recognises (and compacts
// for), after one request: retrying cannot help.
func CheckPromptTooLong(t *testing.T, newProvider NewProvider, req llm.Request) {
	t.Helper()
	srv := New(t)
	srv.LimitTokens(5)
	_, err := newProvider(srv, nil, 2).Stream(context.Background(), req, nil)
	if !llm.IsPromptTooLong(err) || srv.Count() != 1 {
		t.Fatalf("err = %v after %d requests: want one refusal recognised as prompt too long", err, srv.Count())
	}
}

// CheckUsage streams one answer "ok" whose usage the server reports as
// given, and checks that the response and the one usage event carry want.
// It returns the response, for checks of cost or model.
func CheckUsage(t *testing.T, newProvider NewProvider, req llm.Request, given Usage, want llm.Usage) llm.Response {
	t.Helper()
	srv := New(t, Turn{Text: "ok", Usage: given})
	resp, ev := Stream(t, newProvider(srv, nil, 0), req)
	if resp.Usage != want || len(ev.Usage) != 1 || ev.Usage[0] != want {
		t.Errorf("usage %+v, events %+v; want %+v", resp.Usage, ev.Usage, want)
	}
	return resp
}

// CheckClaudeUsageAndCost checks a cloud platform serving Claude: usage with
// cache tokens arrives as Anthropic's, and the model as the server names it
// and each of ids (the platform's model ids) are priced by cost as the
// claude-sonnet-4-5 they are ($3 in, $15 out per million, cache reads
// $0.30, cache writes $3.75). cost is the session pricing's Cost (llmtest
// cannot import session, whose tests import llmtest).
func CheckClaudeUsageAndCost(t *testing.T, newProvider NewProvider, req llm.Request, cost func(model string, u llm.Usage) (float64, bool), ids ...string) {
	t.Helper()
	resp := CheckUsage(t, newProvider, req,
		Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheCreationTokens: 300, Exact: true},
		llm.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheCreationTokens: 300})
	for _, model := range append([]string{resp.Model}, ids...) {
		got, ok := cost(model, resp.Usage)
		if want := (1000*3 + 200*15 + 5000*0.3 + 300*3.75) / 1e6; !ok || got < want-1e-12 || got > want+1e-12 {
			t.Errorf("cost of %q = %v, %v; want %v", model, got, ok, want)
		}
	}
}

// CheckToolRoundTrip checks one tool call and its result over two
// requests: the call (after some text, in fragments) is emitted and
// returned whole, and the next request, built by request from the history,
// carries its result. It returns the second request the server got.
func CheckToolRoundTrip(t *testing.T, newProvider NewProvider, request func(msgs ...llm.Message) llm.Request) Request {
	t.Helper()
	srv := New(t,
		Turn{Text: "Let me look.", ToolCalls: []ToolCall{BashCall("toolu_1", "ls -la")}, Fragment: 3},
		TextTurn("There are two files."),
	)
	p := newProvider(srv, nil, 0)
	resp, ev := Stream(t, p, request())
	if resp.StopReason != llm.StopToolUse || len(resp.Message.ToolCalls) != 1 || len(ev.Calls) != 1 {
		t.Fatalf("resp = %+v, calls %+v", resp, ev.Calls)
	}
	c := resp.Message.ToolCalls[0]
	if c.ID != "toolu_1" || c.Name != "Bash" || string(c.Input) != `{"command":"ls -la"}` {
		t.Errorf("call = %+v", c)
	}
	if !ev.Announced() {
		t.Errorf("the call was not announced (EventToolCallStart) before it arrived: %v", ev.Seq)
	}
	history := []llm.Message{{Role: llm.RoleUser, Text: "hi"}, resp.Message, {Role: llm.RoleTool, ToolCallID: "toolu_1", Text: "a.txt\nb.txt"}}
	resp, err := p.Stream(context.Background(), request(history...), nil)
	if err != nil || resp.Message.Text != "There are two files." {
		t.Fatalf("second answer = %q, %v", resp.Message.Text, err)
	}
	r := srv.Requests()[1]
	if tr, ok := r.ToolResult("toolu_1"); !ok || tr.Content != "a.txt\nb.txt" {
		t.Errorf("tool result = %+v, %v", tr, ok)
	}
	return r
}

// CheckMalformedToolArguments checks that arguments that are not JSON,
// without truncation, are the model's mistake, not the stream's: the call is
// returned with InvalidInput (Input "{}") for the agent to tell the model,
// the well-formed call beside it is intact, and nothing is retried.
func CheckMalformedToolArguments(t *testing.T, newProvider NewProvider, req llm.Request) {
	t.Helper()
	raw := `{"command": "echo \q"`
	srv := New(t, Turn{Text: "running", StopReason: StopToolUse,
		ToolCalls: []ToolCall{{ID: "x", Name: "Bash", RawInput: raw}, BashCall("y", "ls")}})
	resp, ev := Stream(t, newProvider(srv, nil, 3), req)
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "x" || calls[0].InvalidInput != raw || string(calls[0].Input) != "{}" ||
		calls[1].InvalidInput != "" || !strings.Contains(string(calls[1].Input), "ls") {
		t.Fatalf("calls = %+v", calls)
	}
	if len(ev.Calls) != 2 || srv.Count() != 1 {
		t.Errorf("events %+v, %d requests", ev.Calls, srv.Count())
	}
}

// CheckPlainJSONAnswer checks a gateway that answers the streaming request
// with one plain JSON body (no SSE): it is one complete response, with the
// text, two tool calls, usage and stop reason, all emitted as events too;
// and the request still asked for a stream. The reply also carries the
// thinking "hmm" signed "sig-1", which each wire keeps its own way: the
// response and the events are returned for the caller to check it.
func CheckPlainJSONAnswer(t *testing.T, newProvider NewProvider, req llm.Request) (llm.Response, Events) {
	t.Helper()
	srv := New(t, Turn{PlainJSON: true, Text: "Looking…", Thinking: "hmm", Signature: "sig-1",
		ToolCalls: []ToolCall{BashCall("call_a", "ls -la"), BashCall("call_b", "pwd")},
		Usage:     Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, Exact: true}})
	resp, ev := Stream(t, newProvider(srv, nil, 0), req)
	wantCalls := []llm.ToolCall{
		{ID: "call_a", Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)},
		{ID: "call_b", Name: "Bash", Input: json.RawMessage(`{"command":"pwd"}`)},
	}
	if resp.Message.Text != "Looking…" || ev.Text != "Looking…" {
		t.Errorf("text %q / events %q", resp.Message.Text, ev.Text)
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) || !reflect.DeepEqual(ev.Calls, wantCalls) {
		t.Errorf("calls %+v / events %+v", resp.Message.ToolCalls, ev.Calls)
	}
	if resp.StopReason != llm.StopToolUse || resp.Usage != (llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60}) {
		t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || !reqs[0].Stream {
		t.Fatalf("requests: %d (the request must still ask for a stream)", len(reqs))
	}
	return resp, ev
}

// CheckRewrittenHistory checks that a history rewritten between two
// requests is sent as rewritten: the same conversation (built by request)
// goes out twice, its one tool result a long output the first time and an
// offload pointer the second, and the server gets each text as the one tool
// result, never the cached body of the first. It returns the two requests
// the server got.
func CheckRewrittenHistory(t *testing.T, newProvider NewProvider, request func(msgs ...llm.Message) llm.Request) []Request {
	t.Helper()
	srv := New(t, TextTurn("a"), TextTurn("b"))
	p := newProvider(srv, nil, 0)
	long := strings.Repeat("output line\n", 100)
	req := request(
		llm.Message{Role: llm.RoleUser, Text: "go"},
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}}},
		llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Text: long},
		llm.Message{Role: llm.RoleAssistant, Text: "ok"},
		llm.Message{Role: llm.RoleUser, Text: "more"},
	)
	for i, text := range []string{long, "[offloaded: read sessions/s/offloaded/c1.txt]"} {
		req.Messages[2].Text = text
		if _, err := p.Stream(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		r, _ := srv.LastRequest()
		var results []string
		for _, m := range r.Messages {
			for _, tr := range m.ToolResults {
				results = append(results, tr.Content)
			}
		}
		if len(results) != 1 || results[0] != text {
			t.Errorf("request %d: tool results %.80q, want [%.60q]", i, results, text)
		}
	}
	return srv.Requests()
}
