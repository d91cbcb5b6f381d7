package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

var (
	indicatorLine = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Working… \d+s · ctrl\+c to interrupt`)
	taskRow       = regexp.MustCompile(`^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Task\(general: (alpha|beta|gamma) job\)`)
)

// The REPL is alive on a real terminal against a slow model: the working
// indicator moves while the model is silent, an edit shows its diff, and
// three parallel tasks show three rows at once, and a running command
// shows a tail of its output.
func TestChatPTYAlive(t *testing.T) {
	srv := llmtest.New(t,
		// Silent for 1.5 s before the first token.
		llmtest.Turn{Delay: 1500 * time.Millisecond, ToolCalls: []llmtest.ToolCall{llmtest.BashCall("e1", `edit notes.txt 'old line' 'new line'`)}},
		llmtest.TextTurn("Edited."),
		llmtest.ToolTurn(
			llmtest.BashCall("t1", `task:general -p "say alpha" -d "alpha job"`),
			llmtest.BashCall("t2", `task:general -p "say beta" -d "beta job"`),
			llmtest.BashCall("t3", `task:general -p "say gamma" -d "gamma job"`),
		),
		llmtest.Turn{Text: "sub answer one", Delay: 1200 * time.Millisecond},
		llmtest.Turn{Text: "sub answer two", Delay: 1200 * time.Millisecond},
		llmtest.Turn{Text: "sub answer three", Delay: 1200 * time.Millisecond},
		llmtest.TextTurn("All three done."),
		llmtest.ToolTurn(llmtest.BashCall("n1", "echo tail-one; sleep 2; echo tail-two")),
		llmtest.TextTurn("Ran it."),
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first\nold line\nlast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("edit it\r")

	// Two captures while the model is silent: the indicator has moved.
	p.expect("Working…")
	first := lastMatch(t, p, indicatorLine)
	time.Sleep(600 * time.Millisecond)
	second := lastMatch(t, p, indicatorLine)
	if first == second {
		t.Errorf("the indicator did not change in 600 ms: %q", first)
	}

	p.expect("✓ edit notes.txt")
	p.expect("- old line")
	p.expect("+ new line")
	p.expect("Edited.")
	p.expect(prompt)

	p.send("three tasks\r")
	p.expect("All three done.")
	p.expect(prompt)
	lines := strings.Split(p.screen(), "\n")
	most := 0
	for i := range lines {
		seen := map[string]bool{}
		for j := i; j < len(lines); j++ {
			m := taskRow.FindStringSubmatch(lines[j])
			if m == nil {
				break
			}
			seen[m[1]] = true
		}
		most = max(most, len(seen))
	}
	if most != 3 {
		t.Errorf("no redraw showed the three tasks' rows together (at most %d):\n%s", most, p.screen())
	}
	for _, job := range []string{"alpha", "beta", "gamma"} {
		if !regexp.MustCompile(`✓ Task\(general: ` + job + ` job\) · [\d.]+s · \d+ tools?`).MatchString(p.screen()) {
			t.Errorf("no finished row for the %s task:\n%s", job, p.screen())
		}
	}

	// A running command shows its output under its row before it ends.
	p.send("run it\r")
	p.expect("Ran it.")
	p.expect(prompt)
	s := p.screen()
	end := strings.Index(s, "✓ echo tail-one")
	if end < 0 || !strings.Contains(s[:end], "\n    tail-one") {
		t.Errorf("no live tail before the command ended:\n%s", s)
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// lastMatch is the last match of re in what the terminal received so far.
func lastMatch(t *testing.T, p *ptyProc, re *regexp.Regexp) string {
	t.Helper()
	all := re.FindAllString(p.screen(), -1)
	if len(all) == 0 {
		t.Fatalf("no %v on screen:\n%s", re, p.screen())
	}
	return all[len(all)-1]
}
