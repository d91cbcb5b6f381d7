package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/headless"
	"github.com/synapse-agent/synapse/internal/headless/headlesstest"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// runEnv is a private HOME/SYNAPSE_HOME with the provider pointed at srv.
type runEnv struct {
	dir, home string
	env       []string
}

func newRunEnv(t *testing.T, srv *llmtest.Server, format string) runEnv {
	t.Helper()
	home := t.TempDir()
	e := runEnv{dir: t.TempDir(), home: filepath.Join(home, ".synapse")}
	e.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + e.home, "LC_ALL=C", "SYNAPSE_MCP_START_TIMEOUT=60000"}
	switch format {
	case llmtest.FormatOpenAI:
		e.env = append(e.env, srv.OpenAIEnv()...)
		e.env = append(e.env, "SYNAPSE_PROVIDER=openai", "SYNAPSE_MODEL=gpt-4o")
	case llmtest.FormatResponses:
		e.env = append(e.env, srv.ResponsesEnv()...)
		e.env = append(e.env, "SYNAPSE_PROVIDER=openai", "SYNAPSE_MODEL=gpt-5")
	case llmtest.FormatGemini:
		e.env = append(e.env, srv.GeminiEnv()...)
		e.env = append(e.env, "SYNAPSE_PROVIDER=gemini", "SYNAPSE_MODEL=gemini-2.5-pro")
	case llmtest.FormatBedrock:
		// As a Claude Code user has it: CLAUDE_CODE_USE_BEDROCK=1 and the AWS variables.
		e.env = append(e.env, srv.BedrockEnv()...)
		e.env = append(e.env, "SYNAPSE_MODEL=claude-sonnet-4-5")
	case llmtest.FormatVertex:
		env, err := srv.VertexEnv(home)
		if err != nil {
			t.Fatal(err)
		}
		e.env = append(e.env, env...)
		e.env = append(e.env, "SYNAPSE_MODEL=claude-sonnet-4-5")
	default:
		e.env = append(e.env, srv.AnthropicEnv()...)
		e.env = append(e.env, "SYNAPSE_MODEL=claude-sonnet-4-5")
	}
	return e
}

func (e runEnv) run(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	c := exec.Command(synapseBin, args...)
	c.Dir, c.Env = e.dir, e.env
	c.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return runResult{out.String(), errb.String(), code}
}

func (e runEnv) sessions(t *testing.T) (*session.Store, []session.Entry) {
	t.Helper()
	store := session.NewStore(filepath.Join(e.home, "sessions"), nil, func(err error) { t.Errorf("session warning: %v", err) })
	list, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	return store, list
}

func todoCmd(statuses ...string) string {
	names := []string{"Create the notes", "Copy them", "Check the copy"}
	var items []string
	for i, s := range statuses {
		items = append(items, `{"content":"`+names[i]+`","activeForm":"Working on it","status":"`+s+`"}`)
	}
	return `TodoWrite '{"todos":[` + strings.Join(items, ",") + `]}'`
}

var formats = []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI, llmtest.FormatResponses, llmtest.FormatGemini, llmtest.FormatBedrock, llmtest.FormatVertex}

