package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/todo"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// scenario is a scripted sequence of renderer calls.
type scenario struct {
	name string
	run  func(r *Renderer)
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
	{"markdown", func(r *Renderer) {
		for _, chunk := range []string{
			"# Plan\n\nI will **read** the `config` pack", "age first.\n",
			"- one item\n- two *items*\n1. first\n> a quote\n\n",
			"```go\nfunc main() {}\n```\n---\nSee [the docs](https://example.com) and fin", "ish",
		} {
			r.TextDelta(chunk)
		}
		r.EndText()
	}},
	{"tools", func(r *Renderer) {
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
	{"todowrite", func(r *Renderer) {
		for i, items := range sampleTodos {
			id := "todo" + itoa(i)
			r.ToolStart(id, `TodoWrite '[{"content":"Read the config loader","status":"in_progress"}]'`)
			r.ToolEnd(id, true, "Todos updated", ToolMeta{Todos: items})
			r.TextDelta("Step " + itoa(i+1) + " done.\n")
		}
		r.EndText()
	}},
	{"parallel_tasks", func(r *Renderer) {
		r.TextDelta("Exploring in parallel.\n")
		r.EndText()
		r.TaskStart("a", "explore", "find the config loader")
		r.TaskToolStart("a", "rg -n Load internal")
		r.TaskStart("b", "general", "在仓库里找出所有读取环境变量的地方并列出它们各自的用途以及默认值，然后总结")
		r.TaskToolEnd("a", "rg -n Load internal", true)
		r.TaskStart("c", "skill:search", "pdf tools")
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
	{"abort", func(r *Renderer) {
		r.TextDelta("Running a long build")
		r.ToolStart("t1", "make build")
		r.TaskStart("x", "explore", "look around")
		r.TaskToolStart("x", "sleep 100")
		r.Abort("interrupted")
		r.Notice("Interrupted. What should I do instead?")
	}},
}

// ttyOptions and plainOptions are the two configurations every scenario is
// rendered with.
func ttyOptions(out *bytes.Buffer) Options {
	return Options{Out: out, TTY: true, Color: true, Width: 60, Height: 20, MaxRecentTools: 3}
}

func plainOptions(out *bytes.Buffer) Options {
	return Options{Out: out, MaxRecentTools: 3}
}

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
			sc.run(New(plainOptions(&out)))
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
			opts := ttyOptions(&out)
			sc.run(New(opts))
			term := newVT(opts.Width, opts.Height)
			if _, err := term.Write(out.Bytes()); err != nil {
				t.Fatalf("terminal rejected the output: %v", err)
			}
			checkGolden(t, sc.name+".tty", visible(out.String()))
			checkGolden(t, sc.name+".screen", term.String())
		})
	}
}
