package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
)

func TestFlushIfDueWritesAtMostOnceAnInterval(t *testing.T) {
	s, _ := newStore(t)
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	ss := s.Create("/w")
	if err := ss.Append(user("hi")); err != nil { // first append: written and indexed
		t.Fatal(err)
	}
	onDisk := func() int {
		t.Helper()
		got, _ := peek(t, s, ss.ID())
		return got.Usage().RoundCount
	}
	steps := []struct {
		after time.Duration
		want  int // rounds on disk after AddUsage + FlushIfDue
	}{
		{0, 0},
		{FlushInterval / 2, 0},
		{FlushInterval / 2, 3}, // an interval since the last write: all three
		{time.Millisecond, 3},
	}
	for i, st := range steps {
		now = now.Add(st.after)
		ss.AddUsage(llm.Usage{InputTokens: 1}, "m")
		if err := ss.FlushIfDue(); err != nil {
			t.Fatal(err)
		}
		if got := onDisk(); got != st.want {
			t.Errorf("step %d: %d rounds on disk, want %d", i, got, st.want)
		}
	}
	if err := ss.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := onDisk(); got != len(steps) {
		t.Errorf("after Flush: %d rounds on disk, want %d", got, len(steps))
	}
}

// A session whose history file was deleted (to free space, by hand) stays
// listed, marked as such, so that it is not lost from sight; it is not
// "latest" (--continue must not land in an empty session), and resuming it
// by id starts it over empty, in its project, under its title.
func TestSessionWithoutHistoryFileIsListedAndOpensEmpty(t *testing.T) {
	s, _ := newStore(t)
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	older := s.Create("/w")
	if err := older.Append(user("older")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute)
	newer := s.Create("/w")
	if err := newer.Append(user("newer")); err != nil {
		t.Fatal(err)
	}
	_ = older.Close()
	_ = newer.Close()
	if err := os.Remove(filepath.Join(s.Dir, newer.ID()+".jsonl")); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].ID != newer.ID() || !list[0].HistoryMissing || list[1].HistoryMissing {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if id, err := s.Resolve(Latest); err != nil || id != older.ID() {
		t.Errorf("latest = %q, %v; want %s", id, err, older.ID())
	}
	ss, msgs, err := s.Open(newer.ID())
	if err != nil || len(msgs) != 0 {
		t.Fatalf("open without history: %+v, %v", msgs, err)
	}
	if e := ss.Entry(); e.Title != "newer" || e.Project != "/w" || e.HistoryMissing {
		t.Errorf("entry = %+v", e)
	}
	now = now.Add(time.Minute)
	if err := ss.Append(user("again")); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(filepath.Join(s.Dir, IndexFile)); strings.Contains(string(raw), "historyMissing") {
		t.Errorf("the index records a listing's fact:\n%s", raw)
	}
	// The history started over carries its origin: a lost index still
	// puts the session in its project.
	if err := os.WriteFile(filepath.Join(s.Dir, IndexFile), []byte("\x00lost\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	list, err = s.ListProject("/w")
	if err != nil || len(list) != 2 || list[0].ID != newer.ID() || list[0].HistoryMissing || list[0].MessageCount != 1 {
		t.Fatalf("after resuming and losing the index: %+v, %v", list, err)
	}
}

// A badly damaged file is reported in a few lines, not one per line.
func TestManyCorruptLinesAreSummarised(t *testing.T) {
	s, w := newStore(t)
	ss := s.Create("/w")
	if err := ss.Append(user("kept")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, ss.ID()+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		f.WriteString("\x00garbage\n")
	}
	f.Close()
	idx := filepath.Join(s.Dir, IndexFile)
	data, _ := os.ReadFile(idx)
	if err := os.WriteFile(idx, append(bytes.Repeat([]byte("{broken\n"), 300), data...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, msgs := peek(t, s, ss.ID())
	if len(msgs) != 1 {
		t.Fatalf("msgs = %+v", msgs)
	}
	all := w.all()
	if len(all) > 10 {
		t.Fatalf("%d warnings, want a handful", len(all))
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"497 more", "297 more"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings do not say %q:\n%s", want, joined)
		}
	}
}
