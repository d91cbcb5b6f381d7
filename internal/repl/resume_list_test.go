package repl

import (
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
)

// /resume's list shows ids a user can type back (`/resume <id or prefix>`):
// real ids share their first 12 characters ("session-2026"), so a list cut
// there named every session alike. Counts read "1 message", "2 messages".
func TestResumeListShowsUsableIDs(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	sessions := fakeSessions{
		{ID: "session-20261121-110000-aaaaaa", Title: "first", MessageCount: 1, Cwd: "/work", UpdatedAt: now.Add(-time.Hour)},
		{ID: "session-20261121-100000-bbbbbb", Title: "second", MessageCount: 4, Cwd: "/work", UpdatedAt: now.Add(-2 * time.Hour)},
	}
	fa := &fakeAgent{model: "m1"}
	out, _ := runPiped(t, fa, "/resume\n\n", func(o *Options) {
		o.Sessions = sessions
		o.Now = func() time.Time { return now }
	})
	for _, w := range []string{
		"1. session-20261121-110000-aaaaaa  first  (1h ago, 1 message)",
		"2. session-20261121-100000-bbbbbb  second  (2h ago, 4 messages)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// After /resume, the replayed prompt is what the user typed (not the skill-search
// instruction the agent wrapped it in), and /context does not claim the
// resumed conversation has had no request.
func TestResumedConversationReadsRight(t *testing.T) {
	fa := &fakeAgent{model: "m1", history: []llm.Message{
		{Role: llm.RoleUser, Text: agent.WrapSkillSearch("fix the parser please")},
		{Role: llm.RoleAssistant, Text: "done"},
	}}
	out, _ := runPiped(t, fa, "/resume --latest\n/context\n", func(o *Options) {
		o.Sessions = fakeSessions{{ID: "session-x", Title: "fix the parser please", MessageCount: 2, Cwd: "/work"}}
		o.ContextWindow = func(string) int { return 1000 }
	})
	if !strings.Contains(out, "› fix the parser please") || strings.Contains(out, agent.SkillSearchHeading) {
		t.Errorf("last prompt is not the user's text:\n%s", out)
	}
	if strings.Contains(out, "no request in this conversation yet") {
		t.Errorf("/context says no request was made in a resumed conversation of 2 messages:\n%s", out)
	}
	if !strings.Contains(out, "measured by the next request") {
		t.Errorf("/context does not say when the figure comes:\n%s", out)
	}
}

// The /resume picker is cancelled by Esc: the next line typed is a prompt
// again, not the picker's answer.
func TestPTYResumePickerEscCancels(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	fa := &fakeAgent{model: "m1"}
	p := startPTY(t, fa, func(o *Options) {
		o.Sessions = fakeSessions{{ID: "session-20261121-110000-aaaaaa", Title: "first", MessageCount: 1, Cwd: "/work", UpdatedAt: now.Add(-time.Hour)}}
		o.Now = func() time.Time { return now }
	})
	p.send("/resume\r")
	p.waitFor("Resume which")
	p.send("\x1b")
	p.waitFor("Cancelled.")
	p.send("1\r")
	if got := fa.waitInputs(t, 1); len(got) != 1 || got[0] != "1" {
		t.Fatalf("after Esc the next line went to %q, want a prompt \"1\"", got)
	}
}
