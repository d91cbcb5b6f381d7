package repl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/contextmgr"
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
	out := strings.Join(transcript(hist, 3, func(s string) string { return s }), "\n")
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

// The resumed last turn Ctrl+O shows is bounded: a part over 32K
// characters is cut and says so, and the turn stops growing at 256K.
func TestLastTurnWholeIsBounded(t *testing.T) {
	big := strings.Repeat("x", 40<<10)
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "go"}}
	var calls []llm.ToolCall
	for i := range 12 {
		calls = append(calls, bash(fmt.Sprint(i), "cat big"))
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, ToolCalls: calls})
	for i := range 12 {
		msgs = append(msgs, llm.Message{Role: llm.RoleTool, ToolCallID: fmt.Sprint(i), Text: big})
	}
	lines := lastTurnWhole(msgs)
	total, cuts := 0, 0
	for _, l := range lines {
		total += len([]rune(l))
		if strings.Contains(l, "… (cut: the whole text is in the session file)") {
			cuts++
		}
	}
	if cuts != 12 {
		t.Errorf("%d parts say they were cut, want 12", cuts)
	}
	if total > wholeTurnChars+12*200 {
		t.Errorf("%d characters shown, want at most about %d", total, wholeTurnChars)
	}
	if lastTurnWhole([]llm.Message{{Role: llm.RoleAssistant, Text: "no prompt"}}) != nil {
		t.Error("a history without a prompt gave a turn")
	}
}

// A resumed history's own notes are shown as notes: the interruption note
// is one dim line, not a "›" prompt, and a compaction is one line (Ctrl+O
// shows the summary), whether it came before the turns shown or among them.
func TestTranscriptShowsNotesAsNotes(t *testing.T) {
	dim := func(s string) string { return "<dim>" + s + "</dim>" }
	hist := []llm.Message{
		{Role: llm.RoleUser, Text: contextmgr.SummaryPrefix + "the user wants the parser fixed"},
		{Role: llm.RoleUser, Text: "fix the parser"},
		{Role: llm.RoleAssistant, Text: "Working on it."},
		{Role: llm.RoleUser, Text: agent.InterruptedNote},
		{Role: llm.RoleUser, Text: "now the tests"},
		{Role: llm.RoleAssistant, Text: "Tests pass."},
	}
	lines := transcript(hist, 3, dim)
	out := strings.Join(lines, "\n")
	if !strings.HasPrefix(out, "── last 2 turns of this session ──\n<dim>✻ the earlier conversation was compacted into a summary (ctrl+o shows it)</dim>\n") {
		t.Errorf("no one compaction line first:\n%s", out)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "› [") {
			t.Errorf("a note is shown as a prompt: %q", l)
		}
	}
	if !strings.Contains(out, "<dim>  · note to the model: [The user interrupted the previous request") {
		t.Errorf("the interruption note is not a dim note:\n%s", out)
	}
	if strings.Contains(out, "the user wants the parser fixed") {
		t.Errorf("the summary is shown in the replay (it is Ctrl+O's):\n%s", out)
	}
	if sum := strings.Join(summaryWhole(hist), "\n"); !strings.Contains(sum, "the user wants the parser fixed") {
		t.Errorf("Ctrl+O has no summary: %q", sum)
	}
}
