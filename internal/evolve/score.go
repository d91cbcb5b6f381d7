// Package evolve is skill self-evolution: the auto-enhance stop hook that,
// after a turn worth learning from, runs the skill:enhance sub-agent over a
// compact transcript and installs what it wrote through the skill store, and
// the bundled meta-skills (synapse-skill-creator, synapse-skill-enhance) that teach it how.
package evolve

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
)

// Signals are what makes a turn worth learning from.
type Signals struct {
	ToolCalls    int  // tool calls in the turn
	Recovered    bool // a failed call was followed by a successful one
	FilesChanged bool // write/edit or a redirection into a file
	Corrected    bool // the user corrected course
}

// ManyToolCalls is how many calls count as "several".
const ManyToolCalls = 5

// Count is how many of the four signals are present.
func (s Signals) Count() int {
	n := 0
	for _, b := range []bool{s.ToolCalls >= ManyToolCalls, s.Recovered, s.FilesChanged, s.Corrected} {
		if b {
			n++
		}
	}
	return n
}

func (s Signals) String() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d tool calls", s.ToolCalls))
	if s.Recovered {
		parts = append(parts, "recovered from an error")
	}
	if s.FilesChanged {
		parts = append(parts, "changed files")
	}
	if s.Corrected {
		parts = append(parts, "the user corrected course")
	}
	return strings.Join(parts, ", ")
}

// Threshold is how many signals a profile needs: aggressive fires on any
// one, neutral on two, conservative (the default) on three.
func Threshold(profile string) int {
	switch profile {
	case config.ProfileAggressive:
		return 1
	case config.ProfileNeutral:
		return 2
	}
	return 3
}

// Worth reports whether the turn's signals reach the profile's threshold.
func Worth(s Signals, profile string) bool { return s.Count() >= Threshold(profile) }

// correction and this file's other patterns are compiled on first use, not
// at every start.
var correction = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(no,|not that|that's wrong|that is wrong|wrong|instead|actually|don't|do not|stop|undo|revert|try again|should have|you forgot)\b`)
})

// Score reads the signals of the last turn of conv: the messages from the
// last user prompt on (todo reminders are part of the turn). The user
// corrected course when that prompt follows an earlier turn and reads
// like a correction.
func Score(conv []llm.Message) Signals {
	start, prompts := lastPrompt(conv)
	var s Signals
	failed := false
	for _, m := range conv[start:] {
		switch m.Role {
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				s.ToolCalls++
				if changesFiles(commandOf(c)) {
					s.FilesChanged = true
				}
			}
		case llm.RoleTool:
			if m.IsError {
				failed = true
			} else if failed {
				s.Recovered = true
			}
		}
	}
	if prompts > 1 && start < len(conv) && correction().MatchString(agent.TypedPrompt(conv[start].Text)) {
		s.Corrected = true
	}
	return s
}

// lastPrompt finds the index of the last user prompt and counts the prompts.
func lastPrompt(conv []llm.Message) (start, prompts int) {
	for i, m := range conv {
		if m.Role == llm.RoleUser && !isReminder(m.Text) {
			start = i
			prompts++
		}
	}
	return start, prompts
}

// isReminder: a message the loop added inside the turn (a todo reminder,
// a Stop hook's reason to go on), not a prompt of the user's.
func isReminder(text string) bool {
	return strings.HasPrefix(text, "[System Reminder]") || strings.HasPrefix(text, agent.StopHookNotePrefix)
}

func commandOf(c llm.ToolCall) string {
	var in struct {
		Command string `json:"command"`
	}
	if err := jsonUnmarshal(c.Input, &in); err != nil {
		return ""
	}
	return in.Command
}

var (
	redirect = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[^0-9&<>])>>?\s*[^\s&|>]`) })
	devNull  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[0-9&]?>>?\s*/dev/null`) })
)

// changesFiles reports whether a command line writes files: the write and
// edit commands, or an output redirection to anything but /dev/null.
func changesFiles(cmd string) bool {
	for _, w := range router.Commands(cmd) {
		switch w {
		case "write", "edit", "tee", "cp", "mv", "sed", "patch", "mkdir", "touch":
			if w != "sed" || strings.Contains(cmd, "-i") {
				return true
			}
		}
	}
	return redirect().MatchString(devNull().ReplaceAllString(cmd, ""))
}
