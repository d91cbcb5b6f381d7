package openai

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// referenceBody is the request converted whole by the SDK, without the
// cache: what every body must decode to.
func referenceBody(t *testing.T, p *Provider, req llm.Request) any {
	t.Helper()
	params := p.params(req)
	params.Messages = messages(req.System, req.Messages, p.images)
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v["stream"] = true // set by the SDK's NewStreaming
	return v
}

func checkBody(t *testing.T, p *Provider, req llm.Request, what string) {
	t.Helper()
	b, err := p.body(p.params(req), req.System, req.Messages)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	llmtest.CheckJSON(t, what, b, referenceBody(t, p, req))
}

// history has every kind of message the adapter converts, including ones
// that send nothing and tool runs whose images follow the run.
func history() []llm.Message {
	png := []llm.Image{{MediaType: "image/png", Data: []byte{1, 2, 3}}}
	return []llm.Message{
		{Role: llm.RoleUser, Text: "fix <the> bug & test"},
		{Role: llm.RoleAssistant, Thinking: []llm.Thinking{{Text: "hmm", Signature: "sig"}},
			Text: "Looking.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				{ID: "c2", Name: "Bash"}}},
		{Role: llm.RoleTool, ToolCallID: "c1", Text: "[image 1]", Images: png},
		{Role: llm.RoleTool, ToolCallID: "c2", Text: "invalid input", IsError: true},
		{Role: llm.RoleUser, Text: ""},
		{Role: llm.RoleAssistant},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c3", Name: "Bash", Input: json.RawMessage(`{"command":"shot"}`)}}},
		{Role: llm.RoleTool, ToolCallID: "c3", Text: "[image 2]", Images: png},
		{Role: llm.RoleAssistant, Text: "Done."},
		{Role: llm.RoleUser, Text: "thanks"},
	}
}

// Growing the history one message at a time through one cache gives, at
// every length, the body of the whole request converted afresh.
func TestCachedBodyMatchesFullConversion(t *testing.T) {
	for _, opts := range []Options{{Images: "on"}, {Images: "off"}, {BaseURL: "https://api.openai.com/v1"}} {
		opts.APIKey = "k"
		p := New(opts)
		h := history()
		for n := 0; n <= len(h); n++ {
			req := baseRequest()
			req.MaxTokens = 100
			req.Messages = h[:n]
			checkBody(t, p, req, "grow")
			checkBody(t, p, req, "again") // now from the cache
			req.System = ""
			checkBody(t, p, req, "no system prompt")
		}
	}
}

// A history rewritten under the cache (offload swaps an old result's text
// for a pointer line, compaction replaces the head with a summary, a caller
// edits a tool input in place) is sent as rewritten, never as cached.
func TestCacheInvalidatedWhenHistoryRewritten(t *testing.T) {
	p := New(Options{APIKey: "k", Images: "on"})
	req := baseRequest()
	req.Messages = history()
	checkBody(t, p, req, "first")

	req.Messages[3].Text = "INVALID INPUT"
	checkBody(t, p, req, "offload same length")
	req.Messages[3].Text = "[offloaded to sessions/x/offloaded/1.txt]"
	checkBody(t, p, req, "offload")

	req.Messages[1].ToolCalls[0].Input[2] = 'C'
	checkBody(t, p, req, "input edited in place")

	compacted := append([]llm.Message{{Role: llm.RoleUser, Text: "[Summary of the earlier conversation] ..."}}, req.Messages[8:]...)
	req.Messages = compacted
	checkBody(t, p, req, "compacted")
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: "next"})
	checkBody(t, p, req, "after compaction")
}

// End to end: the server receives the rewritten history, not the cached one.
func TestRewrittenHistoryReachesServer(t *testing.T) {
	llmtest.CheckRewrittenHistory(t, newProvider, baseRequest)
}

// BenchmarkRequestBody is building one request body with a history of n
// earlier tool turns, all but the newest already seen: a step's own
// conversion cost, without the network.
func BenchmarkRequestBody(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run("turns="+strconv.Itoa(n), func(b *testing.B) {
			p := New(Options{APIKey: "k"})
			req := baseRequest()
			req.Messages = append(req.Messages, llmtest.ToolHistory(n, "Next step.")...)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.body(p.params(req), req.System, req.Messages); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
