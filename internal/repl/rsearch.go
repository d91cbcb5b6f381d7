package repl

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// entries is the history a reverse search goes through (*History): At(0)
// is the newest entry.
type entries interface {
	Len() int
	At(i int) string
}

// revSearch is an incremental reverse search of the history (Ctrl+R), as
// in bash and zsh: each character typed narrows it, Backspace widens it,
// Ctrl+R goes to the next older match and Ctrl+S to the next newer one.
// Matching is a case-insensitive substring, newest first.
type revSearch struct {
	hist   entries
	query  string
	idx    int    // the history entry shown (-1: none yet, saved is shown)
	failed bool   // the last step found nothing; the entry shown stays
	dir    string // what failed: "" (the query), "older" or "newer"
	saved  string // the prompt before Ctrl+R, shown until a match and restored by Ctrl+G
}

// newRevSearch starts a search from the prompt being typed: a one-line
// prompt is the first query.
func newRevSearch(h entries, saved string) *revSearch {
	s := &revSearch{hist: h, idx: -1, saved: saved}
	if !strings.Contains(saved, "\n") {
		s.query = saved
	}
	if s.query != "" {
		s.find(0, 1, "")
	}
	return s
}

// text is what the search shows and what accepting it gives: the match,
// or the prompt from before while there is none.
func (s *revSearch) text() string {
	if s.idx < 0 {
		return s.saved
	}
	return s.hist.At(s.idx)
}

func (s *revSearch) matches(i int) bool {
	return strings.Contains(strings.ToLower(s.hist.At(i)), strings.ToLower(s.query))
}

// find looks from entry from in direction step (1: older, -1: newer) for
// the query. A prompt sent more than once is found once, at its newest.
// Not found, the entry shown stays and the search fails.
func (s *revSearch) find(from, step int, dir string) {
	n := s.hist.Len()
	newest := make(map[string]int, n)
	for i := range n {
		if _, ok := newest[s.hist.At(i)]; !ok {
			newest[s.hist.At(i)] = i
		}
	}
	for i := from; i >= 0 && i < n; i += step {
		if i != s.idx && newest[s.hist.At(i)] == i && s.matches(i) {
			s.idx, s.failed, s.dir = i, false, ""
			return
		}
	}
	s.failed, s.dir = true, dir
}

// typed narrows the search: the entry shown still matching stays (as in
// bash), otherwise the next older one that matches.
func (s *revSearch) typed(text string) {
	s.query += text
	if s.idx >= 0 && s.matches(s.idx) {
		s.failed, s.dir = false, ""
		return
	}
	s.find(max(s.idx, 0), 1, "")
}

// backspace widens the search: one character fewer, the entry shown kept
// when it matches, the newest match otherwise.
func (s *revSearch) backspace() {
	r := []rune(s.query)
	if len(r) == 0 {
		return
	}
	s.query = string(r[:len(r)-1])
	if s.idx >= 0 && s.matches(s.idx) {
		s.failed, s.dir = false, ""
		return
	}
	s.idx = -1
	if s.query != "" {
		s.find(0, 1, "")
	} else {
		s.failed, s.dir = false, ""
	}
}

// older is Ctrl+R in the search: the next older match; with nothing typed
// yet, last (the query of the search before) is searched again.
func (s *revSearch) older(last string) {
	if s.query == "" {
		if last == "" {
			return
		}
		s.query = last
		s.find(0, 1, "")
		return
	}
	s.find(s.idx+1, 1, "older")
}

// newer is Ctrl+S: the next newer match.
func (s *revSearch) newer() {
	if s.query == "" || s.idx <= 0 {
		if s.query != "" {
			s.failed, s.dir = true, "newer"
		}
		return
	}
	s.find(s.idx-1, -1, "newer")
}

