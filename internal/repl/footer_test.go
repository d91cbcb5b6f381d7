package repl

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Between turns a dim status row under the prompt shows the model, how
// full the context is, the mode when it is not the default, and where help
// is. Hints (a note, the slash popup) take its place; it is erased when the
// prompt is sent, so it never reaches the scrollback; a narrow terminal
// goes without it.
func TestPTYIdleFooter(t *testing.T) {
	fa := &fakeAgent{model: "claude-test"}
	release := make(chan struct{})
	p := startPTY(t, fa, func(o *Options) {
		o.ContextWindow = func(string) int { return 1000 }
		o.SetMode = func(tool.Mode) error { return nil }
		v := o.View
		fa.run = func(ctx context.Context, input string) (agent.Result, error) {
			v.Handle(agent.Event{Kind: agent.Usage, Usage: &llm.Usage{InputTokens: 120}})
			if input == "wait" {
				<-release
			}
			return agent.Result{}, nil
		}
	})
	under := func(s *screen) string { return s.lines()[min(s.row+1, len(s.rows)-1)] }
	p.waitScreen("the footer before the first turn", func(s *screen) bool {
		return s.cursorLine() == "›" && under(s) == "claude-test · /help"
	})
	p.send("hello\r")
	p.waitFor("› ", 2)
	p.waitScreen("the footer with the context after a turn, none in the scrollback", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return s.cursorLine() == "›" && under(s) == "claude-test · context 12% · /help" &&
			strings.Count(text, "· /help") == 1 && strings.Contains(text, "› hello\n")
	})
	p.send("/co")
	p.waitScreen("the slash popup in its place", func(s *screen) bool {
		return s.cursorLine() == "› /co" && under(s) == "/cost /context /compact · Tab completes" &&
			!strings.Contains(strings.Join(s.lines(), "\n"), "· /help")
	})
	p.send("\x15\x1b[Z") // Ctrl+U, Shift+Tab: the mode's note first
	p.waitScreen("the mode's note", func(s *screen) bool {
		return strings.HasPrefix(under(s), "mode accept-edits:")
	})
	p.send("x")
	p.waitScreen("the footer with the mode", func(s *screen) bool {
		return s.cursorLine() == "accept-edits › x" &&
			under(s) == "accept-edits mode (Shift+Tab to cycle) · claude-test · context 12% · /help"
	})
	p.send("\x15wait\r")
	p.waitScreen("the turn running", func(s *screen) bool {
		text := strings.Join(s.lines(), "\n")
		return strings.Contains(text, "accept-edits › wait\n") && strings.Contains(text, "Working…")
	})
	p.send("\x0f") // Ctrl+O during the turn
	p.waitFor("verbose output on")
	close(release)
	p.waitScreen("the footer says verbose output is on", func(s *screen) bool {
		return s.cursorLine() == "accept-edits ›" && // cut to the 80 columns
			strings.HasPrefix(under(s), "accept-edits mode (Shift+Tab to cycle) · claude-test · context 12% · verbose ·")
	})
	p.send("x")
	p.repl.SetSize(30, 24)
	p.waitScreen("no footer on a narrow terminal", func(s *screen) bool {
		return s.cursorLine() == "accept-edits › x" && !strings.Contains(strings.Join(s.lines(), "\n"), "· /help")
	})
}

// Without a terminal there is no footer (nor any hint).
func TestPipedNoFooter(t *testing.T) {
	out, code := runPiped(t, &fakeAgent{model: "claude-test"}, "hello\n", nil)
	if code != 0 || strings.Contains(out, "· /help") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

// fixedJobs is a job table with n running jobs.
type fixedJobs struct{ n int }

func (fixedJobs) Background() (int, error) { return 0, nil }
func (fixedJobs) Text() string             { return "" }
func (j fixedJobs) Running() int           { return j.n }

// Background jobs run on between turns: the idle row counts them.
func TestIdleFooterCountsJobs(t *testing.T) {
	for _, c := range []struct {
		jobs Jobs
		want string
	}{{nil, "claude-test · /help"}, {fixedJobs{0}, "claude-test · /help"}, {fixedJobs{1}, "claude-test · 1 job (/jobs) · /help"},
		{fixedJobs{3}, "claude-test · 3 jobs (/jobs) · /help"}} {
		fa := &fakeAgent{model: "claude-test"}
		p := startPTY(t, fa, func(o *Options) { o.Jobs = c.jobs })
		under := func(s *screen) string { return s.lines()[min(s.row+1, len(s.rows)-1)] }
		p.waitScreen("the footer: "+c.want, func(s *screen) bool { return s.cursorLine() == "›" && under(s) == c.want })
	}
}
