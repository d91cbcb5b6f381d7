package repl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A huge line in the history file is skipped without losing the entries
// after it, and a file grown past twice the kept entries is compacted.
func TestHistoryHugeLineAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prompt_history.jsonl")
	var b bytes.Buffer
	for i := range 2500 {
		if i == 1200 {
			huge, _ := json.Marshal(strings.Repeat("x", 5<<20))
			b.Write(append(huge, '\n'))
		}
		j, _ := json.Marshal(fmt.Sprintf("prompt %d", i))
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var warned []error
	h, err := LoadHistory(path, func(err error) { warned = append(warned, err) })
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != MaxHistory || h.At(0) != "prompt 2499" || h.At(MaxHistory-1) != "prompt 1500" {
		t.Fatalf("loaded %d entries, newest %q, oldest %q", h.Len(), h.At(0), h.At(h.Len()-1))
	}
	if len(warned) != 0 {
		t.Fatalf("warnings: %v", warned)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != MaxHistory {
		t.Fatalf("compacted file has %d lines, want %d", n, MaxHistory)
	}
	again, err := LoadHistory(path, nil)
	if err != nil || again.Len() != MaxHistory || again.At(0) != "prompt 2499" {
		t.Fatalf("reload after compaction: %v %d", err, again.Len())
	}

	// A paste larger than an entry may be is used but not saved.
	h.Add(strings.Repeat("y", maxEntryBytes+1))
	h.Add("small")
	data, _ = os.ReadFile(path)
	if bytes.Contains(data, []byte("yyyy")) || !bytes.HasSuffix(data, []byte("\"small\"\n")) {
		t.Fatalf("file after adds ends %q", data[max(0, len(data)-40):])
	}
}

// Entries returns a copy, oldest first.
func (h *History) Entries() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.entries...)
}
