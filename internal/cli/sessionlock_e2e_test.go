package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// One writer per session (issue 23): while a `synapse run --resume ID` is
// working, a second process on that session is refused with the holder's
// pid and what to do, or, for --continue, forks into a new session; the
// session's file holds the first run's messages only, in order.
func TestSecondWriterOfASessionIsRefused(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.TextTurn("hello back"),
		// The holder's command waits until the test releases it.
		llmtest.BashTurn("w", "touch started; while [ ! -e release ]; do sleep 0.05; done"),
		llmtest.TextTurn("forked answer"),
		llmtest.TextTurn("holder done"),
	)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	if r := e.run(t, "", "run", "hello"); r.code != 0 {
		t.Fatalf("first run: exit %d: %s", r.code, r.stderr)
	}
	store, list := e.sessions(t)
	id := list[0].ID

	holder := exec.Command(synapseBin, "run", "--resume", id, "wait for release")
	holder.Dir, holder.Env = e.dir, e.env
	var hout, herr bytes.Buffer
	holder.Stdout, holder.Stderr = &hout, &herr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	release := func() { _ = os.WriteFile(filepath.Join(e.dir, "release"), nil, 0o644) }
	defer func() { release(); _ = holder.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(e.dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the holder's command did not start\nstderr: %s", herr.String())
		}
	}

	holderPID := fmt.Sprintf("pid %d", holder.Process.Pid)
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  []string // in stderr
	}{
		{"run --resume", "", []string{"run", "--resume", id, "intruder-prompt"}, 1,
			[]string{id + " is open in another Synapse process (" + holderPID + ")", "close it there", "--fork-session"}},
		{"run --resume prefix", "", []string{"run", "-r", strings.TrimPrefix(id, "session-")[:15], "intruder-prompt"}, 1,
			[]string{holderPID, "--fork-session"}},
		{"chat --resume", "intruder-prompt\n", []string{"chat", "--resume", id}, 1,
			[]string{holderPID, "--fork-session"}},
		{"run --continue forks", "", []string{"run", "--continue", "forked-prompt"}, 0,
			[]string{id + " is open in another Synapse process (" + holderPID + "); continuing in new session session-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(t, tc.stdin, tc.args...)
			t.Logf("stderr: %s", r.stderr)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}

	release()
	if err := holder.Wait(); err != nil || strings.TrimSpace(hout.String()) != "holder done" {
		t.Fatalf("holder: %v, stdout %q\nstderr: %s", err, hout.String(), herr.String())
	}
	hist, err := store.History(id)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range hist {
		roles = append(roles, string(m.Role))
		if strings.Contains(m.Text, "intruder-prompt") || strings.Contains(m.Text, "forked-prompt") {
			t.Errorf("another process's message in the session: %q", m.Text)
		}
	}
	if got := strings.Join(roles, " "); got != "user assistant user assistant tool assistant" || hist[5].Text != "holder done" {
		t.Errorf("session history = %s, last %q; want the two runs, whole and in order", got, hist[len(hist)-1].Text)
	}

	// The fork has its own copy of the history, then its own turn.
	_, list = e.sessions(t)
	if len(list) != 2 {
		t.Fatalf("sessions = %+v, want the original and the fork", list)
	}
	fork := list[0].ID
	if fork == id {
		fork = list[1].ID
	}
	fh, err := store.History(fork)
	if err != nil {
		t.Fatal(err)
	}
	if len(fh) < 4 || fh[1].Text != "hello back" || fh[len(fh)-1].Role != llm.RoleAssistant || fh[len(fh)-1].Text != "forked answer" {
		t.Errorf("fork history = %+v", fh)
	}
}
