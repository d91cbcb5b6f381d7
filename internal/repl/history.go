package repl

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// MaxHistory bounds the entries kept in memory and loaded from the file.
const MaxHistory = 1000

// maxEntryBytes bounds one saved entry: a larger paste is used for the turn
// but not written to the history file, which stays quick to load.
const maxEntryBytes = 256 << 10

// History is the prompt history, persisted across runs as one JSON string
// per line (so multi-line prompts survive) and appended line-whole.
type History struct {
	mu      sync.Mutex
	path    string
	entries []string // oldest first
	warn    func(error)
}

// LoadHistory reads path (missing is fine). Unreadable lines are skipped.
// warn receives errors of later appends; nil ignores them.
func LoadHistory(path string, warn func(error)) (*History, error) {
	h := &History{path: path, warn: warn}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("read prompt history %s: %w", path, err)
	}
	defer f.Close()
	lines := 0
	r := bufio.NewReader(f)
	for {
		line, tooLong, err := readLine(r, maxEntryBytes*2)
		if len(line) > 0 || tooLong {
			lines++
		}
		var s string
		if !tooLong && json.Unmarshal(line, &s) == nil && strings.TrimSpace(s) != "" {
			h.entries = append(h.entries, s)
		}
		if err != nil {
			break
		}
	}
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	// Appends only ever grow the file: compact it once it holds twice what
	// is kept, so loading stays bounded however long the REPL is used.
	if lines > 2*MaxHistory {
		if err := h.rewrite(); err != nil && warn != nil {
			warn(fmt.Errorf("compact prompt history %s: %w", path, err))
		}
	}
	return h, nil
}

// Add records entry (a prompt sent) and appends it to the file. Consecutive duplicates and blank lines are not recorded.
func (h *History) Add(entry string) {
	if strings.TrimSpace(entry) == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == entry {
		return
	}
	h.entries = append(h.entries, entry)
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[1:]
	}
	if h.path == "" || len(entry) > maxEntryBytes {
		return
	}
	if err := appendLine(h.path, entry); err != nil && h.warn != nil {
		h.warn(fmt.Errorf("save prompt history: %w", err))
	}
}

// readLine reads one line of any length, returning at most max bytes of it;
// tooLong reports a line that was longer (its rest is discarded).
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := r.ReadLine()
		if len(line)+len(chunk) > max {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}

// rewrite replaces the file with the entries kept in memory.
func (h *History) rewrite() error {
	var b []byte
	for _, e := range h.entries {
		j, err := json.Marshal(e)
		if err != nil {
			return err
		}
		b = append(append(b, j...), '\n')
	}
	return fsutil.WriteFileAtomic(h.path, b, 0o600)
}

func appendLine(path, entry string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(entry)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// One write per entry keeps lines whole when two REPLs append at once.
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Len is the number of entries.
func (h *History) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// At returns an entry; 0 is the most recent.
func (h *History) At(idx int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.entries[len(h.entries)-1-idx]
}
