package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// waitCmd is a tool command that runs until the test creates the file go.
const waitCmd = "touch started; while [ ! -f go ]; do sleep 0.05; done; echo released"

// TestChatPTYTypeAhead: keys typed while a turn runs are kept: the line is
// shown as queued and becomes the next prompt when the turn ends; Esc
// clears a queue, and on an empty one interrupts the turn.
func TestChatPTYTypeAhead(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", waitCmd)),
		llmtest.TextTurn("First turn done."),
		llmtest.TextTurn("Second turn answers the queued prompt."),
		llmtest.ToolTurn(llmtest.BashCall("c2", "sleep 30")),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("first prompt\r")
	waitForFile(t, filepath.Join(dir, "started"))
	p.send("queued ")
	p.expect("queued › queued ▏  (Enter queues it; Esc clears)") // unfinished: not sent yet
	p.send("prompt\r")
	p.expect("queued › queued prompt  (sent when the turn ends; Esc clears)")
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.expect("First turn done.")
	p.expect(prompt + "queued prompt")
	p.expect("Second turn answers the queued prompt.")
	p.expect(prompt)
	reqs := srv.Requests()
	if len(reqs) != 3 || !strings.Contains(reqs[2].LastUserText(), "queued prompt") {
		t.Fatalf("the queued prompt did not reach the model: %d requests", len(reqs))
	}

	p.send("run the long one\r")
	p.expect("sleep 30")
	p.send("never sent")
	p.expect("queued › never sent")
	p.send("\x1b") // clears the queue
	time.Sleep(300 * time.Millisecond)
	p.send("\x1b") // interrupts
	p.expect("Interrupted")
	p.expect(prompt)
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := srv.Count(); n != 4 {
		t.Errorf("%d requests, want 4 (the cleared queue is not sent)", n)
	}
}

// TestChatPTYExitDuringTurn: /exit typed while a turn runs cancels it and
// exits 0; /H (any case) is /help.
func TestChatPTYExitDuringTurn(t *testing.T) {
	srv := llmtest.New(t, llmtest.ToolTurn(llmtest.BashCall("c1", waitCmd)))
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect("Shift+Enter or Ctrl+J for a new line")
	p.expect(prompt)
	p.send("/H\r")
	p.expect("Commands:")
	p.expect(prompt)
	p.send("wait here\r")
	waitForFile(t, filepath.Join(dir, "started"))
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("/exit during a turn: exit %d, want 0; screen:\n%s", code, p.screen())
	}
}

// Under tmux Shift+Enter arrives as Enter unless extended-keys is on, and
// then only for a program that asks with modifyOtherKeys: the REPL asks
// that way too (and resets it on the way out), the banner names the keys
// that work either way, /help says how to turn extended keys on, and
// Shift+Enter as tmux then sends it makes a new line. Outside tmux nothing
// of modifyOtherKeys is sent.
func TestChatPTYUnderTmux(t *testing.T) {
	for _, tc := range []struct {
		name, banner string
		env          []string
		modes        bool
	}{
		{"tmux", "Alt+Enter or Ctrl+J for a new line", []string{"TMUX=/tmp/tmux-0/default,1,0"}, true},
		{"no tmux", "Shift+Enter or Ctrl+J for a new line", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.TextTurn("Got both lines."))
			p := startPTY(t, t.TempDir(), append(chatEnv(t, srv), tc.env...))
			p.expect(tc.banner)
			p.expect(prompt)
			p.send("/help\r")
			p.expect("Under tmux, Shift+Enter needs `set -g extended-keys on`")
			p.expect(prompt)
			p.send("line one\x1b[27;2;13~line two\r") // Shift+Enter as tmux sends it (modifyOtherKeys)
			p.expect("Got both lines.")
			p.expect(prompt)
			p.send("/exit\r")
			if code := p.wait(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if got := srv.Requests()[0].LastUserText(); !strings.Contains(got, "line one\nline two") {
				t.Errorf("the model got %q, want the two lines", got)
			}
			p.mu.Lock()
			raw := p.raw.String()
			p.mu.Unlock()
			on, off := strings.Index(raw, "\x1b[>4;2m"), strings.LastIndex(raw, "\x1b[>4;0m")
			if tc.modes && (on < 0 || off < on) {
				t.Errorf("modifyOtherKeys not asked for, then reset: %q", raw)
			}
			if !tc.modes && strings.Contains(raw, "\x1b[>4;") {
				t.Errorf("modifyOtherKeys sent outside tmux: %q", raw)
			}
		})
	}
}

