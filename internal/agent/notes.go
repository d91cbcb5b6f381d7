package agent

import (
	"strings"

	"github.com/synapse-agent/synapse/internal/contextmgr"
)

// IsNote reports a user-side message Synapse wrote itself rather than the
// user typed: why the previous request has no answer, a compaction's
// summary, the todo reminder, a Stop hook's reason to go on. A view that
// replays a history shows these as notes, not as prompts.
func IsNote(text string) bool {
	for _, p := range []string{interruptedLead, "[The previous request ", contextmgr.SummaryPrefix, todoReminderLead, StopHookNotePrefix} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// CompactionSummary is the summary a compaction put in place of the
// earlier messages, when text is that note (ok false otherwise).
func CompactionSummary(text string) (summary string, ok bool) {
	return strings.CutPrefix(text, contextmgr.SummaryPrefix)
}
