package render

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/todo"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// scenario is a scripted sequence of renderer calls. c moves the clock and,
// on a TTY, records the screen at chosen moments (the live area is erased
// by the end, so what it showed is checked in these snapshots).
type scenario struct {
	name string
	run  func(r *Renderer, c *ctl)
}

// ctl is a scenario's clock and screen.
type ctl struct {
	now   time.Time
	term  *vt // nil when not on a TTY
	r     *Renderer
	snaps strings.Builder
	err   error
}

func (c *ctl) clock() time.Time { return c.now }

func (c *ctl) advance(d time.Duration) { c.now = c.now.Add(d) }

// snap records the screen under label (TTY only).
func (c *ctl) snap(label string) {
	if c.term == nil {
		return
	}
	c.snaps.WriteString("=== " + label + " ===\n")
	c.snaps.WriteString(c.term.String())
}

// resize changes the terminal's size as a reflowing terminal does, then
// tells the renderer (as SIGWINCH would).
func (c *ctl) resize(w, h int) {
	if c.term != nil {
		c.term.resize(w, h)
	}
	c.r.SetSize(w, h)
}

// teeVT feeds the renderer's output to the test terminal as it is written.
type teeVT struct {
	buf  *bytes.Buffer
	term *vt
	c    *ctl
}

func (t teeVT) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if _, err := t.term.Write(p); err != nil && t.c.err == nil {
		t.c.err = err
	}
	return len(p), nil
}

var sampleTodos = [][]todo.Item{
	{
		{Content: "Read the config loader", Status: todo.InProgress},
		{Content: "Write the parser", Status: todo.Pending},
		{Content: "Run the tests", Status: todo.Pending},
	},
	{
		{Content: "Read the config loader", Status: todo.Completed},
		{Content: "Write the parser", Status: todo.InProgress},
		{Content: "Run the tests", Status: todo.Pending},
	},
	{
		{Content: "Read the config loader", Status: todo.Completed},
		{Content: "Write the parser", Status: todo.Completed},
		{Content: "Run the tests", Status: todo.Completed},
	},
}

