package app

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// task:general --model M, where M belongs to the other provider than the
// parent's, runs the sub-agent on the provider M implies when that provider
// is configured (the request arrives in its wire format, with M), and fails
// the task with what to configure when it is not.
func TestSubagentModelPicksItsProvider(t *testing.T) {
	cases := []struct {
		name        string
		parentModel string
		subModel    string
		configure   []string // which providers point at the fake server
		wantFormat  string   // the sub-agent's wire format; "" means the task fails
		wantErr     []string // in the task's result when it fails
	}{
		{"openai model under anthropic parent", "claude-test", "gpt-4o", []string{"anthropic", "openai"}, llmtest.FormatOpenAI, nil},
		{"anthropic model under openai parent", "gpt-4o-mini", "claude-sonnet-4-5", []string{"anthropic", "openai"}, llmtest.FormatAnthropic, nil},
		{"same provider", "claude-test", "claude-other", []string{"anthropic"}, llmtest.FormatAnthropic, nil},
		{"ambiguous model keeps the parent's provider", "claude-test", "llama3", []string{"anthropic", "openai"}, llmtest.FormatAnthropic, nil},
		{"other provider not configured", "claude-test", "gpt-4o", []string{"anthropic"}, "", []string{"gpt-4o", "openai", "OPENAI_API_KEY", "OPENAI_BASE_URL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Provider selection is under test, not the OS sandbox.
			home, proj, syn := unsandboxedHome(t)
			writeTestFile(t, filepath.Join(proj, "README.md"), "x\n")

			var (
				mu      sync.Mutex
				parents int
			)
			srv := llmtest.New(t)
			srv.Handle(func(req *llmtest.Request) llmtest.Turn {
				if req.Model == c.subModel {
					return llmtest.TextTurn("sub-agent finding")
				}
				mu.Lock()
				defer mu.Unlock()
				parents++
				if parents == 1 {
					return llmtest.ToolTurn(llmtest.BashCall("t1", `task:general -d "look" -p "find it" --model `+c.subModel))
				}
				return llmtest.TextTurn("all done")
			})
			env := map[string]string{"HOME": home, "SYNAPSE_HOME": syn, "SYNAPSE_MODEL": c.parentModel}
			for _, p := range c.configure {
				if p == "anthropic" {
					env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"] = srv.URL(), "llmtest-key"
				} else {
					env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = srv.OpenAIBaseURL(), "llmtest-key"
				}
			}
			a, err := New(testutil.MapEnv(env))
			if err != nil {
				t.Fatal(err)
			}
			g, err := a.NewAgent(context.Background(), AgentSetup{Cwd: proj, DisableSkillSearchInstruction: true})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if _, err := g.Runner.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			var sub []llmtest.Request
			for _, r := range srv.Requests() {
				if r.Model == c.subModel {
					sub = append(sub, r)
				}
			}
			last, _ := srv.LastRequest()
			res, ok := last.ToolResult("t1")
			if !ok {
				t.Fatalf("the parent's last request carries no result for the task call")
			}
			if c.wantFormat == "" {
				if len(sub) != 0 {
					t.Errorf("a request was sent with %s although its provider is not configured: %+v", c.subModel, sub[0].Format)
				}
				for _, w := range c.wantErr {
					if !strings.Contains(res.Content, w) {
						t.Errorf("task result lacks %q: %q", w, res.Content)
					}
				}
				return
			}
			if len(sub) == 0 {
				t.Fatalf("no request with model %s; task result: %q", c.subModel, res.Content)
			}
			for _, r := range sub {
				if r.Format != c.wantFormat {
					t.Errorf("sub-agent request in %s format, want %s", r.Format, c.wantFormat)
				}
			}
			if !strings.Contains(res.Content, "sub-agent finding") {
				t.Errorf("task result = %q", res.Content)
			}
		})
	}
}
