package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// Sessions belong to the directory they ran in: --continue in project B
// never picks up project A's conversation, `synapse sessions` lists this
// project's (--all every project's), and a continued session replays its
// last turns.
func TestSessionsPerProject(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.TextTurn("Answer in project A."),
		llmtest.TextTurn("Answer in project B."),
		llmtest.TextTurn("Again in project A."),
	)
	env := chatEnv(t, srv)
	projA, projB := t.TempDir(), t.TempDir()
	run := func(dir, stdin string, args ...string) (string, error) {
		t.Helper()
		c := exec.Command(synapseBin, args...)
		c.Dir, c.Env = dir, env
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		return out.String() + errb.String(), err
	}

	if out, err := run(projA, "prompt in A\n"); err != nil {
		t.Fatalf("chat in A: %v\n%s", err, out)
	}
	// B has no session yet: --continue says so instead of taking A's.
	out, err := run(projB, "", "chat", "--continue")
	if err == nil || !strings.Contains(out, "no saved session in project "+projB+" to continue") || !strings.Contains(out, "synapse sessions --all") {
		t.Fatalf("--continue in a project without sessions: err %v\n%s", err, out)
	}
	if out, err := run(projB, "prompt in B\n"); err != nil {
		t.Fatalf("chat in B: %v\n%s", err, out)
	}

	// A's --continue resumes A's conversation (B's is more recent) and
	// replays it.
	out, err = run(projA, "and again\n", "chat", "-c")
	if err != nil {
		t.Fatalf("chat -c in A: %v\n%s", err, out)
	}
	for _, w := range []string{"── last 1 turn of this session ──", "› prompt in A", "Answer in project A.", "Again in project A."} {
		if !strings.Contains(out, w) {
			t.Errorf("chat -c in A lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "prompt in B") {
		t.Errorf("chat -c in A shows B's conversation:\n%s", out)
	}
	reqs := srv.Requests()
	if got := reqs[len(reqs)-1].FirstUserText(); !strings.Contains(got, "prompt in A") {
		t.Errorf("the continued request starts with %q, want A's conversation", got)
	}

	out, err = run(projB, "", "sessions")
	if err != nil || !strings.Contains(out, "prompt in B") || strings.Contains(out, "prompt in A") {
		t.Errorf("sessions in B (err %v) should list B's only:\n%s", err, out)
	}
	out, err = run(projB, "", "sessions", "--all")
	if err != nil || !strings.Contains(out, "prompt in B") || !strings.Contains(out, "prompt in A") || !strings.Contains(out, projA) {
		t.Errorf("sessions --all (err %v) should list both, with directories:\n%s", err, out)
	}
	empty := t.TempDir()
	out, err = run(empty, "", "sessions")
	if err != nil || !strings.Contains(out, "No saved sessions for project "+empty) {
		t.Errorf("sessions in a new project (err %v):\n%s", err, out)
	}
}

// Issue 27: a project is the repository. A session started at the top of a
// repository is continued from src/ (`cd src && synapse -c`), listed there
// by `synapse sessions`, and a session started in src/ is the top's latest.
func TestSessionsFollowTheRepository(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.TextTurn("Answer at the top."),
		llmtest.TextTurn("Continued from src."),
	)
	env := chatEnv(t, srv)
	repo := t.TempDir()
	src := filepath.Join(repo, "src")
	for _, d := range []string{filepath.Join(repo, ".git"), src} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir, stdin string, args ...string) (string, error) {
		t.Helper()
		c := exec.Command(synapseBin, args...)
		c.Dir, c.Env = dir, env
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		return out.String() + errb.String(), err
	}
	// Before any session, the messages name the project, not src/.
	out, err := run(src, "", "sessions")
	if err != nil || !strings.Contains(out, "No saved sessions for project "+repo+" yet") {
		t.Errorf("sessions in src of a project without sessions (err %v):\n%s", err, out)
	}
	out, err = run(src, "", "-c")
	if err == nil || !strings.Contains(out, "no saved session in project "+repo+" to continue") {
		t.Errorf("-c in src of a project without sessions (err %v):\n%s", err, out)
	}
	if out, err := run(repo, "prompt at the top\n"); err != nil {
		t.Fatalf("chat at the top: %v\n%s", err, out)
	}
	out, err = run(src, "", "sessions")
	if err != nil || !strings.Contains(out, "prompt at the top") {
		t.Errorf("sessions in src (err %v) should list the repository's session:\n%s", err, out)
	}
	out, err = run(src, "and from src\n", "-c")
	if err != nil || !strings.Contains(out, "› prompt at the top") || !strings.Contains(out, "Continued from src.") {
		t.Fatalf("-c in src (err %v) should continue the session started at the top:\n%s", err, out)
	}
	if got := srv.Requests()[1].FirstUserText(); !strings.Contains(got, "prompt at the top") {
		t.Errorf("the continued request starts with %q", got)
	}
}