// The bar of issue 4: the built binary completes a scripted task of several
// tool calls (shell, read, write, TodoWrite) and leaves a correct session.
func TestRunCompletesScriptedTask(t *testing.T) {
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			srv := llmtest.New(t,
				llmtest.BashTurn("a", todoCmd("in_progress", "pending", "pending")),
				llmtest.BashTurn("b", "mkdir -p notes && printf 'alpha\\nbeta\\n' > notes/one.txt && ls notes"),
				llmtest.BashTurn("c", "read notes/one.txt", todoCmd("completed", "in_progress", "pending")),
				llmtest.BashTurn("d", `write notes/two.txt "copied: alpha beta"`),
				llmtest.BashTurn("e", "cat notes/two.txt", todoCmd("completed", "completed", "completed")),
				llmtest.TextTurn("Done: notes/two.txt holds the copy."),
			)
			e := newRunEnv(t, srv, format)
			r := e.run(t, "", "run", "Copy the notes")
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "Done: notes/two.txt holds the copy.") {
				t.Errorf("stdout = %q", r.stdout)
			}
			if data, err := os.ReadFile(filepath.Join(e.dir, "notes", "two.txt")); err != nil || string(data) != "copied: alpha beta" {
				t.Errorf("two.txt = %q, %v", data, err)
			}
			reqs := srv.Requests()
			if len(reqs) != 6 {
				t.Fatalf("requests = %d", len(reqs))
			}
			for _, r := range reqs {
				if r.Format != format {
					t.Fatalf("request #%d came in format %q", r.Index, r.Format)
				}
			}
			checks := map[string]string{"b-1": "one.txt", "c-1": "beta", "e-1": "copied: alpha beta"}
			for id, want := range checks {
				tr, ok := reqs[5].ToolResult(id)
				if !ok || tr.IsError || !strings.Contains(tr.Content, want) {
					t.Errorf("result %s = %+v, want it to contain %q", id, tr, want)
				}
			}
			if !strings.Contains(reqs[0].FirstUserText(), "Skill Search Priority") || !strings.HasSuffix(reqs[0].FirstUserText(), "Copy the notes") {
				t.Errorf("first user text = %q", reqs[0].FirstUserText())
			}

			store, list := e.sessions(t)
			if len(list) != 1 {
				t.Fatalf("sessions = %+v", list)
			}
			ent := list[0]
			if !strings.HasPrefix(ent.ID, "session-") || ent.Title != "Copy the notes" || ent.MessageCount != 14 || ent.Cwd != e.dir {
				t.Errorf("index entry = %+v", ent)
			}
			if ent.Usage.InputTokens == 0 || ent.Usage.RoundCount != 6 || !ent.Usage.Priced || ent.Usage.CostUSD <= 0 {
				t.Errorf("usage = %+v", ent.Usage)
			}
			// Every format's model here has a built-in price.
			if !ent.Usage.Priced || ent.Usage.UnpricedRounds != 0 || ent.Usage.CostUSD <= 0 {
				t.Errorf("cost = %v (priced %v, %d unpriced rounds)", ent.Usage.CostUSD, ent.Usage.Priced, ent.Usage.UnpricedRounds)
			}
			if f := srv.AuthFailures(); len(f) > 0 {
				t.Errorf("requests refused for their credentials: %v", f)
			}
			hist, err := store.History(ent.ID)
			if err != nil {
				t.Fatal(err)
			}
			var roles []string
			for _, m := range hist {
				roles = append(roles, string(m.Role))
			}
			want := "user assistant tool assistant tool assistant tool tool assistant tool assistant tool tool assistant"
			if strings.Join(roles, " ") != want {
				t.Errorf("roles = %v", roles)
			}
			if last := hist[len(hist)-1]; last.Text != "Done: notes/two.txt holds the copy." {
				t.Errorf("last message = %+v", last)
			}
		})
	}
}

