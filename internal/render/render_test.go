package render

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/todo"
)

// screen replays a TTY stream through the test terminal.
func screen(t *testing.T, out []byte, opts Options) string {
	t.Helper()
	term := newVT(opts.Width, opts.Height)
	if _, err := term.Write(out); err != nil {
		t.Fatalf("terminal rejected the output: %v\n%q", err, out)
	}
	return term.String()
}

// cursorControl matches every escape sequence except SGR colour codes.
var cursorControl = regexp.MustCompile(`\x1b(\[[0-9;?]*[A-HJKSTfhlnsu]|[^\[])`)

type mode struct {
	name string
	tty  bool
}

var modes = []mode{{"tty", true}, {"plain", false}}

func newFor(m mode, out *bytes.Buffer) (*Renderer, Options) {
	opts := Options{Out: out, TTY: m.tty, Color: m.tty, Width: 80, Height: 30}
	return New(opts), opts
}

// view is what a reader sees: the emulated screen on a TTY, the text otherwise.
func view(t *testing.T, m mode, out *bytes.Buffer, opts Options) string {
	if m.tty {
		return screen(t, out.Bytes(), opts)
	}
	return out.String()
}

// Seed: 并行 SubAgent 启动时每个任务都应立即可见.
func TestTaskLineVisibleAtOnce(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			descs := []string{"first task", "second task", "third task"}
			for i, d := range descs {
				r.TaskStart(fmt.Sprint(i), "explore", d)
				r.TaskToolStart(fmt.Sprint(i), "sleep 10") // still running: nothing has finished
				v := view(t, m, &out, opts)
				for _, seen := range descs[:i+1] {
					if strings.Count(v, "Task(explore: "+seen+")") != 1 {
						t.Fatalf("after starting %q, want exactly one Task line for %q:\n%s", d, seen, v)
					}
				}
			}
		})
	}
}

// Seed: TTY 并行输出时不应把后续 Task 行拼接到前一工具行.
func TestTTYTaskLineStartsOnItsOwnLine(t *testing.T) {
	cases := []struct {
		name   string
		before func(r *Renderer)
	}{
		{"after a running tool", func(r *Renderer) { r.ToolStart("t", "make") }},
		{"after a task tool", func(r *Renderer) {
			r.TaskStart("a", "explore", "first")
			r.TaskToolStart("a", "rg -n foo")
		}},
		{"after unfinished text", func(r *Renderer) { r.TextDelta("I will now start **two** tasks") }},
		{"after a finished tool", func(r *Renderer) {
			r.ToolStart("t", "ls")
			r.ToolEnd("t", true, "a\nb", ToolMeta{})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(mode{tty: true}, &out)
			c.before(r)
			r.TaskStart("b", "general", "second")
			s := screen(t, out.Bytes(), opts)
			lines := strings.Split(s, "\n")
			found := false
			for _, l := range lines {
				if i := strings.Index(l, "Task(general: second)"); i >= 0 {
					found = true
					if l != "⠋ Task(general: second) · 0s" {
						t.Errorf("Task line shares its row with other output: %q\nscreen:\n%s", l, s)
					}
				}
			}
			if !found {
				t.Fatalf("no Task line on screen:\n%s", s)
			}
			// The raw stream too: the Task line follows a line break or a
			// cleared region, never other text on the same row.
			raw := out.String()
			i := strings.LastIndex(raw, "Task(general: second)")
			prefix := raw[:i]
			prefix = prefix[:strings.LastIndex(prefix, "⠋")]
			prefix = strings.TrimSuffix(prefix, sgrYellow)
			if !strings.HasSuffix(prefix, "\n") && !strings.HasSuffix(prefix, "\x1b[J") {
				t.Errorf("Task line not preceded by a newline: ...%q", prefix[max(0, len(prefix)-40):])
			}
		})
	}
}

// Seed: 并行任务工具超过窗口时应显示省略提示.
func TestRecentToolsWindow(t *testing.T) {
	cases := []struct {
		tools, window int
		want          string // "" means no hint
	}{
		{3, 5, ""},
		{5, 5, ""},
		{6, 5, "... (1 earlier tool)"},
		{9, 5, "... (4 earlier tools)"},
		{4, 2, "... (2 earlier tools)"},
		{2, 1, "... (1 earlier tool)"},
	}
	for _, m := range modes {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%d_tools_window_%d", m.name, c.tools, c.window), func(t *testing.T) {
				var out bytes.Buffer
				opts := Options{Out: &out, TTY: m.tty, Width: 80, Height: 40, MaxRecentTools: c.window}
				r := New(opts)
				r.TaskStart("a", "explore", "look")
				for i := 0; i < c.tools; i++ {
					cmd := fmt.Sprintf("cat file%d", i)
					r.TaskToolStart("a", cmd)
					r.TaskToolEnd("a", cmd, true)
				}
				if m.tty { // while the task runs: one row, with the count
					live := screen(t, out.Bytes(), opts)
					if want := "Task(explore: look) · " + plural(c.tools, "tool", "tools") + " · 0s"; strings.Count(live, "Task(") != 1 || !strings.Contains(live, want) {
						t.Errorf("live area is not one row %q:\n%s", want, live)
					}
				}
				r.TaskEnd("a", true, time.Second, c.tools, "")
				checkWindow(t, view(t, m, &out, opts), c.tools, c.window, c.want)
			})
		}
	}
}

