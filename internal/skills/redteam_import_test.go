package skills

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamImportRace: skill:import of a local folder reads a folder that
// sandboxed commands can write. A real background job keeps flipping the
// folder's files between ordinary files and symlinks to a blacklisted key
// while the folder is imported again and again; the key must never reach
// the skill store (which commands can read), whatever the timing.
func TestRedTeamImportRace(t *testing.T) {
	bash := testutil.RequireTool(t, "bash")
	h, cwd := newTestHandler(t)
	home := t.TempDir()
	sshDir := filepath.Join(home, ".ssh")
	const secret = "-----BEGIN OPENSSH PRIVATE KEY----- red-team-secret"
	testutil.WriteFile(t, filepath.Join(sshDir, "id_rsa"), secret+"\n")
	h.Paths = denyNames{dirs: []string{sshDir}}

	src := filepath.Join(cwd, "evil")
	testutil.WriteFile(t, filepath.Join(src, SkillFile), "---\nname: evil\ndescription: d\n---\nbody\n")
	const files = 16
	for i := range files {
		testutil.WriteFile(t, filepath.Join(src, fmt.Sprintf("f%d", i)), "harmless\n")
	}
	testutil.WriteFile(t, filepath.Join(src, "sub", "g"), "harmless\n")

	// The attacker: renames over each file, in turn, a symlink to the key
	// and then an ordinary file (rename is atomic, so every open sees one or
	// the other), and does the same to the sub-folder.
	script := fmt.Sprintf(`cd %q
while :; do
  for i in $(seq 0 %d); do
    ln -sfn %q .l$i && mv -fT .l$i f$i
    echo harmless > .r$i && mv -fT .r$i f$i
  done
  ln -sfn %q .ls && mv -fT .ls sub2 && rm -f sub2
done`, src, files-1, filepath.Join(sshDir, "id_rsa"), sshDir)
	ctx, cancel := context.WithCancel(context.Background())
	flipper := exec.CommandContext(ctx, bash, "-c", script)
	// Its own process group, killed whole: killing bash alone left an ln or
	// mv it had started writing into the folder while TempDir removed it.
	flipper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	flipper.Cancel = func() error { return syscall.Kill(-flipper.Process.Pid, syscall.SIGKILL) }
	if err := flipper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = flipper.Wait() })

	for n := range 200 {
		r := h.Run(context.Background(), "skill:import --force evil")
		if r.ExitCode != 0 {
			t.Fatalf("import %d failed: %+v", n, r)
		}
		if leak := findInTree(t, h.Store.Dir, secret); leak != "" {
			t.Fatalf("after %d imports the blacklisted key is in the skill store: %s", n+1, leak)
		}
	}
	cancel()
	_ = flipper.Wait()
	if b, err := os.ReadFile(filepath.Join(h.Store.Dir, "evil", "sub", "g")); err != nil || !strings.Contains(string(b), "harmless") {
		t.Errorf("the ordinary files were not imported: %q %v", b, err)
	}
}

// findInTree returns the first file under dir holding needle.
func findInTree(t *testing.T, dir, needle string) string {
	t.Helper()
	found := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" || !d.Type().IsRegular() {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(needle)) {
			found = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestRedTeamCloneSSHCredentials: skill:import git@host:… makes the host run
// git, which runs ssh. For a command the model chose, ssh must get neither
// the user's agent nor their keys nor their ssh config; when the user typed
// the command (synapse exec), it keeps them. A stand-in ssh first on PATH
// records what it was given (real git runs it) and fails the clone.
func TestRedTeamCloneSSHCredentials(t *testing.T) {
	testutil.RequireTool(t, "git")
	bin, rec := t.TempDir(), filepath.Join(t.TempDir(), "ssh.log")
	testutil.WriteFile(t, filepath.Join(bin, "ssh"), "#!/bin/sh\n{ echo \"args: $*\"; echo \"agent: ${SSH_AUTH_SOCK:-none}\"; } >> "+rec+"\nexit 255\n")
	if err := os.Chmod(filepath.Join(bin, "ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("SSH_AUTH_SOCK", "/run/user/agent.sock")
	t.Setenv("GIT_SSH_COMMAND", "ssh -i /home/u/.ssh/id_rsa")

	for _, tc := range []struct {
		name      string
		policy    ImportPolicy
		typed     bool // the context says the user typed it (REPL /skill:…)
		wantAgent bool
	}{
		{"model asked, user approved", ImportPolicy{ApproveClone: func(context.Context, string) bool { return true }, ApproveInstall: func(context.Context, InstallRequest) bool { return true }}, false, false},
		{"user typed it", ImportPolicy{UserTyped: true}, false, true},
		{"user typed /skill:import in the REPL", ImportPolicy{}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = os.Remove(rec)
			h, _ := newTestHandler(t)
			h.Import = tc.policy
			ctx := context.Background()
			if tc.typed {
				ctx = UserTyped(ctx)
			}
			r := h.Run(ctx, "skill:import git@git.example.invalid:evil/skills.git")
			if r.ExitCode == 0 {
				t.Fatalf("the clone succeeded: %+v", r)
			}
			data, err := os.ReadFile(rec)
			if err != nil {
				t.Fatalf("ssh never ran (%v): %+v", err, r)
			}
			log := string(data)
			if tc.wantAgent {
				if !strings.Contains(log, "agent: /run/user/agent.sock") || !strings.Contains(log, "/home/u/.ssh/id_rsa") {
					t.Errorf("the user's own command lost their credentials:\n%s", log)
				}
				return
			}
			for _, bad := range []string{"agent.sock", "id_rsa"} {
				if strings.Contains(log, bad) {
					t.Errorf("ssh got the user's %s:\n%s", bad, log)
				}
			}
			for _, want := range []string{"IdentityAgent=none", "BatchMode=yes", "-F /dev/null", "IdentitiesOnly=yes"} {
				if !strings.Contains(log, want) {
					t.Errorf("ssh lacks %s:\n%s", want, log)
				}
			}
		})
	}
}
