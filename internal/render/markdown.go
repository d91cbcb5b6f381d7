package render

import (
	"strings"
)

// SGR codes used by the renderer. Only these are ever emitted for colour.
const (
	sgrReset     = "\x1b[0m"
	sgrBold      = "\x1b[1m"
	sgrDim       = "\x1b[2m"
	sgrItalic    = "\x1b[3m"
	sgrUnderline = "\x1b[4m"
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
func (p palette) red(s string) string    { return p.wrap(sgrRed, s) }
func (p palette) green(s string) string  { return p.wrap(sgrGreen, s) }
func (p palette) yellow(s string) string { return p.wrap(sgrYellow, s) }
func (p palette) cyan(s string) string   { return p.wrap(sgrCyan, s) }

// markdown renders the model's text one complete line at a time. It keeps
// only the state a line needs from the ones before it: whether we are inside
// a fenced code block.
type markdown struct {
	p      palette
	width  int
	inCode bool
	fence  string
}

func (m *markdown) reset() { m.inCode, m.fence = false, "" }

// line renders one line (without its newline) for a terminal.
func (m *markdown) line(s string) string {
	trimmed := strings.TrimSpace(s)
	if f := fenceOf(trimmed); f != "" && (!m.inCode || strings.HasPrefix(trimmed, m.fence) && strings.TrimLeft(trimmed, f[:1]) == "") {
		if m.inCode {
			m.inCode, m.fence = false, ""
		} else {
			m.inCode, m.fence = true, f
		}
		return m.p.dim(s)
	}
	if m.inCode {
		return m.p.cyan(s)
	}
	if trimmed == "" {
		return ""
	}
	indent := s[:len(s)-len(strings.TrimLeft(s, " "))]
	body := s[len(indent):]

	if level, text, ok := heading(body); ok {
		text = m.inline(text)
		if !m.p.on {
			return indent + text
		}
		if level == 1 {
			return indent + m.p.wrap(sgrBold+sgrUnderline, stripSGR(text))
		}
		return indent + m.p.bold(stripSGR(text))
	}
	if isRule(trimmed) {
		n := m.width - 1
		if n > 40 {
			n = 40
		}
		if n < 3 {
			n = 3
		}
		return m.p.dim(strings.Repeat("─", n))
	}
	if rest, ok := strings.CutPrefix(body, "> "); ok || body == ">" {
		return indent + m.p.dim("│ ") + m.p.italic(m.inline(rest))
	}
	if len(body) >= 2 && (body[0] == '-' || body[0] == '*' || body[0] == '+') && body[1] == ' ' {
		item := strings.TrimLeft(body[2:], " ")
		switch {
		case strings.HasPrefix(item, "[ ] "):
			return indent + "☐ " + m.inline(item[4:])
		case strings.HasPrefix(item, "[x] "), strings.HasPrefix(item, "[X] "):
			return indent + m.p.green("☑") + " " + m.inline(item[4:])
		}
		return indent + m.p.yellow("•") + " " + m.inline(item)
	}
	if n := orderedMarker(body); n > 0 {
		return indent + m.p.yellow(body[:n]) + " " + m.inline(strings.TrimLeft(body[n:], " "))
	}
	return indent + m.inline(body)
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

func heading(body string) (int, string, bool) {
	n := 0
	for n < len(body) && body[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n == len(body) || body[n] != ' ' {
		return 0, "", false
	}
	return n, strings.TrimRight(strings.TrimSpace(body[n:]), "#"), true
}

func isRule(t string) bool {
	if len(t) < 3 {
		return false
	}
	c := t[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case c:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

// orderedMarker returns the length of a "12." or "12)" list marker followed
// by a space, or 0.
func orderedMarker(body string) int {
	i := 0
	for i < len(body) && i < 9 && body[i] >= '0' && body[i] <= '9' {
		i++
	}
	if i == 0 || i+1 >= len(body) || (body[i] != '.' && body[i] != ')') || body[i+1] != ' ' {
		return 0
	}
	return i + 1
}

// inline renders `code`, **bold**, __bold__, *italic* and [text](url). Markers
// that do not close are printed as they are. Without colour the markers of
// bold and italic are removed and code keeps its backticks.
func (m *markdown) inline(s string) string {
	if !strings.ContainsAny(s, "`*_[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			if j := strings.IndexByte(s[i+1:], '`'); j > 0 {
				code := s[i+1 : i+1+j]
				if m.p.on {
					b.WriteString(m.p.cyan(code))
				} else {
					b.WriteString("`" + code + "`")
				}
				i += j + 2
				continue
			}
		case (c == '*' || c == '_') && strings.HasPrefix(s[i:], string([]byte{c, c})):
			marker := s[i : i+2]
			if j := strings.Index(s[i+2:], marker); j > 0 && s[i+2] != ' ' {
				b.WriteString(m.p.bold(m.inline(s[i+2 : i+2+j])))
				i += j + 4
				continue
			}
		case c == '*' && i+1 < len(s) && s[i+1] != ' ' && s[i+1] != '*':
			if j := strings.IndexByte(s[i+1:], '*'); j > 0 && s[i+j] != ' ' {
				b.WriteString(m.p.italic(s[i+1 : i+1+j]))
				i += j + 2
				continue
			}
		case c == '[':
			if close := strings.Index(s[i:], "]("); close > 1 {
				if end := strings.IndexByte(s[i+close:], ')'); end > 2 {
					text := s[i+1 : i+close]
					url := s[i+close+2 : i+close+end]
					b.WriteString(m.p.under(text) + " " + m.p.dim("("+url+")"))
					i += close + end + 1
					continue
				}
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// stripSGR removes colour codes (used before re-styling a heading as a whole).
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	return clean(s, false)
}
