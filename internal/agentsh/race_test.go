package agentsh

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// swapAfterCheck allows paths under root (lexically, as the real policy does
// for a path it has resolved) and, right after the first decision, runs swap:
// a process in the sandbox replacing a directory with a symlink between the
// policy check and the file access.
type swapAfterCheck struct {
	root string
	once sync.Once
	swap func()
}

func (s *swapAfterCheck) CheckPath(p string, write bool) (bool, string, string) {
	defer s.once.Do(s.swap)
	return allowOnly{s.root}.CheckPath(p, write)
}

// replaceWithLink turns dir into a symlink to target.
func replaceWithLink(t *testing.T, dir, target string) func() {
	return func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(target, dir); err != nil {
			t.Error(err)
		}
	}
}

// TestFileCommandsDoNotFollowSwappedSymlinks: the policy judges the path the
// file command names; a symlink planted on that path after the check (a race
// a background job can win) must not carry the access outside. The access
// fails instead, and nothing outside changes or leaks.
func TestFileCommandsDoNotFollowSwappedSymlinks(t *testing.T) {
	tests := []struct {
		name string
		line string
		// link is the workspace directory swapped for a link to outside.
		link string
	}{
		{"write into a swapped directory", "write d/f.txt pwned", "d"},
		{"write creating directories under a planted link", "write new/sub/f.txt pwned", "new"},
		{"edit in a swapped directory", "edit d/f.txt original pwned", "d"},
		{"read from a swapped directory", "read d/f.txt", "d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			ws := filepath.Join(base, "ws")
			outside := filepath.Join(base, "outside")
			testutil.WriteFile(t, filepath.Join(outside, "f.txt"), "original SECRET\n")
			testutil.WriteFile(t, filepath.Join(ws, "d", "f.txt"), "original\n")
			ex := &bashExec{dir: ws}
			sh := New(Options{Exec: ex, Paths: &swapAfterCheck{root: ws, swap: replaceWithLink(t, filepath.Join(ws, tt.link), outside)}})
			r := sh.Run(context.Background(), tt.line)
			if got := readFile(t, filepath.Join(outside, "f.txt")); got != "original SECRET\n" {
				t.Errorf("%s changed a file outside the workspace: %q (result %+v)", tt.line, got, r)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("%s created files outside the workspace: %v", tt.line, entries)
			}
			if _, err := os.Stat(filepath.Join(outside, "sub")); err == nil {
				t.Errorf("%s created a directory outside the workspace", tt.line)
			}
			if strings.Contains(r.Stdout+r.Stderr, "SECRET") {
				t.Errorf("%s showed a file outside the workspace: %+v", tt.line, r)
			}
			if r.ExitCode != 1 || !strings.Contains(r.Stderr, "was replaced") {
				t.Errorf("%s = %+v, want a failure saying the path changed", tt.line, r)
			}
		})
	}
}
