package render

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	gtext "github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// SGR codes used by the renderer's own styles (code has its own: highlight.go).
const (
	sgrReset     = "\x1b[0m"
	sgrBold      = "\x1b[1m"
	sgrDim       = "\x1b[2m"
	sgrItalic    = "\x1b[3m"
	sgrUnderline = "\x1b[4m"
	sgrStrike    = "\x1b[9m"
	sgrRed       = "\x1b[31m"
	sgrGreen     = "\x1b[32m"
	sgrYellow    = "\x1b[33m"
	sgrCyan      = "\x1b[36m"
)

// palette wraps text in SGR codes, or returns it unchanged when colour is off.
type palette struct{ on bool }

func (p palette) wrap(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return code + s + sgrReset
}

func (p palette) bold(s string) string   { return p.wrap(sgrBold, s) }
func (p palette) dim(s string) string    { return p.wrap(sgrDim, s) }
func (p palette) italic(s string) string { return p.wrap(sgrItalic, s) }
func (p palette) under(s string) string  { return p.wrap(sgrUnderline, s) }
func (p palette) strike(s string) string { return p.wrap(sgrStrike, s) }
func (p palette) red(s string) string    { return p.wrap(sgrRed, s) }
func (p palette) green(s string) string  { return p.wrap(sgrGreen, s) }
func (p palette) yellow(s string) string { return p.wrap(sgrYellow, s) }
func (p palette) cyan(s string) string   { return p.wrap(sgrCyan, s) }

// markdown renders the model's text for a terminal as it streams, one
// complete line at a time, so that the cost of a line never depends on how
// long the answer already is. goldmark parses each line's block and inline
// structure, highlight.go colours fenced code, x/ansi wraps at the terminal
// width. The only state carried between lines is what a line needs from
// the ones before it: an open code fence (and its lexer), and the rows of a
// table, which are laid out together once the table ends.
type markdown struct {
	p     palette
	width int
	gm    goldmark.Markdown

	inCode bool
	fence  string
	lexer  *codeLang // nil: no highlighting for this block
	table  []string  // raw rows of the table being read
}

func newMarkdown(p palette, width int) markdown {
	return markdown{p: p, width: width}
}

// parser returns the Markdown parser, made when the first line is
// rendered: a renderer that never shows Markdown (exec, headless runs)
// never builds one.
func (m *markdown) parser() goldmark.Markdown {
	if m.gm == nil {
		m.gm = goldmark.New(goldmark.WithParserOptions(parser.WithInlineParsers(util.Prioritized(strikeParser{}, 500))))
	}
	return m.gm
}

func (m *markdown) reset() { m.inCode, m.fence, m.lexer, m.table = false, "", nil, nil }

// inTable reports whether table rows are being collected.
func (m *markdown) inTable() bool { return len(m.table) > 0 }

// feed renders one complete line (tabs expanded, no escapes) and returns the
// rows to print: none while a table is being collected or for a code fence,
// several when a table ends or a long line wraps.
func (m *markdown) feed(s string) []string {
	trimmed := strings.TrimSpace(s)
	if !m.inCode && isTableRow(trimmed) {
		m.table = append(m.table, s)
		return nil
	}
	var out []string
	if m.inTable() {
		out = m.flushTable()
	}
	return append(out, m.line(s, trimmed)...)
}

// flush ends what is open at the end of a message: a table is laid out.
func (m *markdown) flush() []string {
	if m.inTable() {
		return m.flushTable()
	}
	return nil
}

func isTableRow(trimmed string) bool { return len(trimmed) > 1 && trimmed[0] == '|' }