func checkWindow(t *testing.T, s string, tools, window int, want string) {
	t.Helper()
	if want == "" {
		if strings.Contains(s, "earlier tool") {
			t.Errorf("unexpected hint:\n%s", s)
		}
	} else if strings.Count(s, want) != 1 {
		t.Errorf("want one %q:\n%s", want, s)
	}
	shown := min(tools, window)
	for i := 0; i < tools; i++ {
		visible := strings.Contains(s, fmt.Sprintf("cat file%d\n", i))
		if visible != (i >= tools-shown) {
			t.Errorf("tool %d visible=%v, want the last %d of %d:\n%s", i, visible, shown, tools, s)
		}
	}
}

// Seed: 非 TTY 下应使用静态输出且不使用光标控制 (and the TodoWrite one).
func TestPlainOutputHasNoCursorControl(t *testing.T) {
	for _, color := range []bool{false, true} {
		t.Run(fmt.Sprintf("color=%v", color), func(t *testing.T) {
			var out bytes.Buffer
			c := &ctl{now: start}
			r := New(Options{Out: &out, Color: color, MaxRecentTools: 2, Now: c.clock})
			c.r = r
			for _, sc := range scenarios {
				sc.run(r, c)
			}
			s := out.String()
			if m := cursorControl.FindString(s); m != "" {
				t.Fatalf("non-TTY output holds a cursor or clearing sequence %q:\n%s", m, s)
			}
			if !color && strings.Contains(s, "\x1b") {
				t.Fatalf("colour off, yet output holds an escape sequence:\n%q", s)
			}
			if strings.Contains(s, "\r") {
				t.Fatalf("non-TTY output holds a carriage return:\n%q", s)
			}
			// Readable: the parts a reader needs are there, as whole lines.
			for _, want := range []string{
				"▸ Task(explore: find the config loader)\n",
				"✓ Task(explore: find the config loader) · 2s · 1 tool\n",
				"✗ Task(skill:search: pdf tools) · 1.5s · 1 tool\n",
				"    sub-agent failed: model error\n",
				"3 todos: 1 done, 1 in progress, 1 pending\n",
				"    [x] Read the config loader\n",
			} {
				if !strings.Contains(stripSGR(s), want) {
					t.Errorf("missing %q in:\n%s", want, s)
				}
			}
		})
	}
}

// The TTY stream uses only the sequences the test terminal knows; the
// emulator fails on anything else, so this pins the TTY vocabulary.
func TestTTYUsesKnownSequencesOnly(t *testing.T) {
	var out bytes.Buffer
	c := &ctl{now: start, term: newVT(50, 12)}
	opts := Options{Out: teeVT{buf: &out, term: c.term, c: c}, TTY: true, Color: true, Width: 50, Height: 12, MaxRecentTools: 3, Now: c.clock}
	c.r = New(opts)
	for _, sc := range scenarios {
		sc.run(c.r, c)
	}
	if c.err != nil {
		t.Fatalf("terminal rejected the output: %v", c.err)
	}
	s := c.term.String()
	if strings.ContainsAny(s, spinnerFrames) {
		t.Errorf("a running mark stayed on screen after everything finished:\n%s", s)
	}
}

// Seed: 任务描述过长应按摘要长度截断.
func TestTaskDescriptionTruncated(t *testing.T) {
	long := strings.Repeat("analyse the module graph ", 10)
	chinese := strings.Repeat("分析模块依赖关系", 10)
	cases := []struct {
		name, desc string
		limit      int
		want       string
	}{
		{"short stays whole", "find the config loader", 60, "Task(explore: find the config loader)"},
		{"exactly the limit", strings.Repeat("x", 20), 20, "Task(explore: " + strings.Repeat("x", 20) + ")"},
		{"long is cut", long, 30, "Task(explore: analyse the module graph an...)"},
		{"runes, not bytes", chinese, 10, "Task(explore: 分析模块依赖关...)"},
		{"newlines collapse", "first line\nsecond   line", 60, "Task(explore: first line second line)"},
	}
	for _, m := range modes {
		for _, c := range cases {
			t.Run(m.name+"/"+c.name, func(t *testing.T) {
				var out bytes.Buffer
				opts := Options{Out: &out, TTY: m.tty, Width: 120, Height: 30, SummaryLimit: c.limit}
				r := New(opts)
				r.TaskStart("a", "explore", c.desc)
				if v := view(t, m, &out, opts); !strings.Contains(v, c.want) {
					t.Errorf("want %q in:\n%s", c.want, v)
				}
			})
		}
	}
	if got := summarize(long, 30); len([]rune(got)) != 30 || !strings.HasSuffix(got, "...") {
		t.Errorf("summarize(long, 30) = %q: want 30 runes ending in ...", got)
	}
}

