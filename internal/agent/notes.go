package agent

import (
	"fmt"
	"strings"

	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// IsNote reports a user-side message Synapse wrote itself rather than the
// user typed: why the previous request has no answer, a compaction's
// summary, the todo reminder, a Stop hook's reason to go on. A view that
// replays a history shows these as notes, not as prompts.
func IsNote(text string) bool {
	for _, p := range []string{interruptedLead, "[The previous request ", ShellNoteLead, contextmgr.SummaryPrefix, todoReminderLead, StopHookNotePrefix} {
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

// ShellNoteLead starts the note of a command the user ran themselves (the
// REPL's `!` bash mode).
const ShellNoteLead = "[The user ran a shell command themselves"

// ShellNote is the note that tells the model about a command the user ran
// in the REPL's bash mode: the command, its exit code and its output (cut
// to maxBytes, the end kept, where results and errors are).
func ShellNote(cmd, output string, exitCode, maxBytes int) string {
	output = strings.TrimRight(output, "\n")
	if n := len(output); n > maxBytes {
		tail := textutil.TailBytes(output, maxBytes)
		output = textutil.CutNote(int64(n-len(tail))) + "\n" + tail
	}
	return fmt.Sprintf("%s (bash mode, not a request to you): `%s`, exit code %d. Its output:\n%s\n]", ShellNoteLead, cmd, exitCode, output)
}

// AddNote queues a user-side note for the model: the next run puts it
// before its prompt (what the user did between turns, such as a `!`
// command and its output).
func (r *Runner) AddNote(text string) {
	r.mu.Lock()
	r.notes = append(r.notes, text)
	r.mu.Unlock()
}
