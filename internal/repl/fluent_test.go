package repl

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/tool"
)

// /resume offers this project's sessions; --all every project's; --latest
// the most recent other session of the project; the picker takes a number
// or an id prefix; a near-miss option gets a hint.
func TestResumePerProject(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sessions := fakeSessions{
		{ID: "session-b-newest", Title: "other project", Cwd: "/elsewhere", UpdatedAt: now, MessageCount: 2},
		{ID: "session-cur", Title: "current", Cwd: "/work", UpdatedAt: now.Add(-time.Minute), MessageCount: 2},
		{ID: "session-a-older", Title: "this project, older", Cwd: "/work", UpdatedAt: now.Add(-time.Hour), MessageCount: 2},
		{ID: "session-a-oldest", Title: "this project, oldest", Cwd: "/work/", UpdatedAt: now.Add(-2 * time.Hour), MessageCount: 2},
	}
	tests := []struct {
		name, input string
		wantResumed []string
		want, not   []string
	}{
		{"the list is this project's", "/resume\n\n", nil,
			[]string{"Recent sessions in project /work", "1. session-a-older", "2. session-a-oldest", "Cancelled."},
			[]string{"session-b-newest", "session-cur  current"}},
		{"--all lists every project's", "/resume --all\n\n", nil,
			[]string{"1. session-b-newest  other project", "/elsewhere", "2. session-a-older"}, nil},
		{"--latest takes the most recent other session of the project", "/resume --latest\n", []string{"session-a-older"}, nil, nil},
		{"the picker takes a number", "/resume\n2\n", []string{"session-a-oldest"}, nil, nil},
		{"the picker takes an id prefix", "/resume\na-older\n", []string{"session-a-older"}, nil, nil},
		{"--last gets a hint", "/resume --last\n", nil, []string{"unknown option --last: did you mean --latest?"}, nil},
		{"a number out of range", "/resume\n7\n", nil, []string{"7 is not a number from 1 to 2"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa := &fakeAgent{model: "m", sessID: "session-cur"}
			out, _ := runPiped(t, fa, tt.input, func(o *Options) {
				o.Sessions = sessions
				o.Now = func() time.Time { return now }
			})
			if fmt.Sprint(fa.resumed) != fmt.Sprint(tt.wantResumed) {
				t.Errorf("resumed %q, want %q\n%s", fa.resumed, tt.wantResumed, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// Issue 27: a session whose history file is gone is listed as such (it can
// still be picked, and starts over empty), but /resume --latest passes over
// it and over any session without messages: "latest" means a conversation.
func TestResumeLatestSkipsEmptySessions(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	sessions := fakeSessions{
		{ID: "session-gone", Title: "history deleted", Cwd: "/work", UpdatedAt: now, MessageCount: 4, HistoryMissing: true},
		{ID: "session-none", Title: "no messages", Cwd: "/work", UpdatedAt: now.Add(-time.Minute)},
		{ID: "session-kept", Title: "a conversation", Cwd: "/work", UpdatedAt: now.Add(-time.Hour), MessageCount: 2},
	}
	fa := &fakeAgent{model: "m", sessID: "session-cur"}
	out, _ := runPiped(t, fa, "/resume --latest\n/resume\n\n", func(o *Options) {
		o.Sessions = sessions
		o.Now = func() time.Time { return now }
	})
	if fmt.Sprint(fa.resumed) != "[session-kept]" {
		t.Errorf("--latest resumed %q, want session-kept\n%s", fa.resumed, out)
	}
	if !strings.Contains(out, "1. session-gone  history deleted  (just now, history missing)") {
		t.Errorf("the picker does not mark the session without history:\n%s", out)
	}

	fa = &fakeAgent{model: "m", sessID: "session-cur"}
	out, _ = runPiped(t, fa, "/resume --latest\n", func(o *Options) {
		o.Sessions = sessions[:2]
		o.Now = func() time.Time { return now }
	})
	if len(fa.resumed) != 0 || !strings.Contains(out, "No other saved session has a history to resume") {
		t.Errorf("--latest with only empty sessions resumed %q:\n%s", fa.resumed, out)
	}
}

// Issue 27: /resume names the project sessions are matched on (the
// repository), not the directory the REPL runs in.
func TestResumeNamesTheProject(t *testing.T) {
	repo := t.TempDir()
	src := filepath.Join(repo, "src")
	for _, d := range []string{filepath.Join(repo, ".git"), src} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	fa := &fakeAgent{model: "m", sessID: "session-cur"}
	out, _ := runPiped(t, fa, "/resume\n", func(o *Options) {
		o.Cwd = src
		o.Sessions = fakeSessions{{ID: "session-cur", Cwd: repo, MessageCount: 2}}
	})
	if !strings.Contains(out, "No other saved session in project "+repo+";") {
		t.Errorf("/resume without other sessions does not name the project:\n%s", out)
	}
	out, _ = runPiped(t, fa, "/resume\n\n", func(o *Options) {
		o.Cwd = src
		o.Sessions = fakeSessions{{ID: "session-top", Cwd: repo, MessageCount: 2}}
	})
	if !strings.Contains(out, "Recent sessions in project "+repo+" (/resume --all") {
		t.Errorf("the /resume list does not name the project:\n%s", out)
	}
}

func bash(id, cmd string) llm.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return llm.ToolCall{ID: id, Name: "Bash", Input: in}
}

// A resumed session replays its last turns: prompts, answers and tool
// lines, folded; escape sequences from the file never reach the terminal.
func TestResumeReplaysTranscript(t *testing.T) {
	long := strings.Repeat("answer line\n", 10)
	hist := []llm.Message{
		{Role: llm.RoleUser, Text: "first prompt, too old to replay"},
		{Role: llm.RoleAssistant, Text: "old answer"},
		{Role: llm.RoleUser, Text: "list the files"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{bash("1", "ls -la"), bash("2", "echo \x1b[31mred"), bash("3", "wc -l *"), bash("4", "cat a"), bash("5", "cat b")}},
		{Role: llm.RoleTool, ToolCallID: "1", Text: "a b"},
		{Role: llm.RoleAssistant, Text: long},
		{Role: llm.RoleUser, Text: "second"},
		{Role: llm.RoleAssistant, Text: "short answer"},
		{Role: llm.RoleUser, Text: "third"},
		{Role: llm.RoleAssistant, Text: "last answer"},
	}
	fa := &fakeAgent{model: "m", sessID: "cur", history: hist}
	out, _ := runPiped(t, fa, "/resume --latest\n", func(o *Options) {
		o.Sessions = fakeSessions{{ID: "session-x", Cwd: "/work", MessageCount: 10}}
	})
	// The banner replays too (the agent starts with this history), then /resume.
	if n := strings.Count(out, "── last 3 turns of this session ──"); n != 2 {
		t.Errorf("replayed %d times, want 2:\n%s", n, out)
	}
	for _, w := range []string{"› list the files", "  ▸ ls -la", "  ▸ echo red", "  ▸ wc -l *", "  ▸ … 2 more commands",
		"answer line", "… (4 more lines)", "› second", "short answer", "› third", "last answer"} {
		if !strings.Contains(out, w) {
			t.Errorf("transcript lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "first prompt") || strings.Contains(out, "\x1b[31m") || strings.Contains(out, "cat a") {
		t.Errorf("transcript shows too much or raw escapes:\n%q", out)
	}
}

// Slash commands match in any case, /h /? /q are aliases, and an unknown
// command suggests the nearest.
func TestSlashCaseAliasesSuggestions(t *testing.T) {
	tests := []struct {
		input string
		want  string
		code  int
	}{
		{"/HELP\n", "Commands:", 0},
		{"/h\n", "Commands:", 0},
		{"/?\n", "Commands:", 0},
		{"/Cost\n", "Tokens: 0 in, 0 out", 0},
		{"/resum\n", "unknown command /resum: did you mean /resume?", 0},
		{"/hlep\n", "did you mean /help?", 0},
		{"/zzzzzz\n", "unknown command /zzzzzz: type /help", 0},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.input), func(t *testing.T) {
			out, code := runPiped(t, &fakeAgent{model: "m"}, tt.input+"after\n", nil)
			if !strings.Contains(out, tt.want) {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if code != tt.code {
				t.Errorf("exit %d", code)
			}
		})
	}
	for _, in := range []string{"/q\n", "/Q\n", "/EXIT\n"} {
		fa := &fakeAgent{model: "m"}
		if _, code := runPiped(t, fa, in+"not run\n", nil); code != 0 || len(fa.Inputs()) != 0 {
			t.Errorf("%q: exit %d, turns %q; want it to quit", in, code, fa.Inputs())
		}
	}
}

func TestClosest(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"res", "resume"}, {"modle", "model"}, {"hlep", "help"}, {"last", "latest"}, {"nope", ""}, {"xyzzy", ""}, {"", ""},
	} {
		if got := closest(tt.in, append(commandNames(), "latest")); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	_ = session.Latest
}

// Tab completes slash commands and paths (also after @); @path mentions
// reach the model.
func TestCompleteAndMentions(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"notes-alpha.txt", "notes-beta.txt", "solo.go"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newREPL(t, Options{In: strings.NewReader(""), Renderer: render.New(render.Options{}), Agent: &fakeAgent{}, Cwd: dir}, nil)
	tests := []struct{ line, want string }{
		{"/res", "/resume "},
		{"/RES", "/resume "},
		{"/co", "/co"}, // /cost, /context, /compact: listed, not chosen
		{"cat so", "cat solo.go "},
		{"cat notes-", "cat notes-"},
		{"cat notes-a", "cat notes-alpha.txt "},
		{"look at @sr", "look at @src/"},
	}
	for _, tt := range tests {
		got, pos := r.complete(tt.line, len(tt.line))
		if got != tt.want || pos != len(tt.want) {
			t.Errorf("complete(%q) = %q, %d; want %q", tt.line, got, pos, tt.want)
		}
	}

	got := r.withMentions("compare @solo.go with @src, not @missing.txt.")
	if !strings.HasSuffix(got, mentionsNote+"solo.go, src]") || withoutMentions(got) != "compare @solo.go with @src, not @missing.txt." {
		t.Errorf("withMentions = %q", got)
	}
	if got := r.withMentions("mail me@example.com"); got != "mail me@example.com" {
		t.Errorf("a non-mention changed the prompt: %q", got)
	}
}

// On a narrow terminal a question too wide to leave room for the answer
// goes on a row of its own and the answer is typed after a bare prompt;
// a mode's prompt too wide gives way to the bare one as well.
func TestPTYNarrowQuestionAndPrompt(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	fa := &fakeAgent{model: "m", sessID: "session-cur"}
	p := startPTY(t, fa, func(o *Options) {
		o.Sessions = fakeSessions{
			{ID: "session-a", Title: "one", Cwd: "/work", UpdatedAt: now.Add(-time.Hour)},
			{ID: "session-b", Title: "two", Cwd: "/work", UpdatedAt: now.Add(-2 * time.Hour)},
		}
		o.Now = func() time.Time { return now }
		o.SetMode = func(tool.Mode) error { return nil }
	})
	p.repl.SetSize(40, 24)
	p.send("/resume\r")
	p.waitScreen("the question on its own row, the answer after a bare prompt", func(s *screen) bool {
		lines := s.lines()
		return s.cursorLine() == "›" && s.row > 0 && strings.HasSuffix(lines[s.row-1], "to cancel)?")
	})
	p.send("2")
	p.waitScreen("the answer typed on the prompt's row", func(s *screen) bool { return s.cursorLine() == "› 2" })
	p.send("\r")
	p.waitFor("Resumed session session-b")
	p.repl.SetSize(24, 24)
	p.send("\x1b[Z") // Shift+Tab: accept-edits, too wide for 24 columns
	p.waitScreen("the bare prompt", func(s *screen) bool { return s.cursorLine() == "›" })
	p.send("abc")
	p.waitScreen("typing after it", func(s *screen) bool { return s.cursorLine() == "› abc" })
	p.repl.SetSize(80, 24)
	p.waitScreen("the mode's prompt back when wide enough", func(s *screen) bool { return s.cursorLine() == "accept-edits › abc" })
}

// /cost before any request shows the same figures, all zero, and $0.00;
// input counts cache reads and writes too.
func TestCostEmptySessionAndCachedInput(t *testing.T) {
	out, _ := runPiped(t, &fakeAgent{model: "m"}, "/cost\n", nil)
	for _, w := range []string{"Tokens: 0 in, 0 out", "Cache: 0 read, 0 written, hit rate n/a", "Requests: 0", "Cost: $0.00"} {
		if !strings.Contains(out, w) {
			t.Errorf("empty session: output lacks %q:\n%s", w, out)
		}
	}
	fa := &fakeAgent{model: "m", usage: &session.Usage{InputTokens: 10, CacheReadTokens: 900, CacheCreationTokens: 90, OutputTokens: 5, RoundCount: 1}}
	if out, _ := runPiped(t, fa, "/cost\n", nil); !strings.Contains(out, "Tokens: 1,000 in, 5 out") {
		t.Errorf("cached input left out:\n%s", out)
	}
}