// Seed: TodoWrite 应通过常规工具流显示 / 非 TTY 下 TodoWrite 结果应保持可读.
func TestTodoWriteInToolFlow(t *testing.T) {
	items := []todo.Item{
		{Content: "Read", Status: todo.Completed},
		{Content: "Write", Status: todo.InProgress},
		{Content: "Test", Status: todo.Pending},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			r.ToolStart("1", `TodoWrite '[{"content":"Read","status":"completed"}]'`)
			if !m.tty && !strings.Contains(out.String(), "▸ TodoWrite '[") {
				t.Errorf("the call is not shown when it starts:\n%s", out.String())
			}
			r.ToolEnd("1", true, `{"ok":true}`, ToolMeta{Todos: items})
			v := view(t, m, &out, opts)
			want := []string{
				"✓ TodoWrite '[{\"content\":\"Read\",\"status\":\"completed\"}]'",
				"    3 todos: 1 done, 1 in progress, 1 pending",
				"    [x] Read",
				"    [~] Write",
				"    [ ] Test",
			}
			if !strings.Contains(v, strings.Join(want, "\n")+"\n") {
				t.Errorf("want the call and its summary:\n%s\ngot:\n%s", strings.Join(want, "\n"), v)
			}
			if strings.Contains(v, `{"ok":true}`) {
				t.Errorf("raw TodoWrite output shown instead of the summary:\n%s", v)
			}
			if !m.tty && cursorControl.MatchString(out.String()) {
				t.Errorf("cursor control in non-TTY output: %q", out.String())
			}
		})
	}
	// A failed TodoWrite shows its error, not a summary.
	var out bytes.Buffer
	r := New(Options{Out: &out})
	r.ToolStart("1", "TodoWrite '['")
	r.ToolEnd("1", false, "TodoWrite: invalid JSON", ToolMeta{})
	if s := out.String(); !strings.Contains(s, "✗ TodoWrite '['\n    TodoWrite: invalid JSON\n") || strings.Contains(s, "todos:") {
		t.Errorf("failed TodoWrite:\n%s", s)
	}
}

// Seed: 多次 TodoWrite 更新应按时间顺序滚动展示 (no fixed bottom area).
func TestTodoWriteUpdatesScrollInOrder(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			summaries := []string{
				"3 todos: 0 done, 1 in progress, 2 pending",
				"3 todos: 1 done, 1 in progress, 1 pending",
				"3 todos: 3 done, 0 in progress, 0 pending",
			}
			for i, items := range sampleTodos {
				id := fmt.Sprint(i)
				r.ToolStart(id, "TodoWrite '[...]'")
				r.ToolEnd(id, true, "", ToolMeta{Todos: items})
				r.TextDelta(fmt.Sprintf("after update %d\n", i))
			}
			r.ToolStart("x", "echo last")
			r.ToolEnd("x", true, "last", ToolMeta{})
			v := view(t, m, &out, opts)
			pos := 0
			for i, s := range summaries {
				j := strings.Index(v[pos:], s)
				if j < 0 {
					t.Fatalf("summary %d %q missing or out of order:\n%s", i, s, v)
				}
				pos += j
				k := strings.Index(v[pos:], fmt.Sprintf("after update %d", i))
				if k < 0 {
					t.Fatalf("text after update %d missing or before its summary:\n%s", i, v)
				}
				pos += k
				if strings.Count(v, s) != 1 {
					t.Errorf("summary %q shown %d times; updates must scroll, not be redrawn:\n%s", s, strings.Count(v, s), v)
				}
			}
			// Nothing pinned below: the screen ends with the last tool's output.
			if !strings.HasSuffix(v, "✓ echo last\n    last\n") {
				t.Errorf("output does not end with the latest tool (a fixed todo area?):\n%s", v)
			}
		})
	}
}

