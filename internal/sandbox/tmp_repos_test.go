package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A repository in the workspace gets a hooks directory made so it can be
// mounted read-only; one that merely sits in the shared temp dir is left as
// it is (the agent creates nothing in other people's repositories).
func TestHooksCreatedOnlyInTheWorkspace(t *testing.T) {
	tmp := t.TempDir()
	work := filepath.Join(t.TempDir(), "work")
	other := filepath.Join(tmp, "someone-else")
	for _, d := range []string{filepath.Join(work, ".git"), filepath.Join(other, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mp := planMounts(Policy{Whitelist: []string{work, tmp}, TempDir: tmp, Home: t.TempDir()}, nil)
	workHooks := filepath.Join(work, ".git", "hooks")
	if _, err := os.Stat(workHooks); err != nil {
		t.Fatalf("workspace hooks dir not made: %v", err)
	}
	if !slices.Contains(mp.protect, workHooks) {
		t.Errorf("workspace hooks not protected: %v", mp.protect)
	}
	if _, err := os.Stat(filepath.Join(other, ".git", "hooks")); err == nil {
		t.Error("a hooks directory was made in a repository of the temp dir")
	}
}
