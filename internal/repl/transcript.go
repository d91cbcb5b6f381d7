package repl

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Replay limits: the last turns of a resumed session, folded so that the
// user sees where they left off without the whole conversation scrolling by.
const (
	replayTurns       = 3
	replayPromptLines = 3
	replayAnswerLines = 6
	replayToolLines   = 3
)

// replay shows the last turns of a resumed conversation; Ctrl+O then
// shows its last turn whole, until a turn of this session has run.
func (r *REPL) replay(hist []llm.Message) {
	lines := transcript(hist, replayTurns, r.dim)
	if len(lines) == 0 {
		return
	}
	r.println(lines...)
	r.resumedTurn = append(summaryWhole(hist), lastTurnWhole(hist)...)
}

// summaryWhole is the last compaction summary of msgs, for Ctrl+O (nil: none).
func summaryWhole(msgs []llm.Message) []string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		if sum, ok := agent.CompactionSummary(msgs[i].Text); ok {
			out := []string{"── the summary the session was compacted into ──"}
			for _, l := range strings.Split(strings.TrimSpace(textutil.Sanitize(sum)), "\n") {
				out = append(out, "  "+l)
			}
			return out
		}
	}
	return nil
}

// compactedLine is the one line a compaction takes in the replay.
const compactedLine = "✻ the earlier conversation was compacted into a summary (ctrl+o shows it)"

// noteLine is one of Synapse's own notes to the model, as the replay shows
// it: one dim line, never a prompt.
func noteLine(text string, dim func(string) string) string {
	if _, ok := agent.CompactionSummary(text); ok {
		return dim(compactedLine)
	}
	return dim("  · note to the model: " + textutil.Truncate(textutil.OneLine(textutil.Sanitize(text), 200), 100))
}

// Bounds of the resumed last turn Ctrl+O shows, in characters: per part
// (a command's output, the answer) and in all, as for the folded parts of
// a live turn.
const (
	wholePartChars = 32 << 10
	wholeTurnChars = 256 << 10
)

// lastTurnWhole renders the last turn of msgs without folding: the prompt,
// each command with its output, the answer. The text comes from a session
// file, so it is sanitised; parts past the bounds are cut and say so.
func lastTurnWhole(msgs []llm.Message) []string {
	start := len(msgs) - 1
	for start >= 0 && !isPrompt(msgs[start]) {
		start--
	}
	if start < 0 {
		return nil
	}
	outputs := map[string]string{}
	for _, m := range msgs[start:] {
		if m.Role == llm.RoleTool {
			outputs[m.ToolCallID] = m.Text
		}
	}
	budget := wholeTurnChars
	part := func(s, indent string) []string {
		s = strings.TrimRight(textutil.Sanitize(s), "\n")
		limit := min(wholePartChars, max(budget, 0))
		cut := ""
		n := utf8.RuneCountInString(s)
		if n > limit {
			s, n = textutil.Clip(s, limit), limit
			cut = indent + "… (cut: the whole text is in the session file)"
		}
		budget -= n
		var out []string
		for _, l := range strings.Split(s, "\n") {
			out = append(out, indent+l)
		}
		if cut != "" {
			out = append(out, cut)
		}
		return out
	}
	out := []string{"── the last turn of the resumed session, whole ──"}
	prompt := withoutMentions(tool.UnwrapPlanPrompt(agent.TypedPrompt(msgs[start].Text)))
	out = append(out, fold(prompt, 1<<30, "› ")...)
	for _, m := range msgs[start+1:] {
		if m.Role != llm.RoleAssistant {
			continue
		}
		for _, c := range m.ToolCalls {
			out = append(out, "  ▸ "+textutil.OneLine(toolLine(c), 200))
			if o, ok := outputs[c.ID]; ok && strings.TrimSpace(o) != "" && o != tool.NoOutput {
				out = append(out, part(o, "    ")...)
			}
		}
		if t := strings.TrimSpace(m.Text); t != "" {
			out = append(out, part(t, "")...)
		}
	}
	return append(out, "──")
}