func TestToolOutputFolding(t *testing.T) {
	lines := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "line%d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name   string
		ok     bool
		output string
		want   []string
		absent []string
	}{
		{"no output", true, "", []string{"✓ cmd\n"}, []string{"    \n"}},
		{"short output whole", true, lines(5), []string{"line1", "line5"}, []string{"more line"}},
		{"success shows the head", true, lines(10), []string{"line1\n", "line4\n", "… 6 more lines"}, []string{"line5\n"}},
		{"failure shows the tail", false, lines(10), []string{"… 6 earlier lines", "line7\n", "line10\n"}, []string{"line6\n"}},
		{"one hidden line is singular", true, lines(6), []string{"… 2 more lines"}, nil},
		{"escape codes stripped", true, "\x1b[31mred\x1b[0m\x1b]0;title\x07\n", []string{"    red\n"}, []string{"\x1b", "title"}},
		{"carriage return keeps the last state", true, "10%\r50%\r100%\n", []string{"    100%\n"}, []string{"50%"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			r := New(Options{Out: &out})
			r.ToolStart("1", "cmd")
			r.ToolEnd("1", c.ok, c.output, ToolMeta{})
			s := out.String()
			for _, w := range c.want {
				if !strings.Contains(s, w) {
					t.Errorf("want %q in:\n%s", w, s)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(s, a) {
					t.Errorf("unexpected %q in:\n%q", a, s)
				}
			}
		})
	}
}

func TestMarkdownLine(t *testing.T) {
	cases := []struct{ in, plain, color string }{
		{"# Title", "Title", "\x1b[1m\x1b[4mTitle\x1b[0m"},
		{"## Sub **x**", "Sub x", "\x1b[1mSub x\x1b[0m"},
		{"a **bold** b", "a bold b", "a \x1b[1mbold\x1b[0m b"},
		{"use `go test`", "use `go test`", "use \x1b[36mgo test\x1b[0m"},
		{"snake_case_name stays", "snake_case_name stays", "snake_case_name stays"},
		{"2 * 3 * 4", "2 * 3 * 4", "2 * 3 * 4"},
		{"- item", "• item", "\x1b[33m•\x1b[0m item"},
		{"  * nested", "  • nested", "  \x1b[33m•\x1b[0m nested"},
		{"10. tenth", "10. tenth", "\x1b[33m10.\x1b[0m tenth"},
		{"- [x] done", "☑ done", "\x1b[32m☑\x1b[0m done"},
		{"* [ ] to do", "☐ to do", "☐ to do"},
		{"2. [X] second", "☑ second", "\x1b[32m☑\x1b[0m second"},
		{"- [y] not a box", "• [y] not a box", "\x1b[33m•\x1b[0m [y] not a box"},
		{"[x] not an item", "[x] not an item", "[x] not an item"},
		{"~~old~~ new", "old new", "\x1b[9mold\x1b[0m new"},
		{"a ~b~ c", "a b c", "a \x1b[9mb\x1b[0m c"},
		{"a ~~~x~~~ stays", "a ~~~x~~~ stays", "a ~~~x~~~ stays"},
		{"~/src and ~/bin", "~/src and ~/bin", "~/src and ~/bin"},
		{"[site](http://x)", "site (http://x)", "\x1b[4msite\x1b[0m \x1b[2m(http://x)\x1b[0m"},
		{"unclosed **bold", "unclosed **bold", "unclosed **bold"},
		{"#hashtag", "#hashtag", "#hashtag"},
	}
	for _, c := range cases {
		plain := newMarkdown(palette{}, 80)
		if got := strings.Join(plain.feed(c.in), "\n"); got != c.plain {
			t.Errorf("no colour: feed(%q) = %q, want %q", c.in, got, c.plain)
		}
		color := newMarkdown(palette{on: true}, 80)
		if got := strings.Join(color.feed(c.in), "\n"); got != c.color {
			t.Errorf("colour: feed(%q) = %q, want %q", c.in, got, c.color)
		}
	}
	// Inside a fence nothing is interpreted; the fences themselves are not
	// shown (a language is, as a label), code is indented.
	m := newMarkdown(palette{}, 80)
	var got []string
	for _, l := range []string{"```", "# not a heading", "**x**", "```"} {
		got = append(got, m.feed(l)...)
	}
	if want := []string{"  # not a heading", "  **x**"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("fenced block rendered as %q, want %q", got, want)
	}
	if got := m.feed("**x**"); len(got) != 1 || got[0] != "x" {
		t.Errorf("fence did not close: %q", got)
	}
}