func (m *markdown) line(s, trimmed string) []string {
	if f := fenceOf(trimmed); f != "" && (!m.inCode || strings.HasPrefix(trimmed, m.fence) && strings.TrimLeft(trimmed, f[:1]) == "") {
		if m.inCode {
			m.inCode, m.fence, m.lexer = false, "", nil
			return nil
		}
		m.inCode, m.fence = true, f
		lang := strings.TrimSpace(strings.TrimLeft(trimmed, f[:1]))
		if i := strings.IndexAny(lang, " {,"); i >= 0 {
			lang = lang[:i]
		}
		m.lexer = nil
		if lang != "" && m.p.on {
			m.lexer = langFor(lang)
		}
		// The language picks the highlighting; it is not a line of the
		// answer (the peers do not print it either).
		return nil
	}
	if m.inCode {
		return []string{"  " + m.highlight(s)}
	}
	if trimmed == "" {
		return []string{""}
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	body, task := cutTaskBox(s[len(indent):])
	src := []byte(body)
	doc := m.parser().Parser().Parse(gtext.NewReader(src))
	first := doc.FirstChild()
	if first == nil {
		return []string{indent + body}
	}
	switch n := first.(type) {
	case *gast.Heading:
		text := ansi.Strip(m.inline(n, src))
		style := sgrBold
		if n.Level == 1 {
			style = sgrBold + sgrUnderline
		}
		return m.wrapped(indent, indent, m.p.wrap(style, text))
	case *gast.ThematicBreak:
		w := min(max(m.width-1, 3), 40)
		return []string{m.p.dim(strings.Repeat("─", w))}
	case *gast.Blockquote:
		bar := m.p.dim("│ ")
		return m.wrapped(indent+bar, indent+bar, m.p.italic(m.blockInline(n, src)))
	case *gast.List:
		item := n.FirstChild()
		if item == nil {
			break
		}
		marker := m.p.yellow("•") + " "
		if n.IsOrdered() {
			marker = m.p.yellow(itoa(n.Start)+string(n.Marker)) + " "
		}
		switch task {
		case taskDone:
			marker = m.p.green("☑") + " "
		case taskOpen:
			marker = "☐ "
		}
		text := ""
		if item.FirstChild() != nil {
			text = m.blockInline(item, src)
		}
		return m.wrapped(indent+marker, indent+strings.Repeat(" ", ansi.StringWidth(marker)), text)
	case *gast.Paragraph, *gast.TextBlock:
		return m.wrapped(indent, indent, m.inline(n, src))
	}
	return m.wrapped(indent, indent, body)
}

// blockInline renders the inline content of a container's first block.
func (m *markdown) blockInline(n gast.Node, src []byte) string {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c.(type) {
		case *gast.Paragraph, *gast.TextBlock:
			return m.inline(c, src)
		}
	}
	return ""
}

// wrapped word-wraps styled text to the width after first (and later rows
// after rest), both of which are already styled prefixes.
func (m *markdown) wrapped(first, rest, styled string) []string {
	avail := m.width - 1 - ansi.StringWidth(first)
	if avail < 10 {
		return []string{first + styled}
	}
	rows := strings.Split(ansi.Wrap(styled, avail, ""), "\n")
	for i := range rows {
		rows[i] = strings.TrimRight(rows[i], " ")
		if i == 0 {
			rows[i] = first + rows[i]
		} else {
			rows[i] = rest + rows[i]
		}
	}
	return rows
}

// inline renders the inline children of n.
func (m *markdown) inline(n gast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		m.inlineNode(&b, c, src)
	}
	return b.String()
}

func (m *markdown) inlineNode(b *strings.Builder, n gast.Node, src []byte) {
	switch n := n.(type) {
	case *gast.Text:
		b.Write(n.Segment.Value(src))
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.WriteByte(' ')
		}
	case *gast.String:
		b.Write(n.Value)
	case *gast.CodeSpan:
		code := m.plain(n, src)
		if m.p.on {
			b.WriteString(m.p.cyan(code))
		} else {
			b.WriteString("`" + code + "`")
		}
	case *gast.Emphasis:
		inner := m.inline(n, src)
		if n.Level >= 2 {
			b.WriteString(m.p.bold(inner))
		} else {
			b.WriteString(m.p.italic(inner))
		}
	case *strike:
		b.WriteString(m.p.strike(m.inline(n, src)))
	case *gast.Link:
		text := m.inline(n, src)
		b.WriteString(m.p.under(text))
		if dest := string(n.Destination); dest != "" && dest != ansi.Strip(text) {
			b.WriteString(" " + m.p.dim("("+dest+")"))
		}
	case *gast.AutoLink:
		b.WriteString(m.p.under(string(n.URL(src))))
	case *gast.Image:
		b.WriteString(m.p.dim("[image: " + m.plain(n, src) + "]"))
	case *gast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(src))
		}
	default:
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			m.inlineNode(b, c, src)
		}
	}
}

// plain is the text of n's children without styling.
func (m *markdown) plain(n gast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *gast.Text:
			b.Write(t.Segment.Value(src))
		case *gast.String:
			b.Write(t.Value)
		default:
			b.WriteString(m.plain(c, src))
		}
	}
	return b.String()
}

// highlight colours one line of code with the block's lexer. Lines are
// highlighted one at a time, as they arrive: a construct spanning lines (a
// block comment) may lose its colour after the first, which is the price of
// a cost per line that does not grow with the block.
func (m *markdown) highlight(line string) string {
	if !m.p.on {
		return line
	}
	if m.lexer == nil {
		return m.p.cyan(line)
	}
	return m.lexer.colour(line) + sgrReset
}

