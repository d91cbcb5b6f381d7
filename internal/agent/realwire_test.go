package agent

import (
	"testing"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/llm/openai"
)

func init() {
	wireFormats = append(wireFormats, llmtest.FormatAnthropic, llmtest.FormatOpenAI)
}

// wireProvider is a real adapter talking to a scripted llmtest server.
type wireProvider struct {
	llm.Provider
	srv *llmtest.Server
}

func newWireProvider(t *testing.T, format string, turns ...llmtest.Turn) llm.Provider {
	srv := llmtest.New(t, turns...)
	switch format {
	case llmtest.FormatAnthropic:
		return wireProvider{anthropic.New(anthropic.Options{APIKey: "llmtest-key", BaseURL: srv.URL()}), srv}
	case llmtest.FormatOpenAI:
		return wireProvider{openai.New(openai.Options{APIKey: "llmtest-key", BaseURL: srv.OpenAIBaseURL()}), srv}
	}
	t.Fatalf("unknown wire format %q", format)
	return nil
}

// sentFirstUserText reads the first user text the server received.
func sentFirstUserText(t *testing.T, p llm.Provider) string {
	wp, ok := p.(wireProvider)
	if !ok {
		t.Fatalf("no server behind provider %s", p.Name())
	}
	reqs := wp.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	return reqs[0].FirstUserText()
}