func TestMarkdownTable(t *testing.T) {
	cases := []struct {
		name string
		rows []string
		want []string
	}{
		{"aligned, with inline styles and a missing cell",
			[]string{"| Name | Size |", "|:-----|-----:|", "| `a.go` | 12 KB |", "| **b.go** |"},
			[]string{
				"┌────────┬───────┐",
				"│ Name   │  Size │",
				"├────────┼───────┤",
				"│ `a.go` │ 12 KB │",
				"│ b.go   │       │",
				"└────────┴───────┘"}},
		{"escaped pipe, centred column, extra cells dropped",
			[]string{"| op | x |", "|:--:|---|", "| a \\| b | 1 | extra |"},
			[]string{
				"┌───────┬───┐",
				"│  op   │ x │",
				"├───────┼───┤",
				"│ a | b │ 1 │",
				"└───────┴───┘"}},
		{"no delimiter row: plain lines",
			[]string{"| a | b |", "| 1 | 2 |"},
			[]string{"| a | b |", "| 1 | 2 |"}},
		{"delimiter row of another width: plain lines",
			[]string{"| a | b |", "|---|", "| 1 | 2 |"},
			[]string{"| a | b |", "|---|", "| 1 | 2 |"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newMarkdown(palette{}, 80)
			var got []string
			for _, r := range c.rows {
				got = append(got, m.feed(r)...)
			}
			got = append(got, m.flush()...)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestTextStreaming(t *testing.T) {
	t.Run("plain passes markdown through unchanged", func(t *testing.T) {
		var out bytes.Buffer
		r := New(Options{Out: &out})
		in := "# T\n**b** and `c`\n- x\nend"
		for _, ch := range in {
			r.TextDelta(string(ch))
		}
		r.EndText()
		if out.String() != in+"\n" {
			t.Errorf("got %q, want %q", out.String(), in+"\n")
		}
	})
	t.Run("tty shows the unfinished line at once", func(t *testing.T) {
		var out bytes.Buffer
		opts := Options{Out: &out, TTY: true, Width: 40, Height: 10}
		r := New(opts)
		r.TextDelta("Hello wor")
		if s := screen(t, out.Bytes(), opts); s != "Hello wor\n" {
			t.Errorf("partial line not shown: %q", s)
		}
		r.TextDelta("ld, **bold**\nnext")
		r.EndText()
		if s := screen(t, out.Bytes(), opts); s != "Hello world, bold\nnext\n" {
			t.Errorf("screen = %q", s)
		}
	})
	t.Run("tty restyles a wrapped unfinished line", func(t *testing.T) {
		var out bytes.Buffer
		opts := Options{Out: &out, TTY: true, Width: 20, Height: 10}
		r := New(opts)
		r.TextDelta("ok\n")
		r.TextDelta("a **long** line that wraps over 中文字符 rows")
		r.TextDelta(" and more\n")
		// Once complete, the line is word-wrapped at the width (the
		// terminal had cut it mid-word while it streamed).
		want := "ok\na long line that\nwraps over 中文字符\nrows and more\n"
		if s := screen(t, out.Bytes(), opts); s != want {
			t.Errorf("screen =\n%s\nwant\n%s", s, want)
		}
	})
	t.Run("text before a tool keeps its order", func(t *testing.T) {
		for _, m := range modes {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			r.TextDelta("Checking")
			r.ToolStart("1", "ls")
			r.ToolEnd("1", true, "", ToolMeta{})
			r.TextDelta(" done\n")
			v := stripSGR(view(t, m, &out, opts))
			if !strings.HasPrefix(v, "Checking\n") || !strings.Contains(v, "✓ ls\n done\n") {
				t.Errorf("%s: order broken:\n%s", m.name, v)
			}
		}
	})
}

func TestStatusRegionFitsTheScreen(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Width: 40, Height: 10, MaxRecentTools: 5}
	r := New(opts)
	for i := 0; i < 12; i++ {
		id := fmt.Sprint(i)
		r.TaskStart(id, "explore", "task "+id)
		for j := 0; j < 6; j++ {
			r.TaskToolStart(id, fmt.Sprintf("step %d", j))
		}
	}
	// The emulator fails if the cursor is moved above the screen's top.
	s := screen(t, out.Bytes(), opts)
	if n := strings.Count(s, "\n"); n > opts.Height-2 {
		t.Errorf("region has %d rows on a %d-row screen:\n%s", n, opts.Height, s)
	}
	if !strings.Contains(s, "more running") {
		t.Errorf("hidden tasks not counted:\n%s", s)
	}
	for i := 0; i < 12; i++ {
		r.TaskEnd(fmt.Sprint(i), true, time.Second, 6, "")
	}
	s = screen(t, out.Bytes(), opts)
	for i := 0; i < 12; i++ {
		if !strings.Contains(s, fmt.Sprintf("✓ Task(explore: task %d) · 1s · 6 tools\n", i)) {
			t.Errorf("task %d result missing:\n%s", i, s)
		}
	}
}

// Several goroutines render tasks at once, as parallel sub-agents do.
func TestConcurrentTasks(t *testing.T) {
	const tasks, tools = 8, 20
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := Options{Out: &out, TTY: m.tty, Color: m.tty, Width: 100, Height: 200, MaxRecentTools: 3}
			r := New(opts)
			var wg sync.WaitGroup
			for i := 0; i < tasks; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					id := fmt.Sprint(i)
					r.TaskStart(id, "explore", "worker "+id)
					for j := 0; j < tools; j++ {
						cmd := fmt.Sprintf("step %s.%d", id, j)
						r.TaskToolStart(id, cmd)
						r.TaskToolEnd(id, cmd, true)
					}
					r.TaskEnd(id, true, time.Second, tools, "")
				}()
			}
			wg.Add(1)
			go func() { // the main agent's text, meanwhile
				defer wg.Done()
				for j := 0; j < 50; j++ {
					r.TextDelta(fmt.Sprintf("text %d\n", j))
				}
			}()
			wg.Wait()
			r.EndText()
			v := stripSGR(view(t, m, &out, opts))
			for i := 0; i < tasks; i++ {
				block := fmt.Sprintf("✓ Task(explore: worker %d) · 1s · %d tools\n    ... (%d earlier tools)\n", i, tools, tools-3)
				for j := tools - 3; j < tools; j++ {
					block += fmt.Sprintf("    ✓ step %d.%d\n", i, j)
				}
				if strings.Count(v, block) != 1 {
					t.Errorf("task %d: final block missing, torn or repeated; want\n%s", i, block)
				}
			}
			for j := 0; j < 50; j++ {
				if strings.Count(v, fmt.Sprintf("text %d\n", j)) != 1 {
					t.Errorf("text line %d missing or repeated", j)
				}
			}
			if strings.Contains(v, "◌") {
				t.Errorf("running marks left after all tasks ended")
			}
			if t.Failed() {
				t.Logf("output:\n%s", v)
			}
		})
	}
}