// TestChatPTYEditorKeys: Tab completes /res to /resume and a file name,
// Ctrl+R brings back an older prompt (searching what was typed before it,
// or narrowing as the query is typed after it), and an @file mention
// reaches the model.
func TestChatPTYEditorKeys(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.TextTurn("First answer."),
		llmtest.TextTurn("Second answer."),
		llmtest.TextTurn("Third answer."),
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes-alpha.txt"), []byte("alpha-content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("/res\t\r")
	p.expect("No other saved session in project " + dir)
	p.expect(prompt)
	p.send("!cat notes-al\t\r")
	p.expect("alpha-content")
	p.expect(prompt)
	p.send("summarise the meeting\r")
	p.expect("First answer.")
	p.expect(prompt)
	p.send("something else\r")
	p.expect("Second answer.")
	p.expect(prompt)
	p.send("meeting\x12\r") // Ctrl+R: the older prompt containing "meeting"
	p.expect("Third answer.")
	p.expect(prompt)
	reqs := srv.Requests()
	if got := reqs[2].LastUserText(); !strings.Contains(got, "summarise the meeting") {
		t.Errorf("Ctrl+R sent %q", got)
	}
	// Ctrl+R first, then the query: it narrows as it is typed; Right
	// takes the match into the editor to be edited.
	srv.Script(llmtest.TextTurn("Fourth answer."))
	p.send("\x12")
	p.expect("(reverse-i-search) '':")
	p.send("some")
	p.expect("(reverse-i-search) 'some': something else")
	p.send("\x1b[C too\r")
	p.expect("Fourth answer.")
	p.expect(prompt)
	if got := srv.Requests()[3].LastUserText(); !strings.Contains(got, "something else too") {
		t.Errorf("the edited match sent %q", got)
	}
	srv.Script(llmtest.TextTurn("Read it."))
	p.send("look at @notes-alpha.txt please\r")
	p.expect("Read it.")
	p.expect(prompt)
	reqs = srv.Requests()
	if got := reqs[4].LastUserText(); !strings.Contains(got, "notes-alpha.txt]") || !strings.Contains(got, "read <path>") {
		t.Errorf("the @ mention did not reach the model as a file reference: %q", got)
	}
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestChatPTYSlashPopupAndShiftTabInTurn: typing a command shows the
// matching commands under the prompt, narrowing as it is typed; Shift+Tab
// while a turn runs switches the permission mode at once (said above the
// live area, shown in the footer and then in the prompt).
func TestChatPTYSlashPopupAndShiftTabInTurn(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.ToolTurn(llmtest.BashCall("c1", waitCmd)),
		llmtest.TextTurn("Turn done."),
	)
	dir := t.TempDir()
	p := startPTY(t, dir, chatEnv(t, srv))
	p.expect(prompt)
	p.send("/co")
	p.expect("/cost /context /compact · Tab completes")
	p.send("nt")
	p.expect("/context · context used against the model's window")
	p.send("\x15") // Ctrl+U: an empty prompt again
	p.send("wait here\r")
	waitForFile(t, filepath.Join(dir, "started"))
	p.send("\x1b[Z")
	p.expect("mode accept-edits · ") // the footer, not a paragraph in the transcript
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.expect("Turn done.")
	p.expect("accept-edits " + prompt)
	p.send("/mode\r")
	p.expect("Mode accept-edits")
	p.send("/exit\r")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}
