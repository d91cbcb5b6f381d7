package repl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Keys complete acts on.
const (
	keyTab   = '\t'
	keyCtrlR = 18
)

// search is the state of a Ctrl+R reverse search: the text searched for and
// the history index of the last match (0 is the most recent entry).
type search struct {
	query string
	match string
	idx   int
}

// complete is what Tab and Ctrl+R do to the line being typed (pos is the
// cursor's byte offset in it): Tab completes a slash command or a path
// (also after @), Ctrl+R finds in the history the newest prompt containing
// the text typed (again: the next older match). It returns the new line
// and cursor; a message for the user goes under the prompt (es.note).
func (r *REPL) complete(line string, pos int, key rune) (string, int, bool) {
	switch key {
	case keyTab:
		r.search = nil
		return r.completeTab(line, pos)
	case keyCtrlR:
		return r.reverseSearch(line)
	}
	r.search = nil
	return "", 0, false
}

func (r *REPL) reverseSearch(line string) (string, int, bool) {
	s := r.search
	if s == nil || line != s.match {
		s = &search{query: line, idx: -1}
	}
	n := r.hist.Len()
	for i := s.idx + 1; i < n; i++ {
		e := r.hist.At(i)
		if e != line && strings.Contains(strings.ToLower(e), strings.ToLower(s.query)) {
			s.idx, s.match = i, e
			r.search = s
			r.es.note = fmt.Sprintf("(reverse search %q · Ctrl+R: older)", s.query)
			return e, len(e), true
		}
	}
	r.search = s
	r.es.note = fmt.Sprintf("(no earlier prompt contains %q)", s.query)
	return line, len(line), true
}

func (r *REPL) completeTab(line string, pos int) (string, int, bool) {
	before, after := line[:pos], line[pos:]
	start := strings.LastIndexAny(before, " \t") + 1
	word := before[start:]
	var cands []string
	var prefix string // what the candidates complete
	switch {
	case start == 0 && strings.HasPrefix(word, "/"):
		prefix = word
		for _, c := range commandNames() {
			if strings.HasPrefix("/"+c, strings.ToLower(word)) {
				cands = append(cands, "/"+c+" ")
			}
		}
	default:
		at := strings.HasPrefix(word, "@")
		p := strings.TrimPrefix(word, "@")
		prefix = word
		for _, c := range r.pathCandidates(p) {
			if at {
				c = "@" + c
			}
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return line, pos, true
	}
	repl := commonPrefixOf(cands)
	if len(cands) > 1 && len(repl) <= len(prefix) {
		shown := cands
		if len(shown) > 20 {
			shown = append(shown[:20:20], fmt.Sprintf("… %d more", len(cands)-20))
		}
		r.es.note = strings.Join(shown, "  ")
		return line, pos, true
	}
	if len(repl) < len(prefix) {
		return line, pos, true
	}
	newBefore := before[:start] + repl
	return newBefore + after, len(newBefore), true
}

// pathCandidates are the entries matching the path prefix p, relative to
// the working directory as typed (directories end in /, files in a space).
func (r *REPL) pathCandidates(p string) []string {
	dirPart, base := filepath.Split(p)
	dir := dirPart
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.o.Cwd, dir)
	}
	if strings.HasPrefix(dirPart, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, dirPart[2:])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, base) || (strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
				isDir = st.IsDir()
			}
		}
		if isDir {
			out = append(out, dirPart+name+"/")
		} else {
			out = append(out, dirPart+name+" ")
		}
	}
	sort.Strings(out)
	return out
}

func commonPrefixOf(ss []string) string {
	p := ss[0]
	for _, s := range ss[1:] {
		n := 0
		for n < len(p) && n < len(s) && p[n] == s[n] {
			n++
		}
		p = p[:n]
	}
	return p
}

// mentionsNote starts the note listing the files a prompt mentions.
const mentionsNote = "\n\n[Files the user mentioned with @ (read them with `read <path>` when you need them): "

// withMentions adds to input the files it mentions as @path (existing
// ones, relative to the working directory or absolute), so the model knows
// to read them; the file content itself is not pasted into the prompt.
func (r *REPL) withMentions(input string) string {
	var found []string
	seen := map[string]bool{}
	for _, f := range strings.Fields(input) {
		if !strings.HasPrefix(f, "@") || len(f) < 2 {
			continue
		}
		p := strings.TrimRight(f[1:], ",.;:!?)\"'")
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(r.o.Cwd, p)
		}
		if _, err := os.Stat(abs); err != nil || seen[p] {
			continue
		}
		seen[p] = true
		found = append(found, p)
	}
	if len(found) == 0 {
		return input
	}
	return input + mentionsNote + strings.Join(found, ", ") + "]"
}

// withoutMentions is the user's text of a prompt withMentions extended.
func withoutMentions(text string) string {
	if i := strings.LastIndex(text, mentionsNote); i >= 0 {
		return text[:i]
	}
	return text
}
