package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A repository in the workspace gets a hooks directory made so it can be
// mounted read-only; one that merely sits in the host temp dir is neither
// scanned nor touched: the sandbox mounts its private temp directory over
// /tmp, so no command can reach it.
func TestHooksCreatedOnlyInTheWorkspace(t *testing.T) {
	tmp := t.TempDir()
	priv := filepath.Join(t.TempDir(), "priv")
	work := filepath.Join(t.TempDir(), "work")
	other := filepath.Join(tmp, "someone-else")
	for _, d := range []string{filepath.Join(work, ".git"), filepath.Join(other, ".git"), priv} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Whitelist: []string{work}, TempDir: priv, Home: t.TempDir()}
	mp := planMounts(p, nil)
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
	args := strings.Join(bwrapArgs("bwrap", p, mp, WrapOptions{}, ""), " ")
	if !strings.Contains(args, "--bind "+priv+" /tmp --setenv TMPDIR /tmp") || strings.Contains(args, tmp) {
		t.Errorf("bwrap does not mount the private temp dir as /tmp alone: %s", args)
	}
}