// searchKey is a key typed while the search is shown. handled false: the
// search was accepted into the editor and the key is the editor's to act
// on (an editing key); done reports a prompt to send (Enter).
func (r *REPL) searchKey(ki keyInput) (text string, done, handled bool) {
	s := r.search
	if ki.isPaste {
		s.typed(strings.ReplaceAll(ki.paste, "\n", " "))
		return "", false, true
	}
	k := ki.key
	switch k.String() {
	case "enter":
		r.lastQuery = s.query
		r.search = nil
		r.ed.setValue(r.fitEditor(s.text()))
		return s.text(), true, true
	case "ctrl+g", "ctrl+c":
		r.search = nil
		r.ed.setValue(s.saved)
		return "", false, true
	case "ctrl+r":
		s.older(r.lastQuery)
		return "", false, true
	case "ctrl+s":
		s.newer()
		return "", false, true
	case "backspace", "ctrl+h":
		s.backspace()
		return "", false, true
	case "esc", "tab":
		r.acceptSearch()
		return "", false, true
	}
	if k.Text != "" && k.Mod&^tea.ModShift == 0 {
		s.typed(k.Text)
		return "", false, true
	}
	r.acceptSearch()
	return "", false, false
}

// acceptSearch leaves the search with its text in the editor, the cursor
// at its end; Up and Down then go on through the history from the match.
func (r *REPL) acceptSearch() {
	s := r.search
	r.search = nil
	r.lastQuery = s.query
	r.ed.setValue(r.fitEditor(s.text()))
	if s.idx >= 0 {
		r.es.histIdx, r.es.draft = s.idx, s.saved
	}
}

// Styles of the search's rows.
const (
	highlightOn  = "\x1b[7m" // the match, in reverse video
	highlightOff = "\x1b[27m"
)

// searchRows are the rows the search shows in place of the prompt:
// "(reverse-i-search) 'query': " and the entry found, its match
// highlighted and its further lines under it; x is the cursor's column (at
// the end of the query) on the first row. A tall entry shows the rows that
// fit.
func (r *REPL) searchRows() (rows []string, x int) {
	s := r.search
	label := "(reverse-i-search)"
	if s.failed {
		label = "(failing reverse-i-search)"
	}
	query := textutil.Sanitize(strings.ReplaceAll(s.query, "\t", " "))
	head := label + " '" + query
	x = ansi.StringWidth(head)
	head += "': "
	text := textutil.Sanitize(s.text())
	if s.idx >= 0 && s.query != "" && r.o.Color {
		lt, lq := strings.ToLower(text), strings.ToLower(s.query)
		if i := strings.Index(lt, lq); i >= 0 && len(lt) == len(text) && len(lq) == len(s.query) {
			text = text[:i] + highlightOn + text[i:i+len(s.query)] + highlightOff + text[i+len(s.query):]
		}
	}
	w := max(20, r.ed.width-1)
	indent := strings.Repeat(" ", ansi.StringWidth(r.ed.prompt))
	for i, line := range strings.Split(text, "\n") {
		if i == 0 {
			line = head + line
		} else {
			line = indent + line
		}
		line = strings.ReplaceAll(line, "\t", "    ")
		for _, row := range strings.Split(ansi.Hardwrap(line, w, true), "\n") {
			if strings.Contains(row, highlightOn) && !strings.Contains(row[strings.LastIndex(row, highlightOn):], highlightOff) {
				row += highlightOff // a match cut by the wrap
			}
			rows = append(rows, row)
		}
	}
	if n := r.ed.visibleRows(); len(rows) > n {
		rows = append(rows[:n-1], fmt.Sprintf("%s… %d more rows", indent, len(rows)-n+1))
	}
	return rows, min(x, w)
}

// searchHint is the dim row under the search: its keys, or what was not
// found.
func (r *REPL) searchHint() string {
	s := r.search
	q := textutil.Sanitize(s.query)
	switch {
	case s.failed && s.dir == "older":
		return fmt.Sprintf("no older prompt contains '%s' · Ctrl+S newer · Enter sends · Esc edits · Ctrl+G cancels", q)
	case s.failed && s.dir == "newer":
		return fmt.Sprintf("no newer prompt contains '%s' · Ctrl+R older · Enter sends · Esc edits · Ctrl+G cancels", q)
	case s.failed:
		return fmt.Sprintf("no match for '%s' · Backspace widens · Ctrl+G cancels", q)
	case s.query == "":
		return "type to search the history · Ctrl+R older · Ctrl+G cancels"
	}
	return "Ctrl+R older · Ctrl+S newer · Enter sends · Esc edits · Ctrl+G cancels"
}