// Issue 27: a corrupt session index must not orphan sessions. The entries
// rebuilt from the history files are in their project again (each history
// records it on its first line), so `synapse sessions`, `-c` and `run -c`
// still find the session; a session whose history file is gone is listed
// as such, and -c passes over it.
func TestCorruptIndexKeepsSessionsFound(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.TextTurn("First answer."),
		llmtest.TextTurn("Continued with run."),
		llmtest.TextTurn("Continued in the chat."),
		llmtest.TextTurn("Another session."),
		llmtest.TextTurn("Continued past the missing one."),
	)
	env := chatEnv(t, srv)
	home := envValue(env, "SYNAPSE_HOME")
	repo := t.TempDir()
	src := filepath.Join(repo, "src")
	for _, d := range []string{filepath.Join(repo, ".git"), src} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir, stdin string, args ...string) (string, error) {
		t.Helper()
		c := exec.Command(synapseBin, args...)
		c.Dir, c.Env = dir, env
		c.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		c.Stdout, c.Stderr = &out, &errb
		err := c.Run()
		return out.String() + errb.String(), err
	}
	index := filepath.Join(home, "sessions", "index.jsonl")
	corrupt := func() {
		t.Helper()
		if err := os.WriteFile(index, []byte("\x00\x01 not an index {{{\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := run(src, "the first prompt\n"); err != nil {
		t.Fatalf("chat in src: %v\n%s", err, out)
	}
	corrupt()
	out, err := run(repo, "", "sessions")
	if err != nil || !strings.Contains(out, "the first prompt") {
		t.Fatalf("sessions after the index was corrupted (err %v) should list the session:\n%s", err, out)
	}
	out, err = run(repo, "", "run", "-c", "go on")
	if err != nil || !strings.Contains(out, "Continued with run.") {
		t.Fatalf("run -c after the index was corrupted (err %v):\n%s", err, out)
	}
	if got := srv.Requests()[1].FirstUserText(); !strings.Contains(got, "the first prompt") {
		t.Errorf("run -c started over instead of continuing: the request starts with %q", got)
	}
	corrupt()
	out, err = run(src, "and in the chat\n", "-c")
	if err != nil || !strings.Contains(out, "› the first prompt") || !strings.Contains(out, "Continued in the chat.") {
		t.Fatalf("-c after the index was corrupted again (err %v):\n%s", err, out)
	}

	// A newer session whose history file is then deleted: listed as
	// missing, and -c still continues the one that has a history.
	if out, err := run(repo, "another prompt\n"); err != nil {
		t.Fatalf("second chat: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "session-*.jsonl"))
	var newest string
	for _, f := range files {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "another prompt") {
			newest = f
		}
	}
	if newest == "" {
		t.Fatalf("no history holds the second session among %v", files)
	}
	if err := os.Remove(newest); err != nil {
		t.Fatal(err)
	}
	out, err = run(src, "", "sessions")
	if err != nil || !strings.Contains(out, "another prompt (history missing)") || !strings.Contains(out, "the first prompt") {
		t.Errorf("sessions with a history file gone (err %v):\n%s", err, out)
	}
	out, err = run(src, "", "run", "-c", "once more")
	if err != nil || !strings.Contains(out, "Continued past the missing one.") || !strings.Contains(srv.Requests()[len(srv.Requests())-1].FirstUserText(), "the first prompt") {
		t.Errorf("run -c with the latest session's history gone (err %v) should continue the one with a history:\n%s", err, out)
	}
}