func TestAbortClearsRunningState(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Width: 60, Height: 20}
	r := New(opts)
	r.ToolStart("1", "sleep 100")
	r.TaskStart("a", "explore", "x")
	r.Abort("interrupted")
	r.Notice("back at the prompt")
	s := screen(t, out.Bytes(), opts)
	want := "✗ sleep 100 · interrupted\n✗ Task(explore: x) · interrupted\nback at the prompt\n"
	if s != want {
		t.Errorf("screen =\n%s\nwant\n%s", s, want)
	}
}

func TestClean(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x1b[2J\x1b[Hb", "ab"},
		{"x\x1b]8;;http://e\x1b\\link\x1b]8;;\x1b\\y", "xlinky"},
		{"crlf\r\nnext", "crlf\nnext"},
		{"bell\x07 nul\x00", "bell nul"},
		{"tab\there", "tab    here"},
		{"中文", "中文"},
		{"trailing\r", "trailing"},
		{"\x1b", ""},
	}
	for _, c := range cases {
		if got := clean(c.in, true); got != c.want {
			t.Errorf("clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer th…"},
		{"中文中文中文", 7, "中文中…"},
		{"\x1b[1mbold text here\x1b[0m", 6, "\x1b[1mbold …\x1b[0m"},
	}
	for _, c := range cases {
		if got := truncate(c.in, c.max); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func BenchmarkTextDeltaTTY(b *testing.B) {
	chunk := "Some **streamed** text with `code` and a list:\n- item one\n- item two\n"
	r := New(Options{Out: &bytes.Buffer{}, TTY: true, Color: true})
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		for i := 0; i < len(chunk); i += 4 {
			r.TextDelta(chunk[i:min(len(chunk), i+4)])
		}
	}
}

func BenchmarkParallelTasksTTY(b *testing.B) {
	r := New(Options{Out: &bytes.Buffer{}, TTY: true, Color: true, Height: 50})
	for b.Loop() {
		for i := 0; i < 5; i++ {
			r.TaskStart(fmt.Sprint(i), "explore", "benchmark task")
		}
		for j := 0; j < 10; j++ {
			for i := 0; i < 5; i++ {
				r.TaskToolStart(fmt.Sprint(i), "cat x")
				r.TaskToolEnd(fmt.Sprint(i), "cat x", true)
			}
		}
		for i := 0; i < 5; i++ {
			r.TaskEnd(fmt.Sprint(i), true, time.Second, 10, "")
		}
	}
}

func TestHookBlockIsMarkedAndSetApart(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			var out bytes.Buffer
			r, opts := newFor(m, &out)
			r.TextDelta("the answer\n")
			r.EndText()
			r.HookBlock("hooks", "[Skill] Created: csv-report\n\x1b[31mraw\x1b[0m")
			got := view(t, m, &out, opts)
			want := "the answer\n◆ hooks\n│ [Skill] Created: csv-report\n│ raw"
			if !strings.Contains(got, want) {
				t.Errorf("screen:\n%s\nwant it to contain:\n%s", got, want)
			}
			if m.tty && !strings.Contains(out.String(), "\x1b[36m◆ hooks") {
				t.Errorf("the block's title is not styled: %q", out.String())
			}
		})
	}
}