// transcript renders the last turns of msgs: each user prompt, the tool
// commands run for it (folded after a few) and the answer (folded after a
// few lines). The text comes from a session file, so it is sanitised.
func transcript(msgs []llm.Message, turns int, dim func(string) string) []string {
	start := len(msgs)
	for n := 0; start > 0 && n < turns; {
		start--
		if isPrompt(msgs[start]) {
			n++
		}
	}
	for start < len(msgs) && !isPrompt(msgs[start]) {
		start++ // a compacted history may begin mid-turn
	}
	if start == len(msgs) {
		return nil
	}
	out := []string{fmt.Sprintf("── last %s of this session ──", plural(countPrompts(msgs[start:]), "turn"))}
	for _, m := range msgs[:start] { // a compaction before the turns shown: said once, first
		if _, ok := agent.CompactionSummary(m.Text); ok && m.Role == llm.RoleUser {
			out = append(out, dim(compactedLine))
			break
		}
	}
	var tools []string
	var answer string
	flush := func() {
		for i, t := range tools {
			if i == replayToolLines {
				out = append(out, "  ▸ … "+more(len(tools)-i, "command"))
				break
			}
			out = append(out, "  ▸ "+t)
		}
		if answer != "" {
			out = append(out, fold(answer, replayAnswerLines, "")...)
		}
		tools, answer = nil, ""
	}
	for _, m := range msgs[start:] {
		switch {
		case m.Role == llm.RoleUser && agent.IsNote(m.Text):
			if strings.HasPrefix(m.Text, agent.StopHookNotePrefix) {
				continue // part of the turn it continued
			}
			flush()
			out = append(out, noteLine(m.Text, dim))
		case isPrompt(m):
			flush()
			text := withoutMentions(tool.UnwrapPlanPrompt(agent.TypedPrompt(m.Text)))
			out = append(out, fold(text, replayPromptLines, "› ")...)
		case m.Role == llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				tools = append(tools, textutil.OneLine(toolLine(c), 100))
			}
			if t := strings.TrimSpace(m.Text); t != "" {
				answer = t // the turn's last text is its answer
			}
		}
	}
	flush()
	return append(out, "──")
}

// isPrompt: a user message with text the user typed, not one of
// Synapse's own notes (agent.IsNote: a Stop hook's reason to go on, why
// the previous request has no answer, a compaction's summary).
func isPrompt(m llm.Message) bool {
	return m.Role == llm.RoleUser && strings.TrimSpace(m.Text) != "" && !agent.IsNote(m.Text)
}

func countPrompts(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if isPrompt(m) {
			n++
		}
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func more(n int, word string) string {
	if n == 1 {
		return "1 more " + word
	}
	return fmt.Sprintf("%d more %ss", n, word)
}

// toolLine is how a call reads on one line: the Bash command, else the
// tool's name and input.
func toolLine(c llm.ToolCall) string {
	var in struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(c.Input, &in) == nil && in.Command != "" {
		return textutil.Sanitize(in.Command)
	}
	return textutil.Sanitize(c.Name + " " + string(c.Input))
}

// fold keeps the first max lines of s (the first prefixed with lead, the
// others indented to match) and says how many were left out.
func fold(s string, max int, lead string) []string {
	lines := strings.Split(strings.TrimRight(textutil.Sanitize(s), "\n"), "\n")
	indent := strings.Repeat(" ", len([]rune(lead)))
	var out []string
	for i, l := range lines {
		if i == max {
			out = append(out, indent+"… ("+more(len(lines)-i, "line")+")")
			break
		}
		p := indent
		if i == 0 {
			p = lead
		}
		out = append(out, p+textutil.Truncate(l, 200))
	}
	return out
}

// closest is the candidate nearest to s by edit distance, when it is near
// enough to be a likely typo ("" otherwise).
func closest(s string, candidates []string) string {
	s = strings.ToLower(s)
	best, bestD, bestP := "", -1, 0
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(s, lc)
		if (strings.HasPrefix(lc, s) && s != "") || (len(s) >= 3 && subsequence(s, lc)) {
			d = min(d, 1) // a prefix or an abbreviation is a strong hint ("res", "last")
		}
		p := commonPrefix(s, lc) // ties go to the longer shared start
		if bestD < 0 || d < bestD || (d == bestD && p > bestP) {
			best, bestD, bestP = c, d, p
		}
	}
	limit := 1 // a short name is one typo away, a longer one two
	if len(s) > 4 {
		limit = 2
	}
	if bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// subsequence reports whether s's letters appear in t in order.
func subsequence(s, t string) bool {
	i := 0
	for j := 0; j < len(t) && i < len(s); j++ {
		if s[i] == t[j] {
			i++
		}
	}
	return i == len(s)
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// editDistance is the optimal-string-alignment distance between a and b
// by runes: insertions, deletions, substitutions and swaps of neighbours
// ("hlep" is one step from "help").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
