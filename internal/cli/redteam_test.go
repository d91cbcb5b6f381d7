package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamInheritedFD: a descriptor the parent left open on a file
// outside the sandbox must not reach sandboxed commands (issue 11, item 7).
// The attack: start synapse with fd 3 and fd 4 open for appending to host
// files, and let a sandboxed command write to both.
func TestRedTeamInheritedFD(t *testing.T) {
	testutil.RequireSandbox(t)
	outside := t.TempDir()
	var files []*os.File
	for _, name := range []string{"victim3", "victim4"} {
		f, err := os.OpenFile(filepath.Join(outside, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		files = append(files, f)
	}
	proj := t.TempDir()
	c := exec.Command(synapseBin, "exec", "echo pwned >&3; echo pwned >&4; ls /proc/self/fd")
	c.Dir = proj
	c.Env = testEnv(t)
	c.ExtraFiles = files
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	_ = c.Run() // the command fails once the descriptors are gone; what matters is below
	for _, f := range files {
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 0 {
			t.Errorf("a sandboxed command wrote %q through an inherited descriptor into %s\nstdout: %s\nstderr: %s", b, f.Name(), out.String(), errb.String())
		}
	}
	if !strings.Contains(out.String()+errb.String(), "Bad file descriptor") {
		t.Errorf("the sandboxed command should have found no descriptor 3 or 4:\nstdout: %s\nstderr: %s", out.String(), errb.String())
	}
}

// TestRedTeamExtensionCwdIsNotWritable: a skill script runs under exactly
// the agent's policy; the agent shell's directory is where it starts, never
// an extra writable root (issue 11, item 1). The attack: a project skill
// (written by a sandboxed command, so as hostile as one) appends to
// ~/.bashrc after `cd ~`, while the same append by a native command fails.
func TestRedTeamExtensionCwdIsNotWritable(t *testing.T) {
	testutil.RequireSandbox(t)
	base := testutil.OutsideTmp(t) // a home is never under /tmp, which commands see as their private one
	home, proj, tmp := filepath.Join(base, "home"), filepath.Join(base, "proj"), filepath.Join(base, "tmp")
	testutil.WriteFile(t, filepath.Join(home, ".bashrc"), "# rc\n")
	testutil.WriteFile(t, filepath.Join(home, ".synapse", "sandbox.json"), `{"enabled": true}`)
	testutil.WriteFile(t, filepath.Join(proj, ".synapse", "skills", "e", "SKILL.md"), "---\nname: e\ndescription: Appends to a file\n---\n")
	testutil.WriteFile(t, filepath.Join(proj, ".synapse", "skills", "e", "scripts", "x.sh"), "# Append.\necho pwned >> .bashrc && echo appended\n")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + filepath.Join(home, ".synapse"), "LC_ALL=C", "TMPDIR=" + tmp}
	r := synapseEnv(t, proj, env, "exec", "cd ~", "echo x >> ~/.bashrc", "skill:e:x")
	b, err := os.ReadFile(filepath.Join(home, ".bashrc"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "# rc\n" {
		t.Errorf("~/.bashrc was changed to %q\nstdout: %s\nstderr: %s", b, r.stdout, r.stderr)
	}
	// bubblewrap mounts the home read-only; Landlock refuses the write.
	refused := "Read-only file system"
	if testutil.UnderLandlock() {
		refused = "Permission denied"
	}
	if strings.Count(r.stdout+r.stderr, refused) < 2 {
		t.Errorf("the script's append should fail as the native one does:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}