// A long error or notice is word-wrapped (an error under its mark) on a
// TTY, not cut mid-word by the terminal; piped, it stays one line for tools
// that read it.
func TestErrorWordWrapped(t *testing.T) {
	msg := "anthropic: the stream from http://127.0.0.1:34955 stalled: no data for 2s (SYNAPSE_STREAM_IDLE_TIMEOUT); check that the server is up"
	for _, m := range modes {
		for _, notice := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s notice=%v", m.name, notice), func(t *testing.T) {
				var out bytes.Buffer
				opts := Options{Out: &out, TTY: m.tty, Color: m.tty, Width: 40, Height: 20}
				if notice {
					New(opts).Notice(msg)
				} else {
					New(opts).Error(msg)
				}
				got := view(t, m, &out, opts)
				rows := strings.Split(strings.TrimRight(got, "\n "), "\n")
				if !m.tty {
					if len(rows) != 1 || !strings.Contains(rows[0], msg) {
						t.Errorf("piped error = %q, want one line with the message", got)
					}
					return
				}
				var words []string
				for i, row := range rows {
					row = strings.TrimRight(row, " ")
					if i > 0 && !notice && !strings.HasPrefix(row, "  ") {
						t.Errorf("row %d %q is not indented under the mark", i, row)
					}
					words = append(words, strings.Fields(strings.TrimPrefix(row, "✗ "))...)
				}
				if strings.Join(words, " ") != msg {
					t.Errorf("words were split across rows:\n%s", got)
				}
			})
		}
	}
}

// A retry notice longer than the screen is wrapped, so its wait and attempt
// (at the end) stay visible.
func TestRetryNoticeWrapped(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Color: true, Width: 60, Height: 20}
	New(opts).RetryNotice(Retry{Reason: "anthropic: the API is overloaded: Overloaded (HTTP 529)", Attempt: 1, Max: 4, Wait: 2 * time.Second})
	got := screen(t, out.Bytes(), opts)
	flat := strings.Join(strings.Fields(got), " ")
	if !strings.Contains(flat, "retrying in 2s (retry 1/4)") || strings.Contains(got, "…") {
		t.Errorf("the wait and attempt are not all shown:\n%s", got)
	}
}

// Ctrl+C in `synapse run` on a terminal (not raw) makes the terminal echo
// "^C" after the live area, moving the cursor off column 0: erasing the area
// must still start at column 0, leaving nothing of the old rows behind.
func TestEraseAfterEchoedCtrlC(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Width: 60, Height: 20}
	r := New(opts)
	r.StartTurn()
	r.ToolStart("1", "sleep 100")
	r.Tick()
	out.WriteString("^C") // the terminal's echo
	r.Abort("interrupted")
	r.EndTurn()
	s := screen(t, out.Bytes(), opts)
	if !strings.HasPrefix(s, "✗ sleep 100 · interrupted\n") {
		t.Errorf("screen after the abort =\n%q", s)
	}
}

// Thinking is one dim line by default ("✻ Thought for … · N lines", Ctrl+O
// shows it whole), as the peers show it; with ShowThinking it is whole.
func TestThinkingFold(t *testing.T) {
	tests := []struct {
		name     string
		show     bool
		thinking string
		want     []string
		not      []string
	}{
		{"default", false, "one\ntwo\nthree", []string{"✻ Thought for 0s · 3 lines · ctrl+o to expand\nanswer"}, []string{"one", "two"}},
		{"default, one line", false, "one", []string{"✻ Thought for 0s · 1 line"}, []string{"one\n"}},
		{"shown whole", true, "one\ntwo\nthree\nfour", []string{"one", "two", "three", "four"}, []string{"more line"}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		r := New(Options{Out: &out, ShowThinking: tt.show, ExpandKey: "ctrl+o"})
		r.Thinking(tt.thinking)
		r.TextDelta("answer")
		r.EndText()
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.name, w, out.String())
			}
		}
		for _, n := range tt.not {
			if strings.Contains(out.String(), n) {
				t.Errorf("%s: output has %q:\n%s", tt.name, n, out.String())
			}
		}
	}
}

// A running command's unfinished line (a progress line redrawn with \r)
// shows in its live tail as it stands now.
func TestLiveTailShowsTheUnfinishedLine(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Width: 60, Height: 20}
	r := New(opts)
	r.StartTurn()
	r.ToolStart("1", "make")
	r.ToolOutput("1", "building\nprogress 1%\r")
	r.Tick()
	if s := screen(t, out.Bytes(), opts); !strings.Contains(s, "    building\n    progress 1%\n") {
		t.Errorf("screen =\n%s", s)
	}
	r.ToolOutput("1", "progress 50%\r")
	r.Tick()
	s := screen(t, out.Bytes(), opts)
	if !strings.Contains(s, "    progress 50%\n") || strings.Contains(s, "progress 1%") {
		t.Errorf("screen after the redraw =\n%s", s)
	}
}

