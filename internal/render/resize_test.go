package render

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// A terminal resized while three long-titled tasks run keeps each task's
// row once, however many redraws come between the resize and SetSize
// (SIGWINCH is late on a loaded machine): the renderer reads the size it
// draws at (Options.Size) instead of trusting the last one it was told.
func TestResizeBeforeSIGWINCHLeavesNoCopies(t *testing.T) {
	tests := []struct {
		name  string
		steps []int // widths the terminal takes, in order
		ticks int   // redraws between each resize and its SetSize
	}{
		{"shrink then widen", []int{60, 100}, 5},
		{"shrink twice", []int{70, 40}, 3},
		{"no tick before the signal", []int{60, 100}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ctl{now: time.Unix(1_700_000_000, 0)}
			term := newVT(120, 40)
			c.term = term
			cols, rows := 120, 40
			r := New(Options{
				Out: teeVT{buf: &bytes.Buffer{}, term: term, c: c}, TTY: true, Width: cols, Height: rows, Now: c.clock,
				Size: func() (int, int, bool) { return cols, rows, true },
			})
			c.r = r
			r.SetStatus(Status{Model: "claude-sonnet-4-5", ContextPercent: 1, Sandbox: "on (bubblewrap)"})
			r.StartTurn()
			jobs := []string{"alpha", "beta", "gamma"}
			for _, j := range jobs {
				r.TaskStart(j, "general", j+" job with a long title that runs past half the terminal width")
				r.TaskToolStart(j, "sleep 30 # a command long enough to fill the rest of the row")
			}
			for _, w := range tt.steps {
				term.resize(w, rows) // the terminal reflows at once…
				cols = w
				for range tt.ticks { // …the renderer redraws before it hears of it
					c.advance(100 * time.Millisecond)
					r.Tick()
				}
				r.SetSize(w, rows)
				c.advance(100 * time.Millisecond)
				r.Tick()
			}
			for _, j := range jobs {
				r.TaskEnd(j, true, 2*time.Second, 1, "")
			}
			r.EndTurn()
			if c.err != nil {
				t.Fatal(c.err)
			}
			screen := term.String()
			for _, j := range jobs {
				if n := strings.Count(screen, "Task(general: "+j+" job"); n != 1 {
					t.Errorf("task %s is on the terminal %d times, want once:\n%s", j, n, screen)
				}
			}
		})
	}
}

// While a question waits for the user the clocks stand still: the command's
// duration, the indicator's time and a task's time leave out the wait.
func TestPauseClockLeavesOutTheWait(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
	}{{"tty", true}, {"plain", false}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &ctl{now: time.Unix(1_700_000_000, 0)}
			var out bytes.Buffer
			r := New(Options{Out: &out, TTY: tt.tty, Width: 100, Height: 30, Now: c.clock})
			r.StartTurn()
			r.ToolStart("c1", "touch f")
			r.TaskStart("k", "general", "look around")
			c.advance(1500 * time.Millisecond)
			r.PauseClock()
			c.advance(8 * time.Second) // the user thinks
			r.Tick()
			if tt.tty && !strings.Contains(out.String(), "Waiting for your answer") {
				t.Errorf("the indicator does not say it waits:\n%s", out.String())
			}
			r.ResumeClock()
			c.advance(400 * time.Millisecond)
			r.ToolEnd("c1", true, "", ToolMeta{Duration: 9900 * time.Millisecond}) // the agent's clock ran on
			r.TaskEnd("k", true, 9900*time.Millisecond, 0, "")
			r.EndTurn()
			s := out.String()
			if strings.Contains(s, "9.9s") || !strings.Contains(s, "touch f · 1.9s") || !strings.Contains(s, "Task(general: look around) · 1.9s") {
				t.Errorf("the wait is counted:\n%s", s)
			}
		})
	}
}

// A 200,000-line output cut for the model still says how long it was: the
// fold counts the lines as they streamed, not those of the cut result.
func TestFoldCountsTheWholeOutput(t *testing.T) {
	tests := []struct {
		name string
		tty  bool
		ok   bool
		want string
	}{
		{"tty success", true, true, "… 199996 more lines"},
		{"plain success", false, true, "… 199996 more lines"},
		{"tty failure", true, false, "… 199996 earlier lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			r := New(Options{Out: &out, TTY: tt.tty, Width: 100, Height: 30})
			r.ToolStart("c1", "seq 200000")
			var chunk strings.Builder
			for i := 1; i <= 200000; i++ {
				chunk.WriteString("line\n")
				if chunk.Len() >= 4096 || i == 200000 {
					r.ToolOutput("c1", chunk.String())
					chunk.Reset()
				}
			}
			cut := strings.Repeat("line\n", 50) + "[… output cut: 199900 lines not shown …]\n" + strings.Repeat("line\n", 50)
			r.ToolEnd("c1", tt.ok, cut, ToolMeta{})
			if s := out.String(); !strings.Contains(s, tt.want) {
				t.Errorf("want %q:\n%s", tt.want, s[max(0, len(s)-400):])
			}
		})
	}
}

// A fenced block's language picks its highlighting and is not printed as a
// line of text.
func TestFenceLanguageIsNotALine(t *testing.T) {
	for _, color := range []bool{true, false} {
		var out bytes.Buffer
		r := New(Options{Out: &out, TTY: true, Color: color, Width: 80, Height: 24})
		r.TextDelta("Here:\n```go\nfmt.Println(1)\n```\nDone.\n")
		r.EndText()
		vt := newVT(80, 24)
		if _, err := vt.Write(out.Bytes()); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(vt.String(), "\n") {
			if strings.TrimSpace(l) == "go" {
				t.Errorf("color %v: the fence's language is a line:\n%s", color, vt.String())
			}
		}
	}
}

// Three parallel tasks: each task's answer is printed under its own
// Task(…) row, whatever order the tasks end in, not all after the last
// task's tool list.
func TestParallelTaskAnswersUnderTheirRows(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		term := newVT(100, 30)
		c := &ctl{term: term}
		var w io.Writer = &out
		if tty {
			w = teeVT{buf: &out, term: term, c: c}
		}
		r := New(Options{Out: w, TTY: tty, Width: 100, Height: 30})
		r.StartTurn()
		jobs := []string{"one", "two", "three"}
		for i, j := range jobs {
			r.ToolStartKind("c"+itoa(i), `task:general -p "`+j+`"`, ToolTask)
		}
		for i, j := range jobs {
			r.TaskStart(j, "general", "job "+j)
			r.TaskToolStart(j, "grep -rn "+j+" .")
			_ = i
		}
		for _, i := range []int{1, 0, 2} { // they end out of order
			r.TaskToolEnd(jobs[i], "grep -rn "+jobs[i]+" .", true)
			r.TaskEnded(jobs[i], TaskOutcome{OK: true, Duration: time.Second, Tools: 1, CallID: "c" + itoa(i)})
		}
		for i, j := range jobs {
			r.ToolEnd("c"+itoa(i), true, "ANSWER-"+j, ToolMeta{Markdown: true})
		}
		r.EndTurn()
		screen := out.String()
		if tty {
			screen = term.String()
		}
		last := -1
		for _, j := range jobs {
			row := strings.Index(screen, "✓ Task(general: job "+j+")")
			ans := strings.Index(screen, "ANSWER-"+j)
			if row < 0 || ans < row || row < last {
				t.Errorf("tty %v: task %s's answer is not under its own row:\n%s", tty, j, screen)
			}
			last = ans
		}
	}
}
