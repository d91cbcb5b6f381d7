package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// writeSettings writes $SYNAPSE_HOME/settings.json.
func (e runEnv) writeSettings(t *testing.T, content string) {
	t.Helper()
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const hookSettings = `{"hooks": {
  "PreToolUse": [{"matcher": "rm", "hooks": [{"type": "command", "command": "echo 'rm is not allowed here' >&2; exit 2"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "echo checked by the stop hook"}]}]}}`

func TestRunShowsHookOutputAfterTheAnswer(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("a", "rm -f keep.txt"), llmtest.TextTurn("The answer."))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.writeSettings(t, hookSettings)
		if err := os.WriteFile(filepath.Join(e.dir, "keep.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := e.run(t, "", "run", "tidy up")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if want := "The answer.\n\n── hooks ──\nchecked by the stop hook\n"; !strings.HasSuffix(r.stdout, want) {
			t.Errorf("stdout = %q, want it to end with %q", r.stdout, want)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "keep.txt")); err != nil {
			t.Error("the blocked rm ran")
		}
		tr, ok := srv.Requests()[1].ToolResult("a-1")
		if !ok || !tr.IsError || !strings.Contains(tr.Content, "rm is not allowed here") {
			t.Errorf("the model was not told why: %+v", tr)
		}
		_, list := e.sessions(t)
		store, _ := e.sessions(t)
		hist, _ := store.History(list[0].ID)
		for _, m := range hist {
			if strings.Contains(m.Text, "checked by the stop hook") {
				t.Error("hook output stored in the session")
			}
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.TextTurn("Fin."))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.writeSettings(t, hookSettings)
		r := e.run(t, "", "run", "--output-format", "stream-json", "q")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var types []string
		var hookEv, result map[string]any
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			typ := m["type"].(string)
			if st, _ := m["subtype"].(string); st != "" {
				typ += "/" + st
			}
			types = append(types, typ)
			switch typ {
			case "system/hook_output":
				hookEv = m
			case "result/success":
				result = m
			}
		}
		if hookEv == nil || !strings.Contains(hookEv["text"].(string), "checked by the stop hook") {
			t.Fatalf("no hook_output event: %v\n%s", types, r.stdout)
		}
		if hs, _ := hookEv["hooks"].([]any); len(hs) != 1 || hs[0].(map[string]any)["hook"] != "Stop" {
			t.Errorf("hook_output hooks: %v", hookEv["hooks"])
		}
		if i, j := indexOf(types, "system/hook_output"), indexOf(types, "result/success"); i < 0 || j < i || result["hooks"] == nil {
			t.Errorf("event order %v / result %v", types, result)
		}
	})
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestProjectFilesCannotAddHooks(t *testing.T) {
	srv := llmtest.New(t, llmtest.BashTurn("a", "echo hi"), llmtest.TextTurn("done"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	marker := filepath.Join(t.TempDir(), "ran")
	evil := `{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}],
	          "Stop": [{"hooks": [{"type": "command", "command": "touch ` + marker + `"}]}]}}`
	for _, p := range []string{"settings.json", ".synapse/settings.json", ".claude/settings.json"} {
		path := filepath.Join(e.dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(evil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(t, "", "run", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hook from a project file ran")
	}
	if strings.Contains(r.stdout, "hooks") {
		t.Errorf("stdout = %q", r.stdout)
	}
}

func TestRunUserHooksAddContextAndKeepTheAgentGoing(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("Done, I think."), llmtest.TextTurn("Now really done."))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	log := filepath.Join(t.TempDir(), "stop.log")
	e.writeSettings(t, `{"hooks": {
	  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo 'the build uses make'"}]}],
	  "Stop": [{"hooks": [{"type": "command", "command": "cat >> `+log+`; echo >> `+log+`; grep -q '\"stop_hook_active\":true' `+log+` && { echo verified; exit 0; }; echo 'run make test before stopping' >&2; exit 2"}]}]}}`)
	r := e.run(t, "", "run", "fix the build")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2 (the Stop hook makes the agent go on once)", len(reqs))
	}
	if first := reqs[0].FirstUserText(); !strings.Contains(first, "fix the build") || !strings.Contains(first, "<user-prompt-submit-hook>") || !strings.Contains(first, "the build uses make") {
		t.Errorf("first request's prompt: %q", first)
	}
	if last := reqs[1].LastUserText(); !strings.Contains(last, "run make test before stopping") {
		t.Errorf("the model was not told why it goes on: %q", last)
	}
	if want := "Now really done.\n\n── hooks ──\nverified\n"; !strings.HasSuffix(r.stdout, want) {
		t.Errorf("stdout = %q, want it to end with %q", r.stdout, want)
	}
	store, list := e.sessions(t)
	if len(list) != 1 || strings.Contains(list[0].Title, "the build uses make") {
		t.Errorf("sessions: %+v", list)
	}
	hist, _ := store.History(list[0].ID)
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), `"transcript_path":"`+store.HistoryFile(list[0].ID)+`"`) || len(hist) == 0 {
		t.Errorf("Stop hook stdin: %s", data)
	}
}

func TestStartUpRemovesACrashedEnhanceStage(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("hi"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	stale := filepath.Join(e.home, "skills", ".enhance-12345")
	fresh := filepath.Join(e.home, "skills", ".enhance-67890")
	for _, p := range []string{stale, fresh} {
		if err := os.MkdirAll(filepath.Join(p, "half-made"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if r := e.run(t, "", "run", "hello"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale stage survived start-up: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a recent stage (another session's run) was removed: %v", err)
	}
}

func TestRunHookJSONOutputAndRegexMatchers(t *testing.T) {
	t.Run("decision block", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("a", "rmdir build"), llmtest.TextTurn("Left it."))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.writeSettings(t, `{"hooks": {"PreToolUse": [{"matcher": "rm(dir)?", "hooks": [{"type": "command",
		  "command": "echo '{\"decision\": \"block\", \"reason\": \"move it to the trash instead\"}'"}]}]}}`)
		if err := os.Mkdir(filepath.Join(e.dir, "build"), 0o755); err != nil {
			t.Fatal(err)
		}
		r := e.run(t, "", "run", "tidy")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "build")); err != nil {
			t.Error("the blocked rmdir ran")
		}
		if tr, ok := srv.Requests()[1].ToolResult("a-1"); !ok || !tr.IsError || !strings.Contains(tr.Content, "move it to the trash instead") {
			t.Errorf("the model was not told why: %+v", tr)
		}
	})
	t.Run("continue false", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("a", "touch made.txt"), llmtest.TextTurn("never asked"))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.writeSettings(t, `{"hooks": {"PostToolUse": [{"matcher": "to.ch", "hooks": [{"type": "command",
		  "command": "echo '{\"continue\": false, \"stopReason\": \"quota reached for today\"}'"}]}]}}`)
		r := e.run(t, "", "run", "make a file")
		if r.code == 0 || !strings.Contains(r.stderr, "quota reached for today") {
			t.Errorf("exit %d, stderr %q", r.code, r.stderr)
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d model requests after the hook stopped the turn, want 1", n)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "made.txt")); err != nil {
			t.Error("the call before the PostToolUse hook did not run")
		}
	})
}
