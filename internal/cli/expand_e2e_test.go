package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Ctrl+O on a real terminal: a long output of a real command, folded on
// screen, is printed whole at the prompt; during a turn Ctrl+O switches
// verbose output and the model's thinking is then shown whole.
func TestChatPTYCtrlO(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("s1", "seq 1 300")),
		llmtest.TextTurn("Listed."),
	)
	release := make(chan struct{})
	srv.Handle(func(*llmtest.Request) llmtest.Turn {
		select { // the thinking comes once Ctrl+O has switched verbose output on
		case <-release:
		case <-time.After(ptyDeadline):
		}
		return llmtest.Turn{Thinking: "idea one\nidea two\nidea three\nidea four\nidea five", Text: "Thought."}
	})
	p := startPTY(t, t.TempDir(), chatEnv(t, srv))
	p.expect(prompt)
	p.send("list them\r")
	p.expect("✓ seq 1 300")
	p.expect("… 296 more lines · ctrl+o to expand")
	p.expect("Listed.")
	p.expect(prompt)
	if strings.Contains(p.screen(), "\n    150\n") {
		t.Fatalf("the output was not folded:\n%s", p.screen())
	}

	p.send("\x0f")
	p.expect("folded in the last turn: 1 part")
	p.expect("✓ seq 1 300")
	for i := 1; i <= 300; i++ {
		p.expect(fmt.Sprintf("    %d\n", i))
	}
	p.expect(prompt)
	p.send("\x0f")
	p.expect("nothing new since the last Ctrl+O")

	p.send("think first\r")
	p.expect("Working…")
	p.send("\x0f")
	p.expect("verbose output on")
	close(release)
	p.expect("✻ Thinking…")
	for _, idea := range []string{"one", "two", "three", "four", "five"} {
		p.expect("idea " + idea)
	}
	p.expect("Thought.")
	p.expect(prompt)
	if strings.Contains(p.screen(), "of thinking") {
		t.Errorf("thinking folded in verbose mode:\n%s", p.screen())
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
