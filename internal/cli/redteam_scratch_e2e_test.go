package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamScratchDir: a sandboxed command can write the temp dir, so it
// can plant a symlink where Synapse would put its own files (the directory
// receiving cut command outputs). Synapse must not write through it (here
// into a ~/.bashrc.d the sandbox cannot write), must keep its files in a
// private directory the commands can still read, and remove it at exit.
func TestRedTeamScratchDir(t *testing.T) {
	testutil.RequireSandbox(t)
	env := testEnv(t)
	home := envValue(env, "HOME")
	tmp := t.TempDir()
	env = append(env, "TMPDIR="+tmp, "SYNAPSE_MAX_OUTPUT_CHARS=2000")
	target := filepath.Join(home, ".bashrc.d")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	// What a command run earlier left behind, in every name Synapse used.
	if err := os.Symlink(target, filepath.Join(tmp, "synapse-output")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// Inside the sandbox $TMPDIR is the session's private /tmp; the scratch
	// directory stays at its host path, readable.
	readBack := `cat "$(ls -d "` + tmp + `"/synapse-scratch-*/bash-output-*)" | tail -1`
	if testutil.UnderLandlock() {
		// The host temp directory cannot be listed there (docs/security.md's
		// table): the glob cannot find the file, though its path is readable
		// (the sandbox package's Visible tests check that).
		readBack = "true"
	}
	r := synapseEnv(t, work, env, "exec", "seq 1 100000", readBack)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(target); len(entries) != 0 {
		t.Errorf("Synapse wrote %d file(s) through the planted symlink into %s", len(entries), target)
	}
	if !strings.Contains(r.stdout, "synapse-scratch-") || !testutil.UnderLandlock() && !strings.HasSuffix(strings.TrimSpace(r.stdout), "100000") {
		t.Errorf("the cut output was not saved where the next command could read it:\n%s", r.stdout)
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "synapse-scratch-*"))
	if len(matches) != 0 {
		t.Errorf("scratch directories left after exit: %v", matches)
	}
}
