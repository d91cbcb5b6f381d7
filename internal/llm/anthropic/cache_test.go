package anthropic

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// referenceBody is the request converted whole, without the cache: what
// every body must decode to.
func referenceBody(p *Provider, req llm.Request) any {
	msgs := messages(req.Messages)
	if !p.noCache && len(msgs) > 0 {
		markLastMessage(&msgs[len(msgs)-1])
	}
	return struct {
		wireRequest
		Messages []wireMessage `json:"messages"`
	}{p.params(req), msgs}
}

func checkBody(t *testing.T, p *Provider, req llm.Request, what string) {
	t.Helper()
	b, err := p.conv.body(p.params(req), req.Messages, !p.noCache)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	llmtest.CheckJSON(t, what, b.Bytes(), referenceBody(p, req))
}

// history has every kind of message the adapter converts, including ones
// that send nothing and user-side runs that fold into one wire message.
func history() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Text: "fix <the> bug & test"},
		{Role: llm.RoleAssistant, Thinking: []llm.Thinking{{Text: "hmm", Signature: "sig"}, {Redacted: "xx"}, {Text: "unsigned"}},
			Text: "Looking.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				{ID: "c2", Name: "Bash", Input: json.RawMessage(`{bad`)}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Text: "main.go\n"},
		{Role: llm.RoleTool, ToolCallID: "c2", Text: "invalid input", IsError: true},
		{Role: llm.RoleUser, Text: ""},
		{Role: llm.RoleUser, Text: "<reminder>"},
		{Role: llm.RoleAssistant},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c3", Name: "Bash", Input: json.RawMessage(`{"command":"shot"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c3", Text: "[image 1]", Images: []llm.Image{{MediaType: "image/png", Data: []byte{1, 2, 3}}}},
		{Role: llm.RoleAssistant, Text: "Done."},
		{Role: llm.RoleUser, Text: "thanks"},
		{Role: llm.RoleAssistant, Thinking: []llm.Thinking{{Text: "only thinking", Signature: "s2"}}},
	}
}

// Growing the history one message at a time through one cache gives, at
// every length, the body of the whole request converted afresh.
func TestCachedBodyMatchesFullConversion(t *testing.T) {
	for _, disable := range []bool{false, true} {
		p := New(Options{APIKey: "k", BaseURL: "http://127.0.0.1:1", DisableCache: disable})
		h := history()
		for n := 0; n <= len(h); n++ {
			req := baseRequest()
			req.Messages = h[:n]
			checkBody(t, p, req, "grow")
			checkBody(t, p, req, "again") // now all from the cache
		}
	}
}

// A history rewritten under the cache (offload swaps an old result's text
// for a pointer line, compaction replaces the head with a summary, a caller
// edits a tool input in place) is sent as rewritten, never as cached.
func TestCacheInvalidatedWhenHistoryRewritten(t *testing.T) {
	p := New(Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	req := baseRequest()
	req.Messages = history()
	checkBody(t, p, req, "first")

	// Offload: same message, same length, new text.
	req.Messages[2].Text = "MAIN.GO\n"
	checkBody(t, p, req, "offload same length")
	req.Messages[3].Text = "[offloaded to sessions/x/offloaded/1.txt]"
	checkBody(t, p, req, "offload")

	// A tool input changed in place (same backing array).
	req.Messages[1].ToolCalls[0].Input[2] = 'C'
	checkBody(t, p, req, "input edited in place")
	req.Messages[1].Thinking[0].Signature = "other"
	checkBody(t, p, req, "thinking edited in place")

	// Compaction: a summary, then the last few messages verbatim.
	compacted := append([]llm.Message{{Role: llm.RoleUser, Text: "[Summary of the earlier conversation] ..."}}, req.Messages[9:]...)
	req.Messages = compacted
	checkBody(t, p, req, "compacted")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: "next"})
	checkBody(t, p, req, "after compaction")
}

// End to end: the server receives the rewritten history, not the cached
// one; the tool result folds into the user message at index 2.
func TestRewrittenHistoryReachesServer(t *testing.T) {
	for i, r := range llmtest.CheckRewrittenHistory(t, newProvider, baseRequest) {
		if len(r.Messages) != 5 || len(r.Messages[2].ToolResults) != 1 {
			t.Fatalf("request %d: messages %+v", i, r.Messages)
		}
	}
}

// BenchmarkRequestBody is building one request body with a history of n
// earlier tool turns, all but the newest already seen: a step's own
// conversion cost, without the network.
func BenchmarkRequestBody(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run("turns="+strconv.Itoa(n), func(b *testing.B) {
			p := New(Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
			req := baseRequest()
			req.Messages = append(req.Messages, llmtest.ToolHistory(n, "Next step.")...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.conv.body(p.params(req), req.Messages, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
