package agent

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/llm/openai"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/tool"
)

// cancelPhase is one moment of a turn at which the user presses Ctrl+C.
type cancelPhase struct {
	name string
	turn llmtest.Turn
	// at reports whether the event is the moment to cancel.
	at func(Event) bool
	// inBackoff: cancel when the provider starts its retry wait instead.
	inBackoff bool
}

var cancelPhases = []cancelPhase{
	{name: "streaming text", turn: llmtest.Turn{Text: strings.Repeat("word ", 400), Fragment: 5, EventDelay: 2 * time.Millisecond},
		at: func(e Event) bool { return e.Kind == TextDelta }},
	{name: "tool", turn: llmtest.BashTurn("t", "block"),
		at: func(e Event) bool { return e.Kind == ToolStart }},
	{name: "task batch", turn: llmtest.ToolTurn(taskCall("a", "explore", "x"), taskCall("b", "general", "y"), taskCall("c", "explore", "z")),
		at: func(e Event) bool { return e.Kind == ToolStart && e.CallID == "c" }},
	{name: "retry backoff", turn: llmtest.Turn{Status: 529}, inBackoff: true},
}

// wireClient is a provider over its own transport, so that a test can close
// its idle connections before counting goroutines.
func wireClient(format, url string, retry *llm.RetryPolicy) (llm.Provider, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	hc := &http.Client{Transport: tr}
	if format == llmtest.FormatOpenAI {
		return openai.New(openai.Options{APIKey: "k", BaseURL: url + "/v1", HTTPClient: hc, Retry: retry}), tr
	}
	return anthropic.New(anthropic.Options{APIKey: "k", BaseURL: url, HTTPClient: hc, Retry: retry}), tr
}

// Ctrl+C at every phase of a turn (streaming, a tool, a parallel task batch,
// a retry backoff) stops the run with ErrInterrupted, leaves no tool call
// without its result, lets the next turn complete, and leaks no goroutine
// over many rounds.
func TestCancelAtEveryPhase(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			round := func() {
				for _, ph := range cancelPhases {
					cancelOnePhase(t, format, ph)
				}
			}
			round() // warm up: lazily started runtime and library goroutines
			base := runtime.NumGoroutine()
			for i := 0; i < 5; i++ {
				round()
			}
			var now int
			for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if now = runtime.NumGoroutine(); now <= base || time.Now().After(end) {
					break
				}
			}
			if now > base {
				buf := make([]byte, 1<<20)
				t.Fatalf("goroutines: %d after the warm-up round, %d after 5 more\n%s", base, now, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

func cancelOnePhase(t *testing.T, format string, ph cancelPhase) {
	t.Helper()
	srv := llmtest.NewServer(ph.turn, llmtest.TextTurn("recovered"))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	retry := &llm.RetryPolicy{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: time.Hour,
		Sleep: func(wctx context.Context, d time.Duration) error {
			if ph.inBackoff {
				cancel()
			}
			<-wctx.Done()
			return wctx.Err()
		}}
	p, tr := wireClient(format, srv.URL(), retry)
	defer tr.CloseIdleConnections()
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
		<-ctx.Done()
		return tool.Result{Output: "interrupted", IsError: true}
	})
	r, rec := newRunner(t, p, tt, func(o *Options) { o.SessionsDir = t.TempDir() })
	if ph.at != nil {
		rec.hook = func(e Event) {
			if ph.at(e) {
				cancel()
			}
		}
	}
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, "go"); done <- err }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the run did not stop after Ctrl+C", ph.name)
	}
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("%s: err = %v, want ErrInterrupted", ph.name, err)
	}
	if d := danglingCalls(r.History()); len(d) != 0 {
		t.Fatalf("%s: dangling calls %v", ph.name, d)
	}
	if d := danglingCalls(loadSession(t, r.store.Dir, r.SessionID())); len(d) != 0 {
		t.Fatalf("%s: dangling calls on disk %v", ph.name, d)
	}
	// Every call shown starting is shown ending (stream-json relies on it).
	ends := map[string]Event{}
	for _, e := range rec.kinds(ToolEnd) {
		ends[e.CallID] = e
	}
	for _, e := range rec.kinds(ToolStart) {
		end, ok := ends[e.CallID]
		if !ok {
			t.Fatalf("%s: call %s started but never ended", ph.name, e.CallID)
		}
		if end.Result == nil || end.Result.Facts.Status != CancelledStatus {
			t.Errorf("%s: call %s ended with %+v, want status %q", ph.name, e.CallID, end.Result, CancelledStatus)
		}
	}
	rec.mu.Lock()
	rec.hook = nil
	rec.mu.Unlock()
	res, err := r.Run(context.Background(), "again")
	if err != nil || res.Text != "recovered" {
		t.Fatalf("%s: next turn = %+v, %v", ph.name, res, err)
	}
	// The model is told the previous request was interrupted, before the new prompt.
	last, _ := srv.LastRequest()
	var users []string
	for _, m := range last.Messages {
		if m.Role == "user" && m.Text != "" {
			users = append(users, m.Text)
		}
	}
	joined := strings.Join(users, "\n")
	if i, j := strings.Index(joined, interruptedLead), strings.LastIndex(joined, "again"); i < 0 || j < i {
		t.Errorf("%s: the next request's user texts lack the interrupted note before the prompt:\n%s", ph.name, joined)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// After Ctrl+C no further call of the batch starts, even when a slot frees
// up at the same moment (the queue must not race the cancel).
func TestNoCallStartsAfterCancel(t *testing.T) {
	for i := 0; i < 30; i++ {
		tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
			<-ctx.Done()
			return tool.Result{Output: "interrupted", IsError: true}
		})
		p := newProvider(t, "fake", llmtest.ToolTurn(taskCall("a", "explore", "x"), taskCall("b", "explore", "y"), taskCall("c", "explore", "z")))
		r, rec := newRunner(t, p, tt, func(o *Options) { o.MaxParallelTasks = 1 })
		ctx, cancel := context.WithCancel(context.Background())
		rec.hook = func(e Event) {
			if e.Kind == ToolStart {
				cancel()
			}
		}
		if _, err := r.Run(ctx, "go"); !errors.Is(err, ErrInterrupted) {
			t.Fatalf("err = %v", err)
		}
		cancel()
		if got := rec.kinds(ToolStart); len(got) != 1 {
			t.Fatalf("round %d: %d calls started, want only the one running at the cancel", i, len(got))
		}
	}
}