// While the first request streams its prompt size is not known yet: the
// indicator counts what streams down and claims nothing about "↑".
func TestIndicatorTokensOnceKnown(t *testing.T) {
	var out bytes.Buffer
	opts := Options{Out: &out, TTY: true, Width: 80, Height: 20}
	r := New(opts)
	r.StartTurn()
	r.Thinking(strings.Repeat("thinking hard ", 20))
	r.Tick()
	s := screen(t, out.Bytes(), opts)
	if strings.Contains(s, "↑ 0") || !strings.Contains(s, "↓ ") {
		t.Errorf("indicator while the first answer streams:\n%s", s)
	}
	r.TurnUsage(2400, 70)
	r.Tick()
	if s := screen(t, out.Bytes(), opts); !strings.Contains(s, "↑ 2.4k ↓ ") {
		t.Errorf("indicator after the usage:\n%s", s)
	}
}

func TestWordWrap(t *testing.T) {
	tests := []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "short line", 20, "short line"},
		{"at spaces", "one two three four five", 10, "one two\nthree four\nfive"},
		{"a path stays whole", "kept in /tmp/qa-home/sessions/session-20261123-182449/archive.jsonl ok", 20,
			"kept in\n/tmp/qa-home/sessions/session-20261123-182449/archive.jsonl\nok"},
		{"hyphens do not break", "a well-known self-contained thing", 14, "a well-known\nself-contained\nthing"},
		{"indent kept", "  indented words wrap here", 12, "  indented\n  words wrap\n  here"},
		{"lines apart", "aaaa bbbb cccc\nddd", 10, "aaaa bbbb\ncccc\nddd"},
		{"colour not counted", "\x1b[2mone two three\x1b[0m", 10, "\x1b[2mone two\nthree\x1b[0m"},
		{"too narrow to bother", "one two three", 5, "one two three"},
		{"two columns hang under the second", "  /clear       start a new conversation now", 32,
			"  /clear       start a new\n               conversation now"},
		{"a first column of several words", "  /model [name]   show the model or switch it", 40,
			"  /model [name]   show the model or\n                  switch it"},
		{"single spaces: its own indentation", "a b c dddddddddd", 12, "a b c\ndddddddddd"},
		{"a second column too far right", "  abcdefghijkl   mno pqrst", 20, "  abcdefghijkl   mno\n  pqrst"},
	}
	for _, tt := range tests {
		if got := WordWrap(tt.in, tt.width); got != tt.want {
			t.Errorf("%s: WordWrap(%q, %d) = %q, want %q", tt.name, tt.in, tt.width, got, tt.want)
		}
	}
}

// A long line streaming without a break does not hide the working
// indicator: once the line has filled a row the region is drawn below it,
// and each delta goes on where the line ends. The line is written again
// whole when it completes, so its text is contiguous in the byte stream.
func TestLongLineKeepsIndicator(t *testing.T) {
	var out bytes.Buffer
	c := &ctl{now: start, term: newVT(40, 12)}
	opts := Options{Out: teeVT{buf: &out, term: c.term, c: c}, TTY: true, Width: 40, Height: 12, Now: c.clock}
	c.r = New(opts)
	c.r.StartTurn()
	word := "abcdefghi "     // ten cells
	for i := 0; i < 4; i++ { // 40 cells: the first row, the cursor at its margin
		c.r.TextDelta(word)
	}
	if s := c.term.String(); strings.Contains(s, "esc to interrupt") || strings.Contains(s, "Working") {
		t.Errorf("the region shows inside the first row of text:\n%s", s)
	}
	for i := 0; i < 3; i++ { // into the second row
		c.r.TextDelta(word)
		c.advance(100 * time.Millisecond)
		s := c.term.String()
		lines := strings.Split(s, "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], strings.Repeat(word, 4)[:39]) {
			t.Fatalf("the text is not where it streamed:\n%s", s)
		}
		if !strings.ContainsAny(strings.Join(lines[2:], "\n"), spinnerFrames) {
			t.Errorf("after %d cells of one line no indicator below it:\n%s", 50+10*i, s)
		}
	}
	c.r.Tick() // the indicator moves on while the line waits
	c.r.TextDelta("end.\n")
	c.r.EndTurn()
	if c.err != nil {
		t.Fatalf("terminal rejected the output: %v", c.err)
	}
	// The finished line is word-wrapped and written out whole after the
	// rows it streamed on (no region left between its parts).
	want := "abcdefghi abcdefghi abcdefghi abcdefghi\nabcdefghi abcdefghi abcdefghi end."
	if s := c.term.String(); !strings.HasPrefix(s, want) || strings.ContainsAny(s, spinnerFrames) {
		t.Errorf("final screen:\n%s\nwant it to start with:\n%s", s, want)
	}
	if !strings.Contains(strings.ReplaceAll(out.String(), "\r", ""), want) {
		t.Errorf("the completed line is not written whole:\n%q", out.String())
	}
}
