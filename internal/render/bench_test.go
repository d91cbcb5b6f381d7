package render

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkStreamDelta measures one streamed delta of Markdown on a TTY
// with the live area up (indicator and footer), after an answer of the given
// number of lines is already on screen. The cost per delta must not grow
// with the answer: each line is rendered once, when it completes, and a
// delta only extends the unfinished line and redraws the bounded region.
func BenchmarkStreamDelta(b *testing.B) {
	chunks := []string{"Some **bold** text and `code` ", "with a [link](https://x.y) ", "in a line that wraps ", "at the terminal width.\n",
		"- a list item\n", "| a | b |\n", "|---|---|\n", "| 1 | 2 |\n", "\n", "```go\n", "func f() { return }\n", "```\n"}
	for _, lines := range []int{100, 10_000, 100_000} {
		b.Run("answer_lines="+itoa(lines), func(b *testing.B) {
			r := New(Options{Out: io.Discard, TTY: true, Color: true, Width: 100, Height: 40})
			r.SetStatus(Status{Model: "claude-sonnet-4-5", ContextPercent: 30, Sandbox: "on"})
			r.StartTurn()
			for written := 0; written < lines; {
				for _, c := range chunks {
					r.TextDelta(c)
					written += strings.Count(c, "\n")
				}
			}
			b.ResetTimer()
			i := 0
			for b.Loop() {
				r.TextDelta(chunks[i%len(chunks)])
				i++
			}
		})
	}
}

// BenchmarkFoldedToolEnd measures a folded tool call's end on a TTY (its
// output of 2,000 lines kept for Ctrl+O) after the given number of folded
// calls in the same turn: what is kept is bounded, so the cost per call
// must not grow with the turn.
func BenchmarkFoldedToolEnd(b *testing.B) {
	output := strings.Repeat("a line of output that is folded on screen\n", 2000)
	for _, before := range []int{10, 1_000} {
		b.Run("calls_before="+itoa(before), func(b *testing.B) {
			r := New(Options{Out: io.Discard, TTY: true, Color: true, Width: 100, Height: 40})
			r.StartTurn()
			for i := range before {
				r.ToolStart(itoa(i), "cat log")
				r.ToolEnd(itoa(i), true, output, ToolMeta{})
			}
			b.ResetTimer()
			for b.Loop() {
				r.ToolStart("x", "cat log")
				r.ToolEnd("x", true, output, ToolMeta{})
			}
		})
	}
}