func TestRunOutputFormats(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("x", "echo hi"), llmtest.TextTurn("The answer."))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "--output-format", "json", "question")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var res struct {
			Type, Subtype, Result string
			SessionID             string `json:"session_id"`
			StopReason            string `json:"stop_reason"`
			NumTurns              int    `json:"num_turns"`
			IsError               bool   `json:"is_error"`
			Usage                 struct {
				InputTokens int64 `json:"input_tokens"`
			}
		}
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("%v in %q", err, r.stdout)
		}
		if dec.More() {
			t.Errorf("more than one JSON value: %q", r.stdout)
		}
		if res.Type != "result" || res.Subtype != "success" || res.Result != "The answer." || !strings.HasPrefix(res.SessionID, "session-") ||
			res.NumTurns != 2 || res.StopReason != "end_turn" || res.IsError || res.Usage.InputTokens == 0 {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("x", "echo streamed"), llmtest.TextTurn("Fin."))
		e := newRunEnv(t, srv, llmtest.FormatOpenAI)
		r := e.run(t, "", "run", "--output-format", "stream-json", "question")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var types []string
		var result map[string]any
		var toolResult map[string]any
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		for sc.Scan() {
			var ev map[string]any
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			typ := ev["type"].(string)
			if st, ok := ev["subtype"].(string); ok {
				typ += "/" + st
			}
			types = append(types, typ)
			if tr, ok := ev["tool_use_result"].(map[string]any); ok {
				toolResult = tr
			}
			if ev["type"] == "result" {
				result = ev
			}
		}
		want := "system/init,assistant,user,assistant,result/success"
		if got := strings.Join(types, ","); got != want {
			t.Errorf("events %s, want %s", got, want)
		}
		if toolResult["command"] != "echo streamed" || !strings.Contains(toolResult["output"].(string), "streamed") || toolResult["is_error"] != false {
			t.Errorf("tool_use_result = %v", toolResult)
		}
		if result["result"] != "Fin." || result["num_turns"] != float64(2) {
			t.Errorf("result = %v", result)
		}
	})
	t.Run("bad format", func(t *testing.T) {
		e := newRunEnv(t, llmtest.New(t), llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "--output-format", "yaml", "x")
		if r.code != 2 || !strings.Contains(r.stderr, "text, json or stream-json") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
}

// `echo hi | synapse run` answers: stdin is the prompt when there is no
// argument; with an argument, piped stdin is appended as context; with
// /dev/null on stdin an argument alone is the prompt (nothing waits).
func TestRunPromptFromPipedStdin(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("hello there"), llmtest.TextTurn("looks fine"), llmtest.TextTurn("plain"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	r := e.run(t, "hi\n", "run")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "hello there" {
		t.Fatalf("echo hi | synapse run: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Requests()[0].FirstUserText(); !strings.HasSuffix(got, "\nhi") {
		t.Errorf("first user text = %q, want it to end with the piped prompt", got)
	}
	r = e.run(t, "+added line\n", "run", "review this")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "looks fine" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Requests()[1].FirstUserText(); !strings.HasSuffix(got, "review this\n\n+added line") {
		t.Errorf("stdin was not appended as context: %q", got)
	}
	c := exec.Command(synapseBin, "run", "just the argument")
	c.Dir, c.Env = e.dir, e.env // Stdin nil: /dev/null
	out, err := c.Output()
	if err != nil || strings.TrimSpace(string(out)) != "plain" {
		t.Fatalf("with /dev/null on stdin: %v, %q", err, out)
	}
}

func TestRunPromptFromStdinAndContinue(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("first answer"), llmtest.TextTurn("second answer"), llmtest.TextTurn("third answer"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	r := e.run(t, "prompt from stdin\n", "run", "-")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "first answer" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if got := srv.Requests()[0].FirstUserText(); !strings.HasSuffix(got, "\nprompt from stdin") {
		t.Errorf("first user text = %q", got)
	}
	_, list := e.sessions(t)
	id := list[0].ID

	r = e.run(t, "", "run", "--continue", "and then?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	req := srv.Requests()[1]
	if req.Turns() != 1 || !strings.Contains(req.FirstUserText(), "prompt from stdin") {
		t.Errorf("--continue did not send the earlier conversation: %+v", req.Messages)
	}
	r = e.run(t, "", "run", "--resume", strings.TrimPrefix(id, "session-")[:15], "once more")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if srv.Requests()[2].Turns() != 2 {
		t.Errorf("--resume did not send the earlier conversation")
	}
	if _, list = e.sessions(t); len(list) != 1 || list[0].MessageCount != 6 {
		t.Errorf("sessions = %+v", list)
	}

	r = e.run(t, "", "sessions")
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "prompt from stdin") {
		t.Errorf("sessions: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = e.run(t, "", "sessions", "--json")
	var listed []session.Entry
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || len(listed) != 1 || listed[0].ID != id {
		t.Errorf("sessions --json = %s (%v)", r.stdout, err)
	}

	r = e.run(t, "", "run", "--resume", "session-nope", "x")
	if r.code != 1 || !strings.Contains(r.stderr, "no session matches") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
	r = e.run(t, "", "run")
	if r.code != 2 || !strings.Contains(r.stderr, "no prompt") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

func TestRunFailuresExitNonZero(t *testing.T) {
	t.Run("provider error", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.ErrorTurn(401, "invalid x-api-key"))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "hi")
		if r.code != 1 || !strings.Contains(r.stderr, "synapse:") || r.stderr == "" {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
	})
	t.Run("provider error in stream-json", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.ErrorTurn(401, "invalid x-api-key"))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		r := e.run(t, "", "run", "--output-format", "stream-json", "hi")
		if r.code != 1 {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
		headlesstest.CheckStream(t, r.stdout)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var res headless.ResultEvent
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
			t.Fatal(err)
		}
		if !res.IsError || res.Subtype != "error_during_execution" || !strings.Contains(res.Error, "invalid x-api-key") ||
			!strings.HasPrefix(res.SessionID, "session-") || !strings.Contains(lines[0], `"subtype":"init"`) {
			t.Errorf("result = %+v\nfirst line %s", res, lines[0])
		}
	})
	t.Run("turn limit", func(t *testing.T) {
		srv := llmtest.New(t, llmtest.BashTurn("a", "true"), llmtest.BashTurn("b", "true"))
		e := newRunEnv(t, srv, llmtest.FormatAnthropic)
		e.env = append(e.env, "SYNAPSE_MAX_TOOL_ITERATIONS=2")
		r := e.run(t, "", "run", "--output-format", "json", "loop")
		if r.code != 1 || !strings.Contains(r.stderr, "SYNAPSE_MAX_TOOL_ITERATIONS") {
			t.Errorf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stdout, `"stop_reason":"max_turns"`) || !strings.Contains(r.stdout, `"subtype":"error_max_turns"`) {
			t.Errorf("stdout = %s", r.stdout)
		}
	})
}

// Ctrl+C / SIGTERM cancel the run: exit 130, nothing dangling on disk.
func TestRunInterruptExits130(t *testing.T) {
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// A sleep no other process runs, so we can tell it was killed.
			sleep := fmt.Sprintf("sleep %d.%d", 40+i, os.Getpid())
			srv := llmtest.New(t, llmtest.BashTurn("s", "touch started; "+sleep))
			e := newRunEnv(t, srv, llmtest.FormatAnthropic)
			args := []string{"run", "wait for it"}
			if sig == syscall.SIGTERM {
				args = append(args, "--output-format", "stream-json")
			}
			c := exec.Command(synapseBin, args...)
			c.Dir, c.Env = e.dir, e.env
			var out, errb bytes.Buffer
			c.Stdout, c.Stderr = &out, &errb
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// Wait until the command is running (it leaves a marker file).
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(filepath.Join(e.dir, "started")); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			_ = c.Process.Signal(sig)
			err := c.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit = %v\nstderr: %s", err, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("stderr = %s", errb.String())
			}
			if sig == syscall.SIGTERM {
				// stream-json ends the started call with an end event, cancelled.
				ended := false
				for _, line := range strings.Split(out.String(), "\n") {
					ended = ended || (strings.Contains(line, `"s-1"`) && strings.Contains(line, `"cancelled"`))
				}
				if !ended {
					t.Errorf("no cancelled end event for the started call:\n%s", out.String())
				}
				headlesstest.CheckStream(t, out.String())
			}
			// The cancelled command was killed, not left running.
			gone := false
			for end := time.Now().Add(10 * time.Second); !gone && time.Now().Before(end); {
				if gone = !processRunning(sleep); !gone {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if !gone {
				t.Errorf("%q still runs after the interrupt", sleep)
			}
			store, list := e.sessions(t)
			if len(list) != 1 {
				t.Fatalf("sessions = %+v", list)
			}
			hist, err := store.History(list[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(hist) != 1 || hist[0].Role != llm.RoleUser {
				t.Errorf("history after interrupt = %+v", hist)
			}
		})
	}
}

// processRunning reports whether a process with exactly this command line exists.
func processRunning(cmdline string) bool {
	want := strings.ReplaceAll(cmdline, " ", "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range dirs {
		data, err := os.ReadFile(p)
		if err == nil && strings.TrimRight(string(data), "\x00") == want {
			return true
		}
	}
	return false
}

// The JSON result's usage includes what the sub-agents spent (issue 5:
// usage rolled up through RecordUsage reaches synapse run --output-format json).
func TestRunJSONUsageIncludesSubagents(t *testing.T) {
	testutil.RequireBwrap(t)
	srv := llmtest.New(t)
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		sub := strings.Contains(req.System, "sub-agent of Synapse")
		switch {
		case !sub && req.Turns() == 0:
			turn := llmtest.BashTurn("p", `task:explore -p "look at the project" -d "look"`)
			turn.Usage = llmtest.Usage{InputTokens: 1, OutputTokens: 2, Exact: true}
			return turn
		case !sub:
			return llmtest.Turn{Text: "parent done", Usage: llmtest.Usage{InputTokens: 3, OutputTokens: 4, Exact: true}}
		case req.Turns() == 0:
			turn := llmtest.BashTurn("s", "ls")
			turn.Usage = llmtest.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 5, Exact: true}
			return turn
		default:
			return llmtest.Turn{Text: "explored", Usage: llmtest.Usage{InputTokens: 200, OutputTokens: 20, CacheCreationTokens: 7, Exact: true}}
		}
	})
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	r := e.run(t, "", "run", "--output-format", "json", "explore it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	var res struct {
		Result string
		Usage  headless.UsageEvent
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v in %q", err, r.stdout)
	}
	want := llm.Usage{InputTokens: 1 + 3 + 100 + 200, OutputTokens: 2 + 4 + 10 + 20, CacheReadTokens: 5, CacheCreationTokens: 7}
	if res.Result != "parent done" || !reflect.DeepEqual(res.Usage, headless.UsageOf(want)) {
		t.Errorf("result text %q usage %+v, want usage %+v", res.Result, res.Usage, want)
	}
	// The sub-agent really ran its command (the explore sandbox works).
	if got := srv.Requests(); len(got) != 4 {
		t.Errorf("requests = %d, want 4", len(got))
	}
	_, list := e.sessions(t)
	if len(list) != 1 || list[0].Usage.Totals() != want || list[0].Usage.RoundCount != 4 {
		t.Errorf("session usage = %+v, want %+v over 4 rounds", list, want)
	}

	// The same run in stream-json: the sub-agent's traffic carries the
	// parent call's id, and every tool_use has its tool_result.
	r = e.run(t, "", "run", "--output-format", "stream-json", "explore it")
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	headlesstest.CheckStream(t, r.stdout)
	var subUse, subResult, started, finished bool
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev struct {
			Type, Subtype string
			Parent        *string `json:"parent_tool_use_id"`
			Message       struct{ Content []headless.Block }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		fromSub := ev.Parent != nil && *ev.Parent == "p-1"
		for _, b := range ev.Message.Content {
			subUse = subUse || (fromSub && b.Type == "tool_use" && b.ID == "s-1" && string(b.Input) == `{"command":"ls"}`)
			subResult = subResult || (fromSub && b.Type == "tool_result" && b.ToolUseID == "s-1")
		}
		started = started || (fromSub && ev.Subtype == "task_started")
		finished = finished || (fromSub && ev.Subtype == "task_finished")
	}
	if !subUse || !subResult || !started || !finished {
		t.Errorf("sub-agent events with parent_tool_use_id p-1: use %v result %v started %v finished %v\n%s", subUse, subResult, started, finished, r.stdout)
	}
}