// Issue 27: Ctrl+C drops the interrupted step whole (seed 004), the calls
// of it that had finished included, so the note before the next prompt is
// where the model learns what already happened: each finished call with
// its exit status and the files it changed, the cancelled one, and the one
// that never started.
func TestInterruptNoteNamesWhatTheStepDid(t *testing.T) {
	for _, format := range []string{llmtest.FormatAnthropic, llmtest.FormatOpenAI} {
		t.Run(format, func(t *testing.T) {
			exit := func(n int) *int { return &n }
			tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
				switch {
				case strings.HasPrefix(cmd, "echo"):
					return tool.Result{Output: "(no output)", Facts: tool.Facts{Layer: "native", ExitCode: exit(0)}}
				case strings.HasPrefix(cmd, "write"):
					return tool.Result{Output: "wrote notes.md", Facts: tool.Facts{Layer: "agent", ExitCode: exit(0)},
						Change: &command.FileChange{Path: "notes.md", New: "draft", Created: true}}
				case strings.HasPrefix(cmd, "grep"):
					return tool.Result{Output: "", IsError: true, Facts: tool.Facts{Layer: "native", ExitCode: exit(1)}}
				}
				if out := command.OutputOf(ctx); out != nil {
					out("partial line\n")
				}
				<-ctx.Done()
				return tool.Result{Output: "interrupted", IsError: true, Facts: tool.Facts{Interrupted: true, ExitCode: exit(130)}}
			})
			srv := llmtest.New(t, llmtest.BashTurn("a", "echo hi > a.txt", "write notes.md <<'EOF'\ndraft\nEOF", "grep -r TODO .", "sleep 100", "ls"),
				llmtest.TextTurn("noted"))
			dir := t.TempDir()
			r, rec := newRunner(t, wire(t, format, srv), tt, func(o *Options) { o.SessionsDir = dir })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rec.hook = func(e Event) {
				if e.Kind == ToolStart && e.Command == "sleep 100" {
					cancel()
				}
			}
			if _, err := r.Run(ctx, "start"); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v, want ErrInterrupted", err)
			}
			if h := r.History(); len(h) != 1 || len(danglingCalls(h)) != 0 {
				t.Fatalf("the step was not dropped whole: %+v", h)
			}
			// The session file keeps the dropped step beside the
			// conversation, for a replay: each call as it ended.
			tr, err := session.NewStore(dir, nil, func(err error) { t.Errorf("warning: %v", err) }).Transcript(r.SessionID())
			if err != nil {
				t.Fatal(err)
			}
			if len(tr) != 2 || tr[1].Shown == nil || tr[1].Shown.Dropped == nil {
				t.Fatalf("transcript %+v: want the prompt, then the dropped step", tr)
			}
			d := tr[1].Shown.Dropped
			var states []string
			for _, c := range d.Calls {
				states = append(states, c.State)
			}
			if got := strings.Join(states, " "); got != "finished finished finished cancelled not_started" || len(d.Message.ToolCalls) != 5 {
				t.Errorf("dropped calls' states %q (%d calls), want finished ×3, cancelled, not_started", got, len(d.Message.ToolCalls))
			}
			if ch := d.Calls[1].Change; ch == nil || ch.Path != "notes.md" || ch.New != "draft" || !ch.Created {
				t.Errorf("the finished write's change is %+v, want notes.md created with its text", ch)
			}
			if c := d.Calls[3]; c.Output != "partial line\n" || !c.IsError {
				t.Errorf("the cancelled call's record %+v: want what it streamed before the cancel", c)
			}
			if _, err := r.Run(context.Background(), "what now?"); err != nil {
				t.Fatal(err)
			}
			last, _ := srv.LastRequest()
			var note string
			for _, m := range last.Messages {
				for _, s := range m.Texts {
					if strings.HasPrefix(s, interruptedLead) {
						note = s
					}
				}
			}
			finished, cancelled, _ := strings.Cut(note, "were cancelled")
			cancelled, never, _ := strings.Cut(cancelled, "never started")
			for _, want := range []string{"`echo hi > a.txt`: exit 0 (a shell command: the files it changed are not tracked",
				"`write notes.md <<'EOF' …`: exit 0, created notes.md", "`grep -r TODO .`: exit 1"} {
				if !strings.Contains(finished, want) {
					t.Errorf("the note does not say %q among the finished calls:\n%s", want, note)
				}
			}
			if !strings.Contains(cancelled, "`sleep 100`") || !strings.Contains(never, "`ls`") || strings.Contains(note, "draft") {
				t.Errorf("the note does not name the cancelled and the unstarted call, or quotes a write's content:\n%s", note)
			}
		})
	}
}

