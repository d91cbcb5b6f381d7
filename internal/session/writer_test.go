package session

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// One writer per session: whichever way a session is opened for writing,
// a second opener is refused with the holder's pid until the first closes.
func TestOneWriterPerSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(s *Store, id string) (*Session, error)
	}{
		{"open", func(s *Store, id string) (*Session, error) {
			ss, _, err := s.Open(id)
			return ss, err
		}},
		{"open by prefix", func(s *Store, id string) (*Session, error) {
			ss, _, err := s.Open(strings.TrimPrefix(id, IDPrefix)[:15])
			return ss, err
		}},
		{"continue latest", func(s *Store, id string) (*Session, error) {
			ss, _, err := s.Open(Latest)
			return ss, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStore(t)
			id := seed(t, s)
			first, err := tc.first(s, id)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = s.Open(id)
			var locked *LockedError
			if !errors.As(err, &locked) || locked.ID != id || locked.PID != os.Getpid() {
				t.Fatalf("second open: %v, want a *LockedError naming pid %d", err, os.Getpid())
			}
			if msg := err.Error(); !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, id) {
				t.Errorf("message %q names neither the session nor the holder", msg)
			}
			if err := s.InUse(id); !errors.As(err, &locked) {
				t.Errorf("InUse while open = %v", err)
			}
			if err := first.Append(user("still mine")); err != nil {
				t.Errorf("the holder cannot write: %v", err)
			}
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			if err := s.InUse(id); err != nil {
				t.Errorf("InUse after close = %v", err)
			}
			second, msgs, err := s.Open(id)
			if err != nil {
				t.Fatalf("open after close: %v", err)
			}
			defer second.Close()
			if len(msgs) != 2 || msgs[1].Text != "still mine" {
				t.Errorf("history = %+v", msgs)
			}
		})
	}
}

// seed writes a closed session with one message and returns its id.
func seed(t *testing.T, s *Store) string {
	t.Helper()
	ss := s.Create("/w")
	if err := ss.Append(user("hello")); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	return ss.ID()
}

// A new session is locked from its first write; Fork copies a held one into
// a session of its own; Prune and Delete leave a held session alone.
func TestNewForkAndDeleteRespectTheLock(t *testing.T) {
	s, _ := newStore(t)
	ss := s.Create("/w")
	if err := ss.Append(user("hello")); err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var locked *LockedError
	if _, _, err := s.Open(ss.ID()); !errors.As(err, &locked) {
		t.Fatalf("open of a new session being written: %v", err)
	}
	fork, msgs, err := s.Fork(ss.ID(), "/w2")
	if err != nil {
		t.Fatal(err)
	}
	if fork.ID() == ss.ID() || len(msgs) != 1 || msgs[0].Text != "hello" {
		t.Errorf("fork %s: %+v", fork.ID(), msgs)
	}
	if err := fork.Append(assistant("forked")); err != nil {
		t.Fatal(err)
	}
	if err := fork.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.History(fork.ID()); len(got) != 2 {
		t.Errorf("fork history = %+v", got)
	}
	if got, _ := s.History(ss.ID()); len(got) != 1 {
		t.Errorf("the original changed: %+v", got)
	}
	if err := s.Delete(ss.ID()); !errors.As(err, &locked) {
		t.Errorf("delete of a held session: %v", err)
	}
	if removed, err := s.Prune(1, fork.ID()); err != nil || len(removed) != 0 {
		t.Errorf("prune removed %v (%v); the other session is held", removed, err)
	}
	if err := s.Delete(fork.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.lockPath(fork.ID())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deleted session's lock file remains: %v", err)
	}
}

// The lock file is private, holds the pid alone and is never reached
// through a planted symlink.
func TestLockFileIsPrivateAndNoFollow(t *testing.T) {
	s, _ := newStore(t)
	id := seed(t, s)
	ss, _, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(s.lockPath(id))
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("lock file: %v %v", st, err)
	}
	if b, _ := os.ReadFile(s.lockPath(id)); string(b) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("lock file holds %q, want the pid alone", b)
	}
	ss.Close()

	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := seed(t, s)
	if err := os.Remove(s.lockPath(other)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, s.lockPath(other)); err != nil {
		t.Fatal(err)
	}
	if ss, _, err := s.Open(other); err == nil {
		ss.Close()
		t.Fatal("opened a session through a symlinked lock file")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the symlink's target changed: %q", b)
	}
	for _, bad := range []string{"../escape", "", ".."} {
		if _, err := s.lockSession(bad); err == nil {
			t.Errorf("lockSession(%q) succeeded", bad)
		}
	}
}