// Commands chosen by the model never see the agent's own credentials (the
// provider keys, and every variable named in settings.json "env"), through
// the Bash tool, `bash <cmd>` or `synapse sandbox exec`; the agent still
// authenticates with them.
func TestShellDoesNotSeeAgentCredentials(t *testing.T) {
	testutil.RequireBwrap(t)
	const probe = `echo "a=$ANTHROPIC_API_KEY t=$ANTHROPIC_AUTH_TOKEN o=$OPENAI_API_KEY g=$MY_GATEWAY_KEY k=$KEEP_ME"`
	srv := llmtest.New(t,
		llmtest.BashTurn("x", probe, "bash "+probe, "env | grep -c -e llmtest-key -e secret || true"),
		llmtest.TextTurn("checked"),
	)
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	e.env = append(e.env, "OPENAI_API_KEY=sk-oai-secret", "MY_GATEWAY_KEY=gw-secret", "KEEP_ME=visible")
	if err := os.MkdirAll(e.home, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"env": {"MY_GATEWAY_KEY": "gw-secret"}}`
	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run(t, "", "run", "check the environment")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if got := reqs[0].Header.Get("X-Api-Key"); got != "llmtest-key" {
		t.Errorf("the agent sent x-api-key %q, want llmtest-key", got)
	}
	for id, want := range map[string]string{"x-1": "a= t= o= g= k=visible", "x-2": "a= t= o= g= k=visible", "x-3": "0"} {
		tr, ok := reqs[1].ToolResult(id)
		if !ok || strings.TrimSpace(tr.Content) != want {
			t.Errorf("result %s = %+v, want %q", id, tr, want)
		}
	}

	c := exec.Command(synapseBin, "sandbox", "exec", "--", "sh", "-c", probe)
	c.Dir, c.Env = e.dir, e.env
	out, err := c.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "a= t= o= g= k=visible" {
		t.Errorf("synapse sandbox exec saw: %q (%v)", out, err)
	}
}

// --input-format stream-json: one turn per user message on stdin, in one
// session (one init event, one result per turn); a bad line is skipped with
// a clear message; --include-partial-messages adds stream_event deltas.
func TestRunStreamJSONInput(t *testing.T) {
	srv := llmtest.New(t, llmtest.TextTurn("first"), llmtest.TextTurn("second"))
	e := newRunEnv(t, srv, llmtest.FormatAnthropic)
	in := `{"type":"user","message":{"role":"user","content":"one"}}` + "\n" +
		"garbage\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"two"}]}}` + "\n"
	r := e.run(t, in, "run", "--input-format", "stream-json", "--output-format", "stream-json", "--include-partial-messages")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "stdin line 2 skipped: not a JSON object") {
		t.Errorf("stderr = %s", r.stderr)
	}
	var inits, deltas int
	var results []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch ev["type"] {
		case "system":
			if ev["subtype"] == "init" {
				inits++
			}
		case "stream_event":
			if e := ev["event"].(map[string]any); e["type"] == "content_block_delta" {
				deltas++
			}
		case "result":
			results = append(results, ev["result"].(string))
		}
	}
	if inits != 1 || deltas != 2 || strings.Join(results, ",") != "first,second" {
		t.Errorf("inits %d, deltas %d, results %v\n%s", inits, deltas, results, r.stdout)
	}
	if req := srv.Requests()[1]; req.Turns() != 1 || len(req.Messages) != 3 || !strings.Contains(req.LastUserText(), "two") {
		t.Errorf("second turn did not continue the conversation: %d turns", req.Turns())
	}
	for _, bad := range [][]string{
		{"run", "--input-format", "stream-json", "x"},
		{"run", "--input-format", "stream-json"},
		{"run", "--include-partial-messages", "x"},
		{"run", "--input-format", "yaml", "x"},
	} {
		if r := e.run(t, "", bad...); r.code != 2 || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q", bad, r.code, r.stderr)
		}
	}
}

