package render

import (
	"strings"

	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	gtext "github.com/yuin/goldmark/text"
)

// The three GitHub extensions the renderer shows: strikethrough, task list
// items and tables. goldmark's extension package has them, but importing it
// compiles its autolink regular expressions at process start (5 ms and
// 260 KB on every run, `--version` included), so these are our own: the
// renderer reads one line at a time and needs little of them.

// strike is ~~struck~~ (or ~struck~) text.
type strike struct{ gast.BaseInline }

var kindStrike = gast.NewNodeKind("Strike")

func (n *strike) Kind() gast.NodeKind        { return kindStrike }
func (n *strike) Dump(src []byte, level int) { gast.DumpHelper(n, src, level, nil, nil) }

// strikeParser reads runs of one or two tildes as delimiters, which
// goldmark pairs as it pairs emphasis; longer runs are text (goldmark
// steps through a refused run a byte at a time, hence the look back).
// It is its own delimiter processor.
type strikeParser struct{}

func (strikeParser) Trigger() []byte         { return []byte{'~'} }
func (strikeParser) IsDelimiter(b byte) bool { return b == '~' }
func (strikeParser) OnMatch(int) gast.Node   { return &strike{} }
func (strikeParser) CanOpenCloser(o, c *parser.Delimiter) bool {
	return o.Char == c.Char && o.Length == c.Length
}

func (p strikeParser) Parse(_ gast.Node, block gtext.Reader, pc parser.Context) gast.Node {
	line, seg := block.PeekLine()
	before := block.PrecendingCharacter()
	d := parser.ScanDelimiter(line, before, 1, p)
	if d == nil || d.OriginalLength > 2 || before == '~' {
		return nil
	}
	d.Segment = seg.WithStop(seg.Start + d.OriginalLength)
	block.Advance(d.OriginalLength)
	pc.PushDelimiter(d)
	return d
}

// Task list item states.
const (
	noTask = iota
	taskOpen
	taskDone
)

// cutTaskBox takes the checkbox off a task list item's line
// ("- [x] done" → "- done", taskDone); other lines come back unchanged.
func cutTaskBox(body string) (string, int) {
	i := 0
	for i < len(body) && i < 9 && body[i] >= '0' && body[i] <= '9' {
		i++
	}
	switch {
	case i == 0 && body != "" && strings.IndexByte("-*+", body[0]) >= 0:
		i = 1
	case i > 0 && i < len(body) && (body[i] == '.' || body[i] == ')'):
		i++
	default:
		return body, noTask
	}
	rest := strings.TrimLeft(body[i:], " ")
	if len(rest) == len(body[i:]) || len(rest) < 4 || rest[0] != '[' || rest[2] != ']' || rest[3] != ' ' {
		return body, noTask
	}
	state := taskDone
	switch rest[1] {
	case ' ':
		state = taskOpen
	case 'x', 'X':
	default:
		return body, noTask
	}
	return body[:i] + " " + strings.TrimLeft(rest[3:], " "), state
}

// Column alignments a table's delimiter row sets.
type alignment int

const (
	alignNone alignment = iota
	alignLeft
	alignRight
	alignCenter
)

// tableCells splits a table row at its unescaped pipes; the outer pipes
// are optional and an escaped pipe (\|) is a pipe in the cell.
func tableCells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cell.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(row[i])
		}
	}
	if last := strings.TrimSpace(cell.String()); last != "" || !strings.HasSuffix(row, "|") {
		cells = append(cells, last)
	}
	return cells
}

// delimiterRow returns the alignments of a delimiter row's cells
// (---, :--, --:, :-:), or nil if the row is not one.
func delimiterRow(cells []string) []alignment {
	if len(cells) == 0 {
		return nil
	}
	out := make([]alignment, len(cells))
	for i, c := range cells {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		dashes := strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if dashes == "" || strings.Trim(dashes, "-") != "" {
			return nil
		}
		switch {
		case left && right:
			out[i] = alignCenter
		case left:
			out[i] = alignLeft
		case right:
			out[i] = alignRight
		}
	}
	return out
}
