package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// IndexFile lists the sessions, one JSON entry per line, so that one damaged
// line loses only itself. LockFile serialises index rewrites across processes.
const (
	IndexFile = "index.jsonl"
	LockFile  = "index.lock"
)

func (s *Store) indexPath() string { return filepath.Join(s.Dir, IndexFile) }

// readIndex reads the index without the lock: rewrites are atomic renames,
// so a reader always sees a whole file.
func (s *Store) readIndex() ([]Entry, error) {
	f, err := os.Open(s.indexPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open session index: %w", err)
	}
	defer f.Close()
	var out []Entry
	seen := map[string]int{}
	r := bufio.NewReader(f)
	bad := corruptLines{warn: s.warn}
	defer bad.done("session index " + s.indexPath())
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var e Entry
			if jerr := json.Unmarshal(line, &e); jerr != nil || e.ID == "" {
				if jerr == nil {
					jerr = errors.New("entry without an id")
				}
				bad.add(func() error {
					return fmt.Errorf("session index %s: line %d is corrupt and was skipped: %w", s.indexPath(), lineNo, jerr)
				})
			} else if i, dup := seen[e.ID]; dup {
				e.indexed = true
				out[i] = e
			} else {
				e.indexed = true
				seen[e.ID] = len(out)
				out = append(out, e)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read session index: %w", err)
		}
	}
	return out, nil
}

// lockIndex takes the cross-process index lock and reads the index; the
// caller rewrites it with writeIndex, then calls unlock.
func (s *Store) lockIndex() (entries []Entry, unlock func(), err error) {
	unlock, err = lockFile(filepath.Join(s.Dir, LockFile))
	if err != nil {
		return nil, nil, fmt.Errorf("lock session index: %w", err)
	}
	entries, err = s.readIndex()
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return entries, unlock, nil
}

// writeIndex replaces the index with entries, atomically.
func (s *Store) writeIndex(entries []Entry) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, x := range entries {
		if err := enc.Encode(x); err != nil {
			return fmt.Errorf("encode session index: %w", err)
		}
	}
	return fsutil.WriteFileAtomic(s.indexPath(), buf.Bytes(), 0o600)
}

// upsert replaces or adds e in the index under the cross-process lock.
func (s *Store) upsert(e Entry) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("create sessions directory %s: %w", s.Dir, err)
	}
	entries, unlock, err := s.lockIndex()
	if err != nil {
		return err
	}
	defer unlock()
	e.HistoryMissing = false // a fact of the moment a listing is made, not of the index
	i := slices.IndexFunc(entries, func(x Entry) bool { return x.ID == e.ID })
	if i >= 0 {
		entries[i] = e
	} else {
		entries = append(entries, e)
	}
	return s.writeIndex(entries)
}

// Delete removes a session's files and its index entry; a session open in
// another process is refused with a *LockedError.
func (s *Store) Delete(id string) error {
	lock, err := s.lockSession(id)
	if err != nil {
		return err
	}
	defer lock.Close()
	entries, unlock, err := s.lockIndex()
	if err != nil {
		return err
	}
	defer unlock()
	kept := slices.DeleteFunc(entries, func(x Entry) bool { return x.ID == id })
	if err := s.writeIndex(kept); err != nil {
		return err
	}
	for _, p := range []string{s.historyPath(id), s.usagePath(id), s.lockPath(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete session file: %w", err)
		}
	}
	// Offloaded results and archives go with it. An id is a plain name
	// (checked by resolve), so this stays inside the sessions directory.
	if id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".." {
		if err := os.RemoveAll(s.FilesDir(id)); err != nil {
			return fmt.Errorf("delete session files: %w", err)
		}
	}
	return nil
}
