package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestTailText(t *testing.T) {
	long := strings.Repeat("x", 100) + "\n"
	for _, tc := range []struct {
		name   string
		chunks []string
		want   string // the whole text (unless cut)
		cut    bool   // the tail lost its start: checked for shape
	}{
		{"lines as they come", []string{"one\ntw", "o\nthr"}, "one\ntwo\nthr", false},
		{"a progress line shows as it stands", []string{"10%\r", "50%\r", "90%"}, "90%", false},
		{"CRLF ends a line", []string{"a\r\nb\r\n"}, "a\nb\n", false},
		{"escapes are removed", []string{"\x1b[31mred\x1b[0m \x1b]52;c;Zm9v\x07ok\n"}, "red ok\n", false},
		{"past the bound the tail is kept from a line start", []string{strings.Repeat(long, 200), "last\n"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tl tail
			for _, c := range tc.chunks {
				tl.add(c)
			}
			body, cut := tl.text()
			if cut != tc.cut {
				t.Errorf("cut = %v, want %v", cut, tc.cut)
			}
			if !tc.cut {
				if body != tc.want {
					t.Errorf("text = %q, want %q", body, tc.want)
				}
				return
			}
			if !strings.HasSuffix(body, "last\n") || len(body) > liveMax || !strings.HasPrefix(body, "xxx") || len(tl.buf) > 2*liveMax {
				t.Errorf("text = %q… (%d bytes, buffer %d)", body[:min(len(body), 80)], len(body), len(tl.buf))
			}
			if b := tl.block(); !strings.HasPrefix(b, cutNote+"\n\n```\nxxx") || !strings.HasSuffix(b, "last\n```") {
				t.Errorf("block = %q…%q", b[:40], b[len(b)-20:])
			}
			if l := strings.Split(body, "\n")[0]; len(l) != 100 {
				t.Errorf("the tail starts inside a line: %q", l)
			}
		})
	}
}

// A tail cut inside a multi-byte character starts at the next character.
func TestTailTextUTF8(t *testing.T) {
	var tl tail
	tl.add(strings.Repeat("é", 3*liveMax)) // no newline at all
	got, cut := tl.text()
	if !cut || !strings.HasPrefix(got, "é") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("tail starts with %q", got[:4])
	}
}

