package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) add(err error) { w.mu.Lock(); w.list = append(w.list, err.Error()); w.mu.Unlock() }
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.list...)
}

func newStore(t *testing.T) (*Store, *warnings) {
	w := &warnings{}
	return NewStore(t.TempDir(), nil, w.add), w
}

// peek reads a session as Open does, without its writer lock, for a
// test to look at what its writer has put on disk.
func peek(t *testing.T, s *Store, id string) (*Session, []llm.Message) {
	t.Helper()
	e, err := s.resolve(id)
	if err != nil {
		t.Fatal(err)
	}
	ss, msgs, err := s.load(e)
	if err != nil {
		t.Fatal(err)
	}
	return ss, msgs
}

func user(s string) llm.Message      { return llm.Message{Role: llm.RoleUser, Text: s} }
func assistant(s string) llm.Message { return llm.Message{Role: llm.RoleAssistant, Text: s} }

func TestNothingOnDiskUntilFirstMessage(t *testing.T) {
	s, _ := newStore(t)
	ss := s.Create("/w")
	if !strings.HasPrefix(ss.ID(), IDPrefix) {
		t.Fatalf("id = %q", ss.ID())
	}
	ss.AddUsage(llm.Usage{InputTokens: 1}, "m")
	if err := ss.Flush(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 0 {
		t.Fatalf("files before the first message: %v", entries)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Fatalf("listed before the first message: %v", list)
	}
	if err := ss.Append(user("hello there")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	e := list[0]
	if e.ID != ss.ID() || e.Title != "hello there" || e.MessageCount != 1 || e.Cwd != "/w" || e.Model != "m" || e.Usage.InputTokens != 1 {
		t.Errorf("entry = %+v", e)
	}
}

func TestHistoryLinesAndResume(t *testing.T) {
	s, w := newStore(t)
	ss := s.Create("/w")
	ss.SetTitle("Fix the flaky test in the parser package, then run every test and report the failures")
	call := llm.ToolCall{ID: "c1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
	steps := [][]llm.Message{
		{user("wrapped text")},
		{{Role: llm.RoleAssistant, Text: "looking", ToolCalls: []llm.ToolCall{call}}, {Role: llm.RoleTool, ToolCallID: "c1", Text: "a\nb"}},
		{assistant("done")},
	}
	for _, st := range steps {
		if err := ss.Append(st...); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(s.Dir, ss.ID()+".jsonl"))
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("lines = %d, want 4:\n%s", n, data)
	}
	for _, id := range []string{ss.ID(), ss.ID()[:len(ss.ID())-2], "latest", strings.TrimPrefix(ss.ID(), IDPrefix)} {
		got, msgs, err := s.Open(id)
		if err != nil {
			t.Fatalf("open %q: %v", id, err)
		}
		if got.ID() != ss.ID() || len(msgs) != 4 || msgs[1].ToolCalls[0].ID != "c1" || msgs[2].Text != "a\nb" {
			t.Errorf("open %q: %+v", id, msgs)
		}
		got.Close()
		e := got.Entry()
		if !strings.HasSuffix(e.Title, "…") || len([]rune(e.Title)) != 60 || e.MessageCount != 4 {
			t.Errorf("entry = %+v", e)
		}
	}
	if len(w.all()) != 0 {
		t.Errorf("warnings: %v", w.all())
	}
}

func TestResolveErrors(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.Resolve("latest"); err == nil || !strings.Contains(err.Error(), "no saved sessions") {
		t.Errorf("latest on empty: %v", err)
	}
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tick := 0
	s.now = func() time.Time { tick++; return base.Add(time.Duration(tick) * time.Second) }
	a, b := s.Create("/"), s.Create("/")
	for _, ss := range []*Session{a, b} {
		if err := ss.Append(user("x")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Resolve("session-2025"); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("ambiguous: %v", err)
	}
	if _, err := s.Resolve("session-1999"); err == nil || !strings.Contains(err.Error(), "synapse sessions") {
		t.Errorf("missing: %v", err)
	}
	if id, _ := s.Resolve("latest"); id != b.ID() {
		t.Errorf("latest = %s, want %s", id, b.ID())
	}
	if err := a.Append(user("y")); err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Resolve("latest"); id != a.ID() {
		t.Errorf("latest after update = %s, want %s", id, a.ID())
	}
}

func TestCorruptLinesAreSkippedAndReported(t *testing.T) {
	s, w := newStore(t)
	ss := s.Create("/w")
	if err := ss.Append(user("one"), assistant("two")); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	hist := filepath.Join(s.Dir, ss.ID()+".jsonl")
	f, _ := os.OpenFile(hist, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{not json\n{\"role\":\"alien\"}\n")
	f.WriteString(`{"role":"user","text":"three"}` + "\n")
	f.WriteString(`{"role":"assistant","te`) // torn last line, no newline
	f.Close()

	got, msgs, err := s.Open(ss.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 || msgs[2].Text != "three" {
		t.Fatalf("msgs = %+v", msgs)
	}
	if n := len(w.all()); n != 3 {
		t.Errorf("warnings = %v", w.all())
	}
	// Appending after a torn line starts a new line: nothing else is lost.
	if err := got.Append(assistant("four")); err != nil {
		t.Fatal(err)
	}
	_, msgs = peek(t, s, ss.ID())
	if len(msgs) != 4 || msgs[3].Text != "four" {
		t.Fatalf("after append: %+v", msgs)
	}

	// A corrupt index line loses only that line; the session is still listed from its history.
	idx := filepath.Join(s.Dir, IndexFile)
	data, _ := os.ReadFile(idx)
	os.WriteFile(idx, append([]byte("garbage line\n"), data...), 0o600)
	other := s.Create("/v")
	if err := other.Append(user("other")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v", list, err)
	}
	found := false
	for _, x := range w.all() {
		found = found || strings.Contains(x, "index") && strings.Contains(x, "corrupt")
	}
	if !found {
		t.Errorf("corrupt index not reported: %v", w.all())
	}

	// A wholly unreadable index: sessions are rebuilt from their history files.
	os.WriteFile(idx, []byte("\x00\x01{{{"), 0o600)
	list, err = s.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("list after index loss = %+v, %v", list, err)
	}
	for _, e := range list {
		if e.Title == "" || e.MessageCount == 0 {
			t.Errorf("rebuilt entry = %+v", e)
		}
	}
}

func TestSanitize(t *testing.T) {
	call := func(id string) llm.ToolCall { return llm.ToolCall{ID: id, Name: "Bash", Input: json.RawMessage(`{}`)} }
	res := func(id string) llm.Message { return llm.Message{Role: llm.RoleTool, ToolCallID: id, Text: "r" + id} }
	cases := []struct {
		name string
		in   []llm.Message
		want string
	}{
		{"complete kept", []llm.Message{user("u"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("a"), call("b")}}, res("b"), res("a"), assistant("x")},
			"user:u|assistant:[a b]|tool:a|tool:b|assistant:x"},
		{"missing result drops calls", []llm.Message{user("u"), {Role: llm.RoleAssistant, Text: "t", ToolCalls: []llm.ToolCall{call("a"), call("b")}}, res("a")},
			"user:u|assistant:t"},
		{"no text, dropped whole", []llm.Message{user("u"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("a")}}, user("v")},
			"user:u|user:v"},
		{"orphan result dropped", []llm.Message{user("u"), res("z"), assistant("x")}, "user:u|assistant:x"},
		{"foreign result dropped", []llm.Message{user("u"), {Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("a")}}, res("a"), res("q")}, "user:u|assistant:[a]|tool:a"},
		// A lost first line (the user's prompt) must not leave a history that
		// starts with the assistant: providers refuse it.
		{"starts with the assistant", []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("a")}}, res("a"), assistant("x")},
			"user:" + LostStartText + "|assistant:[a]|tool:a|assistant:x"},
		{"starts with an orphan result", []llm.Message{res("z"), assistant("x"), user("u")}, "user:" + LostStartText + "|assistant:x|user:u"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var parts []string
			for _, m := range Sanitize(c.in) {
				switch {
				case len(m.ToolCalls) > 0:
					ids := []string{}
					for _, x := range m.ToolCalls {
						ids = append(ids, x.ID)
					}
					parts = append(parts, fmt.Sprintf("%s:%v", m.Role, ids))
				case m.Role == llm.RoleTool:
					parts = append(parts, "tool:"+m.ToolCallID)
				default:
					parts = append(parts, string(m.Role)+":"+m.Text)
				}
			}
			if got := strings.Join(parts, "|"); got != c.want {
				t.Errorf("got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestUsageRoundsBoundedAndPriced(t *testing.T) {
	s, _ := newStore(t)
	s.Pricing = Pricing{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	ss := s.Create("/")
	if err := ss.Append(user("x")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < MaxRounds+20; i++ {
		ss.AddUsage(llm.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 10, CacheCreationTokens: 20}, "claude-sonnet-4-5-20250929")
	}
	ss.AddUsage(llm.Usage{InputTokens: 5}, "unknown-model")
	if err := ss.Flush(); err != nil {
		t.Fatal(err)
	}
	u := ss.Usage()
	if len(u.Rounds) != MaxRounds || u.RoundCount != MaxRounds+21 || u.InputTokens != int64(1000*(MaxRounds+20)+5) {
		t.Errorf("rounds=%d count=%d input=%d", len(u.Rounds), u.RoundCount, u.InputTokens)
	}
	perRound := (1000*3 + 100*15 + 10*0.3 + 20*3.75) / 1e6
	if want := perRound * float64(MaxRounds+20); !u.Priced || u.UnpricedRounds != 1 || abs(u.CostUSD-want) > 1e-9 {
		t.Errorf("cost = %v (priced %v, unpriced %d), want %v", u.CostUSD, u.Priced, u.UnpricedRounds, want)
	}
	if u.Model != "unknown-model" {
		t.Errorf("model = %q", u.Model)
	}
	// Reloaded from disk.
	got, _ := peek(t, s, ss.ID())
	if g := got.Usage(); g.RoundCount != u.RoundCount || len(g.Rounds) != MaxRounds || abs(g.CostUSD-u.CostUSD) > 1e-9 {
		t.Errorf("reloaded usage = %+v", g)
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestLoadPricing(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, body string
		wantErr    bool
		wantInput  float64
	}{
		{"wrapped", `{"models":{"m":{"input":3,"output":15}}}`, false, 3},
		{"bare", `{"m":{"input":2,"output":10}}`, false, 2},
		{"broken", `{"models":`, true, 0},
		// A mistake inside "models" is reported, not read as a bare map
		// that prices a model called "models".
		{"wrong type inside models", `{"models":{"m":{"input":"three","output":15}}}`, true, 0},
		{"models not an object", `{"models":[1,2]}`, true, 0},
		{"negative price", `{"models":{"m":{"input":-3}}}`, true, 0},
		{"not an object", `[1,2]`, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".json")
			os.WriteFile(p, []byte(c.body), 0o600)
			pr, err := LoadPricing(p)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v", err)
			}
			if err == nil && pr["m"].Input != c.wantInput {
				t.Errorf("pricing = %+v", pr)
			}
		})
	}
	if pr, err := LoadPricing(filepath.Join(dir, "missing.json")); err != nil || pr != nil {
		t.Errorf("missing file: %v %v", pr, err)
	}
}

// The index is shared by every synapse process: concurrent writers from
// several processes must not lose each other's entries.
func TestIndexLockAcrossProcesses(t *testing.T) {
	if dir := os.Getenv("SESSION_LOCK_HELPER_DIR"); dir != "" {
		s := NewStore(dir, nil, nil)
		for i := 0; i < 10; i++ {
			if err := s.Create("/").Append(user(fmt.Sprintf("p%s-%d", os.Getenv("SESSION_LOCK_HELPER_N"), i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		return
	}
	dir := t.TempDir()
	const procs = 4
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for n := 0; n < procs; n++ {
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestIndexLockAcrossProcesses$")
			cmd.Env = append(os.Environ(), "SESSION_LOCK_HELPER_DIR="+dir, fmt.Sprintf("SESSION_LOCK_HELPER_N=%d", n))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("%v: %s", err, out)
			}
		}(n)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	entries, err := NewStore(dir, nil, func(err error) { t.Error(err) }).readIndex()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != procs*10 {
		t.Errorf("index has %d entries, want %d", len(entries), procs*10)
	}
}

// Delete drops exactly one session: its index entry, history and usage
// files; the other sessions stay listed and an update of them still works.
func TestDelete(t *testing.T) {
	s, _ := newStore(t)
	var ids []string
	for _, text := range []string{"first", "second", "third"} {
		ss := s.Create("/w")
		ss.AddUsage(llm.Usage{InputTokens: 1}, "m")
		if err := ss.Append(user(text)); err != nil {
			t.Fatal(err)
		}
		if err := ss.Close(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ss.ID())
	}
	if err := s.Delete(ids[1]); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range list {
		got = append(got, e.ID)
	}
	slices.Sort(got)
	want := []string{ids[0], ids[2]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
	for _, p := range []string{ids[1] + ".jsonl", ids[1] + ".usage.json"} {
		if _, err := os.Stat(filepath.Join(s.Dir, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there (%v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(s.Dir, ids[0]+".jsonl")); err != nil {
		t.Errorf("another session's history is gone: %v", err)
	}
	// Updating a remaining session replaces its entry, adding none.
	ss, _, err := s.Open(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.Append(assistant("more")); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 2 {
		t.Errorf("after an update: %d entries, want 2", len(list))
	}
	if err := s.Delete(ids[1]); err != nil {
		t.Errorf("deleting again: %v", err)
	}
}

// A resumed session whose tool input was stored as a JSON string (some
// writers encode the arguments twice) comes back with an object input, which
// providers accept; other non-object inputs become {}.
func TestResumeNormalisesStringToolInput(t *testing.T) {
	tests := []struct{ stored, want string }{
		{`"{\"command\":\"ls -la\"}"`, `{"command":"ls -la"}`},
		{`" {\"command\":\"pwd\"} "`, `{"command":"pwd"}`},
		{`"\"{\\\"command\\\":\\\"id\\\"}\""`, `{"command":"id"}`},
		{`{"command":"ls"}`, `{"command":"ls"}`},
		{`null`, `{}`},
		{`"ls -la"`, `{}`},
		{`[1,2]`, `{}`},
	}
	for _, tt := range tests {
		s, w := newStore(t)
		id := IDPrefix + "20260101-000000-abcdef"
		lines := []string{
			`{"role":"user","text":"list","ts":"2026-01-01T00:00:00Z"}`,
			`{"role":"assistant","tool_calls":[{"id":"c1","name":"Bash","input":` + tt.stored + `}],"ts":"2026-01-01T00:00:01Z"}`,
			`{"role":"tool","tool_call_id":"c1","text":"a","ts":"2026-01-01T00:00:02Z"}`,
		}
		if err := os.WriteFile(filepath.Join(s.Dir, id+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, msgs, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 3 || len(msgs[1].ToolCalls) != 1 {
			t.Fatalf("stored %s: messages %+v (warnings %v)", tt.stored, msgs, w.all())
		}
		if got := string(msgs[1].ToolCalls[0].Input); got != tt.want {
			t.Errorf("stored %s: input %s, want %s", tt.stored, got, tt.want)
		}
		// On the wire the resumed call goes out as an object, which the API accepts.
		srv := llmtest.New(t, llmtest.TextTurn("ok"))
		p := anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL()})
		if _, err := p.Stream(context.Background(), llm.Request{Model: "claude-test", MaxTokens: 10, Messages: append(msgs, user("go on"))}, nil); err != nil {
			t.Fatalf("stored %s: resumed request: %v", tt.stored, err)
		}
		if raw := string(srv.Requests()[0].Raw); !strings.Contains(raw, `"input":`+tt.want) {
			t.Errorf("stored %s: the request does not carry the input as an object:\n%s", tt.stored, raw)
		}
	}
}

// Store.MaxRounds (SYNAPSE_MAX_ROUNDS_KEPT) bounds the kept rounds; the
// totals still count every round.
func TestUsageRoundsKept(t *testing.T) {
	for _, keep := range []int{1, 3, 250} {
		s, _ := newStore(t)
		s.MaxRounds = keep
		ss := s.Create("/")
		if err := ss.Append(user("x")); err != nil {
			t.Fatal(err)
		}
		for range 120 {
			ss.AddUsage(llm.Usage{InputTokens: 1}, "m")
		}
		u := ss.Usage()
		if want := min(keep, 120); len(u.Rounds) != want || u.RoundCount != 120 || u.InputTokens != 120 {
			t.Errorf("keep %d: rounds=%d count=%d input=%d", keep, len(u.Rounds), u.RoundCount, u.InputTokens)
		}
	}
}