// A finished step's file changes (write, edit) are kept beside the
// conversation, after its tool messages, for a replay to show the diff;
// failed calls' are not (their change did not happen).
func TestStepChangesKeptForReplay(t *testing.T) {
	exit := func(n int) *int { return &n }
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
		if strings.HasPrefix(cmd, "edit") {
			return tool.Result{Output: "edited a.txt", Facts: tool.Facts{Layer: "agent", ExitCode: exit(0)},
				Change: &command.FileChange{Path: "/w/a.txt", Old: "one\n", New: "two\n"}}
		}
		return tool.Result{Output: "no", IsError: true, Change: &command.FileChange{Path: "/w/b.txt", New: "x"}}
	})
	srv := llmtest.New(t, llmtest.BashTurn("a", "edit a.txt one two", "write b.txt x"), llmtest.TextTurn("done"))
	dir := t.TempDir()
	r, _ := newRunner(t, wire(t, llmtest.FormatAnthropic, srv), tt, func(o *Options) { o.SessionsDir = dir })
	if _, err := r.Run(context.Background(), "change it"); err != nil {
		t.Fatal(err)
	}
	tr, err := session.NewStore(dir, nil, func(err error) { t.Errorf("warning: %v", err) }).Transcript(r.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var changes []session.FileChange
	for _, e := range tr {
		if e.Message != nil {
			kinds = append(kinds, string(e.Message.Role))
			continue
		}
		kinds = append(kinds, "shown")
		changes = append(changes, e.Shown.Changes...)
	}
	if got := strings.Join(kinds, " "); got != "user assistant tool tool shown assistant" {
		t.Errorf("transcript %q, want the changes after the step's tool messages", got)
	}
	if len(changes) != 1 || changes[0].Path != "/w/a.txt" || changes[0].Old != "one\n" || changes[0].New != "two\n" || changes[0].CallID == "" {
		t.Errorf("changes %+v, want the edit's only", changes)
	}
}
