package cli

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// tmuxProc is the built binary running in a pane of a private tmux server:
// tmux is the terminal emulator (it reflows its rows on a resize, as the
// terminals people use do) and keeps the scrollback the test reads.
type tmuxProc struct {
	t    *testing.T
	tmux string
	sock string
}

// startTmux runs synapse in dir in a detached 120×40 tmux pane.
func startTmux(t *testing.T, dir string, env []string, args ...string) *tmuxProc {
	t.Helper()
	bin := testutil.RequireTool(t, "tmux")
	tmp := t.TempDir()
	conf := filepath.Join(tmp, "tmux.conf")
	testutil.WriteFile(t, conf, "set -g history-limit 50000\nset -g remain-on-exit on\nset -g default-terminal tmux-256color\n")
	p := &tmuxProc{t: t, tmux: bin, sock: filepath.Join(tmp, "sock")}
	argv := append([]string{"-S", p.sock, "-f", conf, "new-session", "-d", "-s", "syn", "-x", "120", "-y", "40", "-c", dir, "--", synapseBin}, args...)
	c := exec.Command(bin, argv...)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(bin, "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *tmuxProc) run(args ...string) string {
	p.t.Helper()
	out, err := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the pane's visible rows.
func (p *tmuxProc) screen() string { return p.run("capture-pane", "-p", "-t", "syn") }

// history is the scrollback and the screen, wrapped rows joined.
func (p *tmuxProc) history() string {
	return p.run("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "syn")
}

// waitScreen waits until ok holds for the visible screen and returns it.
func (p *tmuxProc) waitScreen(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(ptyDeadline)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *tmuxProc) expect(want string) string {
	p.t.Helper()
	return p.waitScreen(strconv.Quote(want), func(s string) bool { return strings.Contains(s, want) })
}

func (p *tmuxProc) send(keys ...string) {
	p.t.Helper()
	p.run(append([]string{"send-keys", "-t", "syn"}, keys...)...)
}

func (p *tmuxProc) resize(cols int) {
	p.t.Helper()
	p.run("resize-window", "-t", "syn", "-x", strconv.Itoa(cols))
}

var elapsedRe = regexp.MustCompile(`(?:Working|Running)… (\d+)s`)

// waitTicks waits until the working indicator has counted two more seconds:
// the live area has been redrawn many times at the terminal's present size.
func (p *tmuxProc) waitTicks() {
	p.t.Helper()
	m := elapsedRe.FindStringSubmatch(p.expect("ing… "))
	if m == nil {
		return
	}
	from, _ := strconv.Atoi(m[1])
	p.waitScreen("the indicator to count on", func(s string) bool {
		m := elapsedRe.FindStringSubmatch(s)
		n := -1
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n >= from+2
	})
}

// Shrinking the terminal to half its width and widening it again while three
// long-titled tasks run leaves no copy of the live area in the scrollback:
// each task's row is there once, finished.
func TestChatTmuxResizeDuringTasks(t *testing.T) {
	jobs := []string{"alpha", "beta", "gamma"}
	title := func(job string) string {
		return job + " job with a long title that runs past half the terminal width"
	}
	release := make(chan struct{})
	srv := llmtest.New(t)
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(free) // before the server closes: its handlers wait for this
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		first := req.FirstUserText()
		for _, job := range jobs {
			if strings.Contains(first, "say "+job) {
				<-release
				return llmtest.TextTurn(job + " answer")
			}
		}
		if len(req.ToolResults()) == 0 {
			var calls []llmtest.ToolCall
			for i, job := range jobs {
				calls = append(calls, llmtest.BashCall("t"+strconv.Itoa(i), `task:general -p "say `+job+`" -d "`+title(job)+`"`))
			}
			return llmtest.ToolTurn(calls...)
		}
		return llmtest.TextTurn("All three done.")
	})
	p := startTmux(t, t.TempDir(), chatEnv(t, srv))
	p.expect("›")
	p.send("three tasks", "Enter")
	p.waitScreen("three task rows", func(s string) bool {
		return strings.Count(s, "Task(general: ") == 3
	})
	for _, cols := range []int{60, 100} {
		p.resize(cols)
		p.waitTicks()
		t.Logf("at %d columns:\n%s", cols, p.screen())
	}
	free()
	p.expect("All three done.")
	p.expect("›")

	hist := p.history()
	for _, job := range jobs {
		row := "Task(general: " + job + " job"
		if n := strings.Count(hist, row); n != 1 {
			t.Errorf("%q is %d times in the scrollback, want once (finished):\n%s", row, n, hist)
		}
	}
	p.send("/exit", "Enter")
}
