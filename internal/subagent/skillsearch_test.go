package subagent

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

const index = "- name: pdf-tools\n  description: Convert PDF files to Markdown\n- name: deploy-helper\n  description: Deploy services"

// skill:search asks once, without tools, and returns the contract JSON with
// only installed skills.
func TestSkillSearch(t *testing.T) {
	reply := "Here you go:\n```json\n" +
		`{"matched_skills":[{"name":"pdf-tools","description":"Convert PDF files to Markdown"},{"name":"ghost","description":"not installed"},{"name":"pdf-tools","description":"dup"}]}` +
		"\n```"
	installed := map[string]bool{"pdf-tools": true, "deploy-helper": true}
	f := newFixture(t, Options{SkillIndex: func() string { return index }, SkillExists: func(n string) bool { return installed[n] }},
		llmtest.Turn{Text: reply, Usage: llmtest.Usage{InputTokens: 40, OutputTokens: 9, Exact: true}})
	res := f.h.Run(f.traced(context.Background()), `task:skill:search --prompt "turn report.pdf into markdown" --description "find skills"`)
	want := `{"matched_skills":[{"name":"pdf-tools","description":"Convert PDF files to Markdown"}]}`
	if res.ExitCode != 0 || res.Stdout != want {
		t.Fatalf("result = %+v, want %s", res, want)
	}
	req, _ := f.srv.LastRequest()
	if len(req.Tools) != 0 {
		t.Errorf("skill:search offered tools: %v", req.ToolNames())
	}
	if u := req.FirstUserText(); !strings.Contains(u, "deploy-helper") || !strings.Contains(u, "turn report.pdf into markdown") {
		t.Errorf("user message lacks the index or the request: %q", u)
	}
	if !strings.Contains(req.System, "matched_skills") {
		t.Errorf("system prompt is not skill-search.md: %q", req.System)
	}
	if f.ws.built.Load() != 0 {
		t.Error("skill:search built a shell")
	}
	if u := f.parent.Usages(); len(u) != 1 || u[0].usage.InputTokens != 40 {
		t.Errorf("usage recorded = %+v", u)
	}
	if k := f.parent.kinds(); len(k) != 2 || k[0] != agent.TaskStart || k[1] != agent.TaskEnd {
		t.Errorf("events = %v", k)
	}
}

// With no skills installed the answer is known: no request is made.
func TestSkillSearchNoSkills(t *testing.T) {
	for name, idx := range map[string]func() string{"nil index": nil, "empty index": func() string { return " \n" }} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Options{SkillIndex: idx})
			res := f.h.Run(f.traced(context.Background()), `task:skill:search -p "anything" -d "find skills"`)
			if res.ExitCode != 0 || res.Stdout != `{"matched_skills":[]}` {
				t.Fatalf("result = %+v", res)
			}
			if f.srv.Count() != 0 {
				t.Errorf("%d requests made", f.srv.Count())
			}
		})
	}
}

// A reply that is not the JSON asked for is a failed task, not a guess.
func TestSkillSearchMalformed(t *testing.T) {
	tests := map[string]string{
		"prose":          "I think pdf-tools fits.",
		"broken JSON":    `{"matched_skills":[{"name":"pdf-tools",}]}`,
		"missing field":  `{"skills":[]}`,
		"wrong type":     `{"matched_skills":"pdf-tools"}`,
		"provider error": "",
	}
	for name, text := range tests {
		t.Run(name, func(t *testing.T) {
			turn := llmtest.TextTurn(text)
			if name == "provider error" {
				turn = llmtest.ErrorTurn(400, "bad model")
			}
			f := newFixture(t, Options{SkillIndex: func() string { return index }}, turn)
			res := f.h.Run(f.traced(context.Background()), `task:skill:search -p "pdf" -d "find skills"`)
			if res.ExitCode != 1 || !strings.HasPrefix(res.Stderr, "Task failed: ") || res.Stdout != "" {
				t.Fatalf("result = %+v", res)
			}
		})
	}
}
