package session

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
)

// LockedError is the answer to opening, for writing, a session that another
// process has open: two writers would interleave their messages in one
// history file.
type LockedError struct {
	ID  string
	PID int // the holder's pid; 0 if it has not written it yet
}

func (e *LockedError) Error() string {
	who := "another Synapse process"
	if e.PID > 0 {
		who += fmt.Sprintf(" (pid %d)", e.PID)
	}
	return fmt.Sprintf("session %s is open in %s", e.ID, who)
}

// lockPath is session id's writer lock, beside its history file. It stays
// after the session closes: removing it would let a process that opened it
// just before lock a file no one else sees.
func (s *Store) lockPath(id string) string { return filepath.Join(s.Dir, id+".lock") }

// lockSession takes session id's writer lock without waiting, for as long as
// the returned file is open (the kernel releases it if the process dies).
// Another holder is reported as a *LockedError naming its pid.
func (s *Store) lockSession(id string) (*os.File, error) {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\`) {
		// Ids are plain names; this one would put a lock file elsewhere.
		return nil, fmt.Errorf("%q is not a session id; run `synapse sessions` to list them", id)
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create sessions directory %s: %w", s.Dir, err)
	}
	path := s.lockPath(id)
	f, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("open session lock %s: %w", path, err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock session %s (%s): %w", id, path, err)
	}
	if held {
		pid := readPID(f)
		f.Close()
		return nil, &LockedError{ID: id, PID: pid}
	}
	// Only the pid, for the message the next opener gets: the file must
	// never carry a command line and the secrets one may hold.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

func readPID(f *os.File) int {
	b, _ := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, 64), 64))
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// InUse returns a *LockedError when another process has session id open
// for writing, nil when no one has.
func (s *Store) InUse(id string) error {
	f, err := s.lockSession(id)
	if err != nil {
		return err
	}
	return f.Close()
}

// lockLocked takes the session's writer lock unless it holds it already;
// the caller holds ss.mu.
func (ss *Session) lockLocked() error {
	if ss.lock != nil {
		return nil
	}
	f, err := ss.store.lockSession(ss.entry.ID)
	if err != nil {
		return err
	}
	ss.lock = f
	return nil
}

// Fork starts a new session with a copy of idOrPrefix's history, written at
// once, and returns it with that history. The original is only read (its
// writer, if any, goes on with it undisturbed).
func (s *Store) Fork(idOrPrefix, cwd string) (*Session, []llm.Message, error) {
	id, err := s.Resolve(idOrPrefix)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := s.History(id)
	if err != nil {
		return nil, nil, err
	}
	ss := s.Create(cwd)
	if err := ss.Append(msgs...); err != nil {
		return nil, nil, errors.Join(fmt.Errorf("copy session %s into a new session: %w", id, err), ss.Close())
	}
	return ss, msgs, nil
}
