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
	if err == nil || !strings.Contains(out, "no saved session in "+projB+" to continue") || !strings.Contains(out, "synapse sessions --all") {
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
	if err != nil || !strings.Contains(out, "No saved sessions for "+empty) {
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
	if out, err := run(repo, "prompt at the top\n"); err != nil {
		t.Fatalf("chat at the top: %v\n%s", err, out)
	}
	out, err := run(src, "", "sessions")
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