// fenceOf returns the fence (``` or ~~~ run) a line opens or closes, or "".
func fenceOf(trimmed string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, f) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, f[:1]))
			return trimmed[:n]
		}
	}
	return ""
}

// ---- tables ----

// flushTable lays out the collected rows as a GFM table (a header row,
// then a delimiter row, then the body); rows that are not one are
// rendered as lines.
func (m *markdown) flushTable() []string {
	rows := m.table
	m.table = nil
	var header []string
	var align []alignment
	if len(rows) > 1 {
		header = tableCells(rows[0])
		align = delimiterRow(tableCells(rows[1]))
	}
	if align == nil || len(align) != len(header) {
		var out []string
		for _, r := range rows {
			out = append(out, m.line(r, strings.TrimSpace(r))...)
		}
		return out
	}
	cells := [][]string{m.cellsInline(header)}
	for _, r := range rows[2:] {
		row := tableCells(r)
		// As in GFM: cells past the header's are dropped, missing ones are empty.
		row = append(row, make([]string, max(len(header)-len(row), 0))...)
		cells = append(cells, m.cellsInline(row[:len(header)]))
	}
	return m.layoutTable(cells, align)
}

// cellsInline renders each cell's inline Markdown.
func (m *markdown) cellsInline(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		src := []byte(c)
		if p, ok := m.parser().Parser().Parse(gtext.NewReader(src)).FirstChild().(*gast.Paragraph); ok {
			out[i] = m.inline(p, src)
		} else {
			out[i] = c
		}
	}
	return out
}

// layoutTable draws cells (the first row is the header) with box lines,
// shrinking the widest columns until the table fits the terminal and
// wrapping their cells over several rows.
func (m *markdown) layoutTable(cells [][]string, align []alignment) []string {
	cols := 0
	for _, r := range cells {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, r := range cells {
		for i, c := range r {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	for i := range widths {
		widths[i] = max(widths[i], 1)
	}
	// Each column takes its width plus 3 (a border and two spaces), and one
	// more border closes the row.
	total := func() int {
		t := 1
		for _, w := range widths {
			t += w + 3
		}
		return t
	}
	for total() > m.width-1 {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= 3 {
			break
		}
		widths[widest]--
	}
	border := func(l, mid, r string) string {
		var b strings.Builder
		b.WriteString(l)
		for i, w := range widths {
			if i > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat("─", w+2))
		}
		b.WriteString(r)
		return m.p.dim(b.String())
	}
	bar := m.p.dim("│")
	out := []string{border("┌", "┬", "┐")}
	for ri, r := range cells {
		wrappedCells := make([][]string, cols)
		height := 1
		for i := 0; i < cols; i++ {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			if ri == 0 {
				c = m.p.bold(ansi.Strip(c))
			}
			lines := strings.Split(ansi.Wrap(c, widths[i], ""), "\n")
			wrappedCells[i] = lines
			height = max(height, len(lines))
		}
		for h := 0; h < height; h++ {
			var b strings.Builder
			b.WriteString(bar)
			for i := 0; i < cols; i++ {
				c := ""
				if h < len(wrappedCells[i]) {
					c = strings.TrimRight(wrappedCells[i][h], " ")
				}
				var a alignment
				if i < len(align) {
					a = align[i]
				}
				b.WriteString(" " + pad(c, widths[i], a) + " ")
				b.WriteString(bar)
			}
			out = append(out, b.String())
		}
		if ri == 0 && len(cells) > 1 {
			out = append(out, border("├", "┼", "┤"))
		}
	}
	return append(out, border("└", "┴", "┘"))
}

// pad fills s to w columns, aligned as the table's delimiter row says.
func pad(s string, w int, a alignment) string {
	gap := w - ansi.StringWidth(s)
	if gap <= 0 {
		return ansi.Truncate(s, w, "")
	}
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + s
	case alignCenter:
		return strings.Repeat(" ", gap/2) + s + strings.Repeat(" ", gap-gap/2)
	}
	return s + strings.Repeat(" ", gap)
}

// document renders a complete piece of Markdown (a sub-agent's answer)
// with the line renderer used for streamed text, leaving the stream's own
// state alone.
func (m *markdown) document(s string, width int) []string {
	d := markdown{p: m.p, width: width, gm: m.parser()}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, d.feed(l)...)
	}
	return append(out, d.flush()...)
}
