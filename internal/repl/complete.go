package repl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// complete is what Tab does to the line being typed (pos is the cursor's
// byte offset in it): it completes a slash command or a path (also after
// @). It returns the new line and cursor; candidates to choose from go
// under the prompt (es.note).
func (r *REPL) complete(line string, pos int) (string, int) {
	return r.completeTab(line, pos)
}

func (r *REPL) completeTab(line string, pos int) (string, int) {
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
		return line, pos
	}
	repl := commonPrefixOf(cands)
	if len(cands) > 1 && len(repl) <= len(prefix) {
		shown := cands
		if len(shown) > 20 {
			shown = append(shown[:20:20], fmt.Sprintf("… %d more", len(cands)-20))
		}
		r.es.note = strings.Join(shown, "  ")
		return line, pos
	}
	if len(repl) < len(prefix) {
		return line, pos
	}
	newBefore := before[:start] + repl
	return newBefore + after, len(newBefore)
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
