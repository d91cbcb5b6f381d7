package repl

import (
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
)

// The replay shows what the user typed: not the hooks' added context, and
// a Stop hook's reason to go on is part of the turn, not a prompt.
func TestTranscriptShowsTypedPromptsOnly(t *testing.T) {
	hist := []llm.Message{
		{Role: llm.RoleUser, Text: agent.AddHookContext(agent.WrapSkillSearch("fix the build"), "the build uses make")},
		{Role: llm.RoleAssistant, Text: "First answer."},
		{Role: llm.RoleUser, Text: agent.StopHookNotePrefix + "The user's Stop hook asked you to continue instead of stopping:\nrun make test"},
		{Role: llm.RoleAssistant, Text: "Second answer."},
	}
	out := strings.Join(transcript(hist, 3), "\n")
	if !strings.HasPrefix(out, "── last 1 turn of this session ──\n") {
		t.Errorf("one turn expected:\n%s", out)
	}
	if !strings.Contains(out, "› fix the build\n") || !strings.Contains(out, "Second answer.") {
		t.Errorf("transcript:\n%s", out)
	}
	for _, bad := range []string{"the build uses make", "user-prompt-submit-hook", "Stop hook", "Skill Search"} {
		if strings.Contains(out, bad) {
			t.Errorf("transcript shows %q:\n%s", bad, out)
		}
	}
}
