package render

import (
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// FileChange is what an edit or write did to a file, for the person: the
// renderer shows it as a unified diff with line numbers, or a preview of a
// new file. The model never sees it.
type FileChange struct {
	Path     string
	Old, New string
	// Created is set when the file did not exist before.
	Created bool
}

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 2

// diffLinesOf renders a change, trimmed to n rows with a count of the rows
// left out (folded reports that). go-udiff computes the hunks (Myers' diff on
// lines); this lays them out with the line numbers of the new file (of the
// old one for removed lines).
func (r *Renderer) diffLinesOf(c FileChange, n int) (rows []string, folded bool) {
	old, nw := clean(c.Old, true), clean(c.New, true)
	if c.Created || old == "" {
		return r.newFilePreview(nw, n)
	}
	if old == nw {
		return []string{r.p.dim("    (no changes)")}, false
	}
	edits := udiff.Lines(old, nw)
	d, err := udiff.ToUnifiedDiff(c.Path, c.Path, old, edits, diffContext)
	if err != nil || len(d.Hunks) == 0 {
		return nil, false
	}
	added, removed := 0, 0
	for hi, h := range d.Hunks {
		if hi > 0 {
			rows = append(rows, r.p.dim("     ⋮"))
		}
		oldNo, newNo := h.FromLine, h.ToLine
		for _, l := range h.Lines {
			text := strings.TrimSuffix(l.Content, "\n")
			switch l.Kind {
			case udiff.Delete:
				rows = append(rows, r.fit(r.p.red(strings.TrimRight(numCol(oldNo)+" - "+text, " "))))
				oldNo++
				removed++
			case udiff.Insert:
				rows = append(rows, r.fit(r.p.green(strings.TrimRight(numCol(newNo)+" + "+text, " "))))
				newNo++
				added++
			default:
				rows = append(rows, r.fit(r.p.dim(strings.TrimRight(numCol(newNo)+"   "+text, " "))))
				oldNo++
				newNo++
			}
		}
	}
	summary := "    " + plural(added, "line", "lines") + " added, " + itoa(removed) + " removed"
	shown, folded := r.trimRows(rows, n, "more diff line", "more diff lines")
	return append([]string{r.p.dim(summary)}, shown...), folded
}

// newFilePreview is the first n lines of a new file's content.
func (r *Renderer) newFilePreview(content string, n int) ([]string, bool) {
	text := strings.TrimRight(content, "\n")
	if text == "" {
		return []string{r.p.dim("    (empty file)")}, false
	}
	var rows []string
	for i, l := range strings.Split(text, "\n") {
		rows = append(rows, r.fit(r.p.green(numCol(i+1)+" + "+l)))
	}
	return r.trimRows(rows, n, "more line", "more lines")
}

// trimRows keeps the first n rows and counts the rest.
func (r *Renderer) trimRows(rows []string, n int, one, many string) ([]string, bool) {
	if len(rows) <= n+1 {
		return rows, false
	}
	return append(rows[:n:n], r.p.dim("    … "+plural(len(rows)-n, one, many)+r.expandHint())), true
}

// numCol is a right-aligned line number column.
func numCol(n int) string {
	s := itoa(n)
	if len(s) < 5 {
		s = strings.Repeat(" ", 5-len(s)) + s
	}
	return s
}
