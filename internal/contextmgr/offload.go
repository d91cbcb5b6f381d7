package contextmgr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/llm"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// OffloadPrefix starts the line that replaces an offloaded tool result.
const OffloadPrefix = "[Output offloaded: "

// pointerRE finds the file of an offload pointer; compiled on first use,
// not at every start.
var pointerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\[Output offloaded: [^\]]*? saved in (\S+?) — `)
})

// Pointer is the one line that stands for an offloaded result.
func Pointer(path, text string) string {
	lines := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		lines++
	}
	return fmt.Sprintf("%s%d characters, %d lines, saved in %s — read it again with: read %s]",
		OffloadPrefix, len(text), lines, path, path)
}

// PointerFile returns the file an offload pointer names ("" when text is none).
func PointerFile(text string) string {
	if !strings.HasPrefix(text, OffloadPrefix) {
		return ""
	}
	if m := pointerRE().FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// Offloaded is one tool result moved to a file.
type Offloaded struct {
	Index int    // its position in the history
	Path  string // the file holding the full text
}

// Offload moves the large tool results of part, which is the history from
// index first on, into files in dir and replaces each, in place, with a
// Pointer. Results already offloaded, short ones and ones carrying images
// are left alone. It returns what it moved, indexed in the whole history;
// on a write error it stops there (what was moved stays moved, consistent).
func Offload(part []llm.Message, first int, dir string, minChars int) ([]Offloaded, error) {
	var out []Offloaded
	for j, m := range part {
		if m.Role != llm.RoleTool || len(m.Text) < minChars || len(m.Images) > 0 || strings.HasPrefix(m.Text, OffloadPrefix) {
			continue
		}
		if len(out) == 0 {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, fmt.Errorf("create the offload directory %s: %w", dir, err)
			}
		}
		i := first + j
		path := offloadPath(dir, i, m)
		if err := fsutil.WriteFileAtomic(path, []byte(m.Text), 0o600); err != nil {
			return out, fmt.Errorf("offload a tool result: %w", err)
		}
		part[j].Text = Pointer(path, m.Text)
		out = append(out, Offloaded{Index: i, Path: path})
	}
	return out, nil
}

// offloadPath is the file for h[i]'s text: .json when the text is a JSON
// object or array (so jq and editors treat it as such), .txt otherwise.
func offloadPath(dir string, i int, m llm.Message) string {
	ext := ".txt"
	if t := strings.TrimSpace(m.Text); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Valid([]byte(t)) {
		ext = ".json"
	}
	return filepath.Join(dir, strconv.Itoa(i)+"-"+safeName(m.ToolCallID)+ext)
}

// safeName keeps a call id usable as part of a file name.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
		if b.Len() >= 64 {
			break
		}
	}
	if b.Len() == 0 {
		return "result"
	}
	return b.String()
}

// Expand returns a function that gives a tool result back with its offload
// pointer replaced by the file's text, when the file is in dir (for the
// archive kept at a compaction, so that nothing is lost when the files go).
// Only tool results are expanded: a pointer-shaped text in a user's or the
// model's message is their words. Files elsewhere are not read; one that is
// gone or unreadable becomes a "[Content unavailable: …]" line, so nobody
// takes the pointer for the content.
func Expand(dir string) func(llm.Message) llm.Message {
	dir = filepath.Clean(dir)
	return func(m llm.Message) llm.Message {
		p := PointerFile(m.Text)
		if m.Role != llm.RoleTool || p == "" || filepath.Dir(p) != dir {
			return m
		}
		data, err := readRegular(p)
		if err != nil {
			m.Text = "[Content unavailable: the offloaded tool result " + p + " cannot be read (" + err.Error() + ")]"
			return m
		}
		m.Text = string(data)
		return m
	}
}

// readRegular reads a regular file without following a symbolic link.
func readRegular(p string) ([]byte, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return os.ReadFile(p)
}

// Unreferenced lists the files in dir that no message of h points to.
func Unreferenced(h []llm.Message, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	for _, m := range h {
		if p := PointerFile(m.Text); p != "" {
			used[filepath.Base(p)] = true
		}
	}
	var out []string
	for _, e := range ents {
		if !used[e.Name()] && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// Count is the number of offloaded results in h.
func Count(h []llm.Message) int {
	n := 0
	for _, m := range h {
		if m.Role == llm.RoleTool && strings.HasPrefix(m.Text, OffloadPrefix) {
			n++
		}
	}
	return n
}

// Shrink cuts large tool results of h[from:] to their start and end, in
// place, the whole text saved in dir (dir "": in no file, and the cut says
// so), until the estimate has dropped by need tokens. It is for the newest
// messages, which Offload leaves alone because the model is working with
// them: the largest go first, and the newest step's results (what the model
// is about to read) last. A result keeps minChars/2 characters of its start
// and end, so the model still sees what it is about. It returns what it cut
// and how many tokens that saved; on a write error it stops there.
func Shrink(h []llm.Message, from int, dir string, minChars, need int) ([]Offloaded, int, error) {
	newest := len(h)
	for newest > 0 && h[newest-1].Role == llm.RoleTool {
		newest--
	}
	var cand []int
	for i := max(from, 0); i < len(h); i++ {
		m := h[i]
		if m.Role == llm.RoleTool && len(m.Text) >= minChars && len(m.Images) == 0 && !strings.HasPrefix(m.Text, OffloadPrefix) {
			cand = append(cand, i)
		}
	}
	slices.SortStableFunc(cand, func(a, b int) int {
		if an, bn := a >= newest, b >= newest; an != bn {
			if an {
				return 1
			}
			return -1
		}
		return len(h[b].Text) - len(h[a].Text)
	})
	var out []Offloaded
	saved := 0
	for _, i := range cand {
		if saved >= need {
			break
		}
		m := h[i]
		path := ""
		if dir != "" {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return out, saved, fmt.Errorf("create the offload directory %s: %w", dir, err)
			}
			path = offloadPath(dir, i, m)
			if err := fsutil.WriteFileAtomic(path, []byte(m.Text), 0o600); err != nil {
				return out, saved, fmt.Errorf("offload a tool result: %w", err)
			}
		}
		before := Estimate(m)
		h[i].Text = Excerpt(path, m.Text, minChars/2)
		saved += before - Estimate(h[i])
		out = append(out, Offloaded{Index: i, Path: path})
	}
	return out, saved, nil
}

// Excerpt is text cut to about keep characters of its start and end (two
// thirds start, one third end, at line ends where there are any) after a
// Pointer to path, or, with no path, after a line saying the middle is gone.
func Excerpt(path, text string, keep int) string {
	head, tail := textutil.Ends(text, keep)
	lines := strings.Count(text, "\n") + 1
	var b strings.Builder
	if path != "" {
		b.WriteString(Pointer(path, text))
		fmt.Fprintf(&b, " Its start and end follow; the middle is in the file: read %s --offset %d --limit 200 reads from line %d on.\n",
			path, strings.Count(head, "\n"), strings.Count(head, "\n")+1)
	} else {
		fmt.Fprintf(&b, "[Output cut to fit the context window: %d characters, %d lines; only its start and end are kept. Run the command again, filtered, if you need the rest.]\n",
			len(text), lines)
	}
	b.WriteString(head)
	b.WriteString("\n" + textutil.CutNote(int64(len(text)-len(head)-len(tail))) + "\n")
	b.WriteString(tail)
	return b.String()
}