// On the Responses wire the model's encrypted reasoning goes back with the
// next request of the turn, is kept in the session, and goes back again
// when the session is continued; the usage (cached input apart) is priced.
func TestRunResponsesKeepsReasoning(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Thinking: "List the files first.", Signature: "ENC-1", ToolCalls: []llmtest.ToolCall{llmtest.BashCall("r1", "echo listed")},
			Usage: llmtest.Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000, OutputTokens: 100_000, Exact: true}},
		llmtest.TextTurn("Listed."),
		llmtest.TextTurn("Again."),
	)
	e := newRunEnv(t, srv, llmtest.FormatResponses)
	if r := e.run(t, "", "run", "list"); r.code != 0 || !strings.Contains(r.stdout, "Listed.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := e.run(t, "", "run", "--continue", "again"); r.code != 0 || !strings.Contains(r.stdout, "Again.") {
		t.Fatalf("--continue: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	want := []llmtest.Thinking{{Text: "List the files first.", Encrypted: "ENC-1"}}
	for _, i := range []int{1, 2} {
		if got := reqs[i].Messages[1].Thinking; len(reqs[i].Messages) < 2 || !reflect.DeepEqual(got, want) {
			t.Errorf("request #%d sent reasoning %+v, want %+v", i, got, want)
		}
	}
	_, list := e.sessions(t)
	if len(list) != 1 {
		t.Fatalf("sessions = %+v", list)
	}
	// gpt-5: $1.25 a million input tokens, $0.125 cached, $10 output.
	u := list[0].Usage
	if u.CacheReadTokens != 1_000_000 || !u.Priced || u.CostUSD < 2.375 || u.CostUSD > 2.5 {
		t.Errorf("usage %+v: want the first request priced at $2.375 plus a little for the others", u)
	}
}

// Gemini 2.5 gives its function calls no ids: synapse run still pairs each
// result with its call (by name and order, the ids it made up never sent),
// and sends the call back with the thought signature it came with.
func TestRunGeminiCallsWithoutIDs(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Turn{Signature: "state-1", ToolCalls: []llmtest.ToolCall{
			{Name: "Bash", Input: map[string]any{"command": "echo first"}},
			{Name: "Bash", Input: map[string]any{"command": "echo second"}}}},
		llmtest.TextTurn("Both ran."))
	e := newRunEnv(t, srv, llmtest.FormatGemini)
	r := e.run(t, "", "run", "run two commands")
	if r.code != 0 || !strings.Contains(r.stdout, "Both ran.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	req := srv.Requests()[1]
	var calls []llmtest.ReceivedCall
	for _, m := range req.Messages {
		calls = append(calls, m.ToolCalls...)
	}
	if len(calls) != 2 || calls[0].ID != "" || calls[1].ID != "" || calls[0].Signature == "" || calls[1].Signature != "" {
		t.Fatalf("calls sent back: %+v", calls)
	}
	res := req.LastToolResults()
	if len(res) != 2 || strings.TrimSpace(res[0].Content) != "first" || strings.TrimSpace(res[1].Content) != "second" || res[0].ToolCallID != "" {
		t.Errorf("results: %+v", res)
	}
}