var scenarios = []scenario{
	{"markdown", func(r *Renderer, c *ctl) {
		for _, chunk := range []string{
			"# Plan\n\nI will **read** the `config` pack", "age first.\n",
			"- one item\n- two *items*\n1. first\n> a quote\n\n",
			"```go\nfunc main() {}\n```\n---\nSee [the docs](https://example.com) and fin", "ish",
		} {
			r.TextDelta(chunk)
		}
		r.EndText()
	}},
	{"tools", func(r *Renderer, c *ctl) {
		r.TextDelta("Let me look.")
		r.ToolStart("t1", "ls -la")
		r.ToolEnd("t1", true, "total 8\na\nb\nc\nd\ne\nf\n", ToolMeta{})
		r.ToolStart("t2", "cat <<'EOF' > x.txt\nhello\nEOF")
		r.ToolEnd("t2", true, "", ToolMeta{})
		r.ToolStart("t3", "go test ./...")
		r.ToolEnd("t3", false, "ok a\nok b\n--- FAIL: TestX\n\tx_test.go:3: boom\nFAIL\nexit status 1\n", ToolMeta{Message: "command failed with exit code 1"})
		r.Notice("3 tools run")
		r.Error("model request failed\nretry with /model")
	}},
	{"todowrite", func(r *Renderer, c *ctl) {
		for i, items := range sampleTodos {
			id := "todo" + itoa(i)
			r.ToolStart(id, `TodoWrite '[{"content":"Read the config loader","status":"in_progress"}]'`)
			r.ToolEnd(id, true, "Todos updated", ToolMeta{Todos: items})
			r.TextDelta("Step " + itoa(i+1) + " done.\n")
		}
		r.EndText()
	}},
	{"parallel_tasks", func(r *Renderer, c *ctl) {
		r.TextDelta("Exploring in parallel.\n")
		r.EndText()
		r.TaskStart("a", "explore", "find the config loader")
		r.TaskToolStart("a", "rg -n Load internal")
		r.TaskStart("b", "general", "在仓库里找出所有读取环境变量的地方并列出它们各自的用途以及默认值，然后总结")
		r.TaskToolEnd("a", "rg -n Load internal", true)
		r.TaskStart("c", "skill:search", "pdf tools")
		c.advance(1200 * time.Millisecond)
		r.Tick()
		c.snap("three tasks running")
		for i := 0; i < 7; i++ {
			cmd := "read internal/config/file" + itoa(i) + ".go"
			r.TaskToolStart("b", cmd)
			r.TaskToolEnd("b", cmd, i != 3)
		}
		r.TaskToolStart("c", "skill:list")
		r.TaskEnd("c", false, 1500*time.Millisecond, 1, "sub-agent failed: model error\nsecond line")
		r.TaskEnd("a", true, 2*time.Second, 1, "")
		r.TaskToolStart("b", "grep -r Getenv .")
		r.TaskToolEnd("b", "grep -r Getenv .", true)
		r.TaskEnd("b", true, 75*time.Second, 8, "")
		r.TextDelta("All three finished.")
		r.EndText()
	}},
	{"abort", func(r *Renderer, c *ctl) {
		r.TextDelta("Running a long build")
		r.ToolStart("t1", "make build")
		r.TaskStart("x", "explore", "look around")
		r.TaskToolStart("x", "sleep 100")
		r.Abort("interrupted")
		r.Notice("Interrupted. What should I do instead?")
	}},
	{"indicator", func(r *Renderer, c *ctl) {
		r.SetStatus(Status{Model: "claude-sonnet-4-5", ContextPercent: 12, CostUSD: 0.042, Priced: true, Sandbox: "on"})
		r.StartTurn()
		c.snap("waiting for the model")
		c.advance(1300 * time.Millisecond)
		r.Tick()
		c.snap("1.3s later")
		r.TurnUsage(12_400, 0)
		r.TextDelta("Hello, I am streaming an answer")
		c.advance(400 * time.Millisecond)
		r.TextDelta(" that goes on.\nNext line")
		c.snap("while text streams")
		r.TextDelta(".\n")
		c.advance(400 * time.Millisecond)
		r.Tick()
		c.snap("after the text pauses")
		r.TurnUsage(0, 230)
		r.EndText()
		r.EndTurn()
	}},
	{"thinking", func(r *Renderer, c *ctl) {
		r.StartTurn()
		r.Thinking("The user wants the config loader.\nIt probably reads env")
		c.snap("thinking")
		c.advance(2 * time.Second)
		r.Thinking(" variables first.\nThen the file.\nThen flags override both.\n")
		r.TextDelta("The loader reads env, then the file.\n")
		r.EndText()
		r.EndTurn()
	}},
	{"retry", func(r *Renderer, c *ctl) {
		r.StartTurn()
		r.RetryNotice(Retry{Reason: "overloaded (529)", Attempt: 1, Max: 4, Wait: 4 * time.Second})
		c.snap("retry announced")
		c.advance(2500 * time.Millisecond)
		r.Tick()
		c.snap("countdown")
		c.advance(2 * time.Second)
		r.Tick()
		c.snap("retrying")
		r.TextDelta("Back.\n")
		r.EndText()
		r.EndTurn()
	}},
	{"diffs", func(r *Renderer, c *ctl) {
		old := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"
		nw := strings.Replace(old, `"hello"`, `"hello, world"`, 1)
		r.ToolStart("e1", `edit main.go '"hello"' '"hello, world"'`)
		r.ToolEnd("e1", true, "Edited /w/main.go: replaced 1 occurrence\n", ToolMeta{Change: &FileChange{Path: "/w/main.go", Old: old, New: nw}})
		r.ToolStart("w1", "write notes.md <<'EOF'\n# Notes\n- one\nEOF")
		r.ToolEnd("w1", true, "Created /w/notes.md (14 bytes, 2 lines)\n", ToolMeta{Change: &FileChange{Path: "/w/notes.md", New: "# Notes\n- one\n", Created: true}})
		var long, longer strings.Builder
		for i := 1; i <= 40; i++ {
			long.WriteString("line " + itoa(i) + "\n")
			if i%3 == 0 {
				longer.WriteString("changed " + itoa(i) + "\n")
			} else {
				longer.WriteString("line " + itoa(i) + "\n")
			}
		}
		r.ToolStart("w2", "write big.txt <<'EOF'")
		r.ToolEnd("w2", true, "Overwrote /w/big.txt (300 bytes, 40 lines)\n", ToolMeta{Change: &FileChange{Path: "/w/big.txt", Old: long.String(), New: longer.String()}})
	}},
	{"table_code", func(r *Renderer, c *ctl) {
		r.TextDelta("| Name | Role | Size |\n|:-----|------|-----:|\n| `config.go` | loads **settings** from env and file | 12 KB |\n")
		c.snap("table rows pending")
		r.TextDelta("| render.go | draws the terminal | 30 KB |\n\nThe code:\n```go\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```\n")
		r.TextDelta("| a | b |\n|---|---|\n| 1 | 2 |")
		r.EndText()
	}},
	{"wrap", func(r *Renderer, c *ctl) {
		r.TextDelta("This paragraph is long enough that it has to be wrapped at the terminal width, between words and never inside one.\n")
		r.TextDelta("- a list item that is also far too long for one row of sixty columns wraps with a hanging indent\n")
		r.TextDelta("> a quotation that is long enough to wrap keeps its bar on every row it takes up\n")
		r.EndText()
	}},
	{"command_tail", func(r *Renderer, c *ctl) {
		r.StartTurn()
		r.ToolStart("t1", "npm test")
		r.ToolOutput("t1", "> test\n> jest\n\nPASS src/a.test.js\nPASS src/b.test.js\nRUNS src/c.t")
		c.advance(3200 * time.Millisecond)
		r.Tick()
		c.snap("running with a tail")
		r.ToolOutput("t1", "est.js\n")
		c.advance(1 * time.Second)
		r.ToolEnd("t1", true, "> test\n> jest\n\nPASS src/a.test.js\nPASS src/b.test.js\nPASS src/c.test.js\nTests: 3 passed\n", ToolMeta{Duration: 4200 * time.Millisecond})
		r.EndTurn()
	}},
	{"clear", func(r *Renderer, c *ctl) {
		r.TextDelta("old answer\n")
		r.ToolStart("t1", "ls")
		r.ToolEnd("t1", true, "a\n", ToolMeta{})
		r.ClearScreen()
		r.Notice("Conversation cleared.")
	}},
	{"resize", func(r *Renderer, c *ctl) {
		r.SetStatus(Status{Model: "gpt-4o", ContextPercent: -1, Sandbox: "off"})
		r.StartTurn()
		r.TaskStart("a", "explore", "find every place that reads an environment variable")
		r.TaskToolStart("a", "grep -rn Getenv --include=*.go internal cmd")
		r.TextDelta("Working on a line of text that is long enough to wrap once the terminal shrinks\n")
		c.snap("60 columns")
		c.resize(30, 20)
		c.snap("30 columns")
		c.resize(60, 20)
		r.TaskEnd("a", true, 3*time.Second, 1, "")
		r.EndText()
		r.EndTurn()
	}},
	{"subagent_preview", func(r *Renderer, c *ctl) {
		r.ToolStartKind("t1", "task:general --prompt 'summarise the README'", ToolTask)
		r.TaskStart("x", "general", "summarise the README")
		r.TaskEnded("x", TaskOutcome{OK: true, Duration: 4 * time.Second, Tools: 2, Tokens: 5300})
		r.ToolEnd("t1", true, "## Summary\n\nSynapse is a **terminal agent**.\n\n- one tool\n- a sandbox\n", ToolMeta{Markdown: true})
	}},
}