// Output is a fenced code block whose fence no backtick run inside closes.
func TestCodeBlock(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ls\n", "```\nls\n```"},
		{"# not a heading\n* not a list", "```\n# not a heading\n* not a list\n```"},
		{"a ``` b", "````\na ``` b\n````"},
		{"````", "`````\n````\n`````"},
	} {
		if got := codeBlock(tc.in); got != tc.want {
			t.Errorf("codeBlock(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// updatesOf collects, as they arrive, the updates of one call.
type updatesOf struct {
	mu  sync.Mutex
	id  string
	got []*sdk.SessionToolCallUpdate
}

func (u *updatesOf) add(up sdk.SessionUpdate) {
	if x := up.ToolCallUpdate; x != nil && string(x.ToolCallId) == u.id {
		u.mu.Lock()
		u.got = append(u.got, x)
		u.mu.Unlock()
	}
}

func updateText(u *sdk.SessionToolCallUpdate) string {
	var b strings.Builder
	for _, c := range u.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			b.WriteString(c.Content.Content.Text.Text)
		}
	}
	return b.String()
}

// A command's output reaches the client while it runs: the command waits
// for a file the client creates only once it has seen the first line.
func TestLiveCommandOutput(t *testing.T) {
	testutil.RequireBwrap(t)
	cmd := `echo first; ok=timeout; for i in $(seq 100); do [ -e go ] && { ok=seen; break; }; sleep 0.1; done; echo "second $ok"`
	w := newWorld(t, llmtest.BashTurn("l", cmd), llmtest.TextTurn("done"))
	id := w.newSession(t)
	ups := &updatesOf{id: "l-1"}
	var once sync.Once
	w.cl.onUpdate = func(u sdk.SessionUpdate) {
		ups.add(u)
		if x := u.ToolCallUpdate; x != nil && x.Status != nil && *x.Status == sdk.ToolCallStatusInProgress && strings.Contains(updateText(x), "first") {
			once.Do(func() {
				if err := os.WriteFile(filepath.Join(w.proj, "go"), nil, 0o644); err != nil {
					t.Error(err)
				}
			})
		}
	}
	if res := w.prompt(t, id, "run it"); res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	ups.mu.Lock()
	defer ups.mu.Unlock()
	if len(ups.got) < 2 {
		t.Fatalf("updates of the call: %d, want live output before the end", len(ups.got))
	}
	first := ups.got[0]
	if first.Status == nil || *first.Status != sdk.ToolCallStatusInProgress || updateText(first) != "```\nfirst\n```" {
		t.Errorf("first update: status %v, text %q; want in_progress with the first line only", first.Status, updateText(first))
	}
	last := ups.got[len(ups.got)-1]
	if *last.Status != sdk.ToolCallStatusCompleted || !strings.Contains(updateText(last), "second seen") {
		t.Errorf("final update: status %v, text %q (the command never saw the client's answer to its live output)", last.Status, updateText(last))
	}
}

// A command that floods output gets at most one update per interval, each
// bounded and ending with the latest output.
func TestLiveOutputThrottledAndBounded(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.BashTurn("f", "for i in 1 2 3 4 5; do seq 1 40000; sleep 0.2; done; echo end"), llmtest.TextTurn("done"))
	id := w.newSession(t)
	ups := &updatesOf{id: "f-1"}
	w.cl.onUpdate = ups.add
	start := time.Now()
	if res := w.prompt(t, id, "flood"); res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	// Every update was sent within the prompt, at least an interval apart
	// (measured where they arrive they may bunch up).
	span := time.Since(start)
	ups.mu.Lock()
	defer ups.mu.Unlock()
	live := ups.got[:len(ups.got)-1]
	if len(live) < 3 {
		t.Fatalf("%d live updates for a second of output", len(live))
	}
	if max := int(span/liveInterval) + 1; len(live) > max {
		t.Errorf("%d live updates in %v: more than one per %v", len(live), span, liveInterval)
	}
	sawTail := false
	for _, u := range live {
		text := updateText(u)
		if len(text) > liveMax+64 {
			t.Errorf("a live update carries %d bytes, over the %d bound", len(text), liveMax)
		}
		if strings.HasPrefix(text, cutNote+"\n\n```\n") && strings.HasSuffix(text, "\n40000\n```") {
			sawTail = true
		}
	}
	if !sawTail {
		t.Errorf("no live update showed the tail of a burst (…40000), marked as cut")
	}
}

// Cancelling a command keeps what it printed in its failed call.
func TestLiveOutputKeptOnCancel(t *testing.T) {
	testutil.RequireBwrap(t)
	w := newWorld(t, llmtest.BashTurn("c", "echo started; sleep 30"), llmtest.TextTurn("never"))
	id := w.newSession(t)
	ups := &updatesOf{id: "c-1"}
	var once sync.Once
	w.cl.onUpdate = func(u sdk.SessionUpdate) {
		ups.add(u)
		if x := u.ToolCallUpdate; x != nil && strings.Contains(updateText(x), "started") {
			once.Do(func() {
				go func() { _ = w.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: id}) }()
			})
		}
	}
	if res := w.prompt(t, id, "wait"); res.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %q", res.StopReason)
	}
	ups.mu.Lock()
	defer ups.mu.Unlock()
	last := ups.got[len(ups.got)-1]
	if text := updateText(last); *last.Status != sdk.ToolCallStatusFailed || !strings.Contains(text, "started") || !strings.Contains(text, "cancelled") {
		t.Errorf("final update: status %v, text %q; want failed, with the output and the cancel", *last.Status, text)
	}
}

// BenchmarkLiveTail is a flooding command's cost on the agent side: 4 KB
// chunks added, and one update's text made every 25 chunks (at 100 ms a
// flush, ~1 MB/s of output).
func BenchmarkLiveTail(b *testing.B) {
	chunk := strings.Repeat("some output line with \x1b[32mcolour\x1b[0m\n", 4096/38)
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	var tl tail
	for i := range b.N {
		tl.add(chunk)
		if i%25 == 0 {
			_ = tl.block()
		}
	}
}