// ttyOptions and plainOptions are the two configurations every scenario is
// rendered with.
func ttyOptions(out io.Writer, c *ctl) Options {
	return Options{Out: out, TTY: true, Color: true, Width: 60, Height: 20, MaxRecentTools: 3, Now: c.clock}
}

func plainOptions(out io.Writer, c *ctl) Options {
	return Options{Out: out, MaxRecentTools: 3, Now: c.clock}
}

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// visible shows control characters of the raw TTY stream as printable marks.
func visible(s string) string {
	return strings.NewReplacer("\x1b", "␛", "\r\n", "␍\n", "\r", "␍").Replace(s)
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run go test -run %s -update): %v", t.Name(), err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update after checking):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestGoldenPlain(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &ctl{now: start}
			c.r = New(plainOptions(&out, c))
			sc.run(c.r, c)
			if strings.Contains(out.String(), "\x1b") {
				t.Errorf("non-TTY output without colour contains an escape sequence:\n%q", out.String())
			}
			checkGolden(t, sc.name+".plain", out.String())
		})
	}
}

func TestGoldenTTY(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &ctl{now: start}
			opts := ttyOptions(nil, c)
			c.term = newVT(opts.Width, opts.Height)
			opts.Out = teeVT{buf: &out, term: c.term, c: c}
			c.r = New(opts)
			sc.run(c.r, c)
			if c.err != nil {
				t.Fatalf("terminal rejected the output: %v", c.err)
			}
			checkGolden(t, sc.name+".tty", visible(out.String()))
			screen := c.term.String()
			if c.snaps.Len() > 0 {
				screen = c.snaps.String() + "=== end ===\n" + screen
			}
			checkGolden(t, sc.name+".screen", screen)
		})
	}
}

// NO_COLOR on a terminal: the live area and the layout stay (wrap, tables,
// diffs, rows), but no colour or style sequence is written, code included.
func TestTTYWithoutColorHasNoSGR(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &ctl{now: start, term: newVT(60, 20)}
			opts := Options{Out: teeVT{buf: &out, term: c.term, c: c}, TTY: true, Width: 60, Height: 20, MaxRecentTools: 3, Now: c.clock}
			c.r = New(opts)
			sc.run(c.r, c)
			if c.err != nil {
				t.Fatalf("terminal rejected the output: %v", c.err)
			}
			if m := sgrSeq.FindString(out.String()); m != "" {
				t.Errorf("colour off, yet the output has %q:\n%s", m, visible(out.String()))
			}
		})
	}
}

var sgrSeq = regexp.MustCompile(`\x1b\[[0-9;]*m`)
