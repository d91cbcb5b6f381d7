package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamSkillImportPrivateTmp: /tmp in commands is the session's
// private temp directory, so `skill:import /tmp/x` must import what a
// command made in /tmp/x, and nothing of the host's /tmp: neither a folder
// there named directly nor one reached through a link a command planted
// in its /tmp (issue 11, private temp directory).
func TestRedTeamSkillImportPrivateTmp(t *testing.T) {
	testutil.RequireSandbox(t)
	home, cwd := t.TempDir(), testutil.OutsideTmp(t)
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": true}`)
	a := testApp(t, home)
	mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown()
	if !mgr.Enabled() {
		testutil.SkipOrFail(t, "the sandbox is off on this machine: %v", mgr.Status())
	}
	ext, err := a.Extensions(context.Background(), cwd, ExtensionOptions{Sandbox: mgr, DeferMCP: true, Import: approveInstalls})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()

	// A skill with a secret in the host's /tmp, where commands cannot see it.
	hostDir, err := os.MkdirTemp("/tmp", "synapse-redteam-host-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(hostDir) })
	writeTestFile(t, filepath.Join(hostDir, "SKILL.md"), "---\nname: host-secret\ndescription: d\n---\n")
	writeTestFile(t, filepath.Join(hostDir, "secret.txt"), "HOST-SECRET\n")

	native := func(c string) {
		t.Helper()
		r, err := mgr.Execute(context.Background(), c, "")
		if err != nil || r.ExitCode != 0 {
			t.Fatalf("%s: %+v %v", c, r, err)
		}
	}
	// Commands' temp directory: /tmp under bubblewrap; under Landlock the
	// private directory TMPDIR names, at its host path (the host's /tmp is
	// unreadable there).
	tmp := "/tmp"
	if testutil.UnderLandlock() {
		tmp = mgr.PrivateTmp()
	}
	native(`mkdir -p ` + tmp + `/made && printf -- '---\nname: made-in-tmp\ndescription: d\n---\nbody\n' > ` + tmp + `/made/SKILL.md`)
	native(`ln -s ` + hostDir + ` ` + tmp + `/link && ! cat ` + hostDir + `/secret.txt`)

	run := ext.Handlers()[router.FamilySkill].Run
	if r := run(context.Background(), "skill:import "+tmp+"/made"); r.ExitCode != 0 {
		t.Errorf("skill:import of a folder a command made in /tmp: %+v", r)
	} else if _, err := os.Stat(filepath.Join(a.Config.SkillsDir, "made-in-tmp", "SKILL.md")); err != nil {
		t.Errorf("the skill made in /tmp is not in the store: %v", err)
	}
	for _, src := range []string{hostDir, tmp + "/link"} {
		r := run(context.Background(), "skill:import --force "+src)
		if r.ExitCode == 0 {
			t.Errorf("skill:import %s succeeded: %+v", src, r)
		}
		if !strings.Contains(r.Stderr, src) || !testutil.UnderLandlock() && strings.Contains(r.Stderr, mgr.PrivateTmp()) {
			t.Errorf("skill:import %s: the error should name the path as given, not the host's private one: %s", src, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(a.Config.SkillsDir, "host-secret")); err == nil {
		t.Error("a skill from the host's /tmp was imported into the store")
	}

	// read, write and edit agree: /tmp/made is the command's file, and the
	// host's /tmp is out of reach by name and through a link in the project.
	tl, err := a.NewTool(context.Background(), ToolSetup{Cwd: cwd, Exec: mgr})
	if err != nil {
		t.Fatal(err)
	}
	if r := tl.Agent.Run(context.Background(), "read "+tmp+"/made/SKILL.md"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "made-in-tmp") {
		t.Errorf("read of a file a command made in /tmp: %+v", r)
	}
	if err := os.Symlink(filepath.Join(hostDir, "secret.txt"), filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(hostDir, "secret.txt"), "link", tmp + "/link/secret.txt"} {
		if r := tl.Agent.Run(context.Background(), "read "+p); r.ExitCode == 0 || strings.Contains(r.Stdout, "HOST-SECRET") {
			t.Errorf("read %s reached the host's /tmp: %+v", p, r)
		}
	}
	if r := tl.Agent.Run(context.Background(), "write link pwned"); r.ExitCode == 0 {
		t.Errorf("write through a link into the host's /tmp: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(hostDir, "secret.txt")); string(b) != "HOST-SECRET\n" {
		t.Errorf("the host's file was changed: %q", b)
	}
}

// TestRedTeamReadOnlyAgentHostTmp: an explore sub-agent's sandbox has a
// private tmpfs at /tmp, so its commands see neither the host's /tmp nor
// anything of the agent's; its in-process read, which acts on the host,
// read the host's /tmp all the same. Now read agrees with the commands: the
// host's /tmp is refused (named directly or through a link in the project),
// and so is a file a command left in the tmpfs, which read cannot see, with
// a reason saying to use a command.
func TestRedTeamReadOnlyAgentHostTmp(t *testing.T) {
	testutil.RequireSandbox(t)
	home, cwd := t.TempDir(), testutil.OutsideTmp(t)
	writeTestFile(t, filepath.Join(home, "sandbox.json"), `{"enabled": true}`)
	writeTestFile(t, filepath.Join(cwd, "README"), "project\n")
	a := testApp(t, home)
	mgr, err := a.NewSandbox(SandboxOptions{Cwd: cwd, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown()
	if !mgr.Enabled() {
		testutil.SkipOrFail(t, "the sandbox is off on this machine: %v", mgr.Status())
	}
	tl, err := a.NewTool(context.Background(), ToolSetup{Cwd: cwd, Exec: mgr, Paths: mgr})
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret.txt") // in the host's /tmp
	writeTestFile(t, secret, "HOST-SECRET\n")
	if err := os.Symlink(secret, filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}

	tmp := "/tmp" // a tmpfs under bubblewrap; under Landlock TMPDIR, a private scratch directory
	if testutil.UnderLandlock() {
		tmp = "$TMPDIR"
	}
	if r, err := mgr.Execute(context.Background(), "cat "+secret+"; echo scratch > "+tmp+"/scratch.txt && cat "+tmp+"/scratch.txt", ""); err != nil ||
		strings.Contains(r.Stdout, "HOST-SECRET") || !strings.Contains(r.Stdout, "scratch") {
		t.Fatalf("native commands: %+v %v (want the host file unseen and the tmpfs writable)", r, err)
	}
	if r := tl.Agent.Run(context.Background(), "read README"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "project") {
		t.Fatalf("read in the project: %+v", r)
	}
	for _, p := range []string{secret, "link"} {
		r := tl.Agent.Run(context.Background(), "read "+p)
		if r.ExitCode == 0 || strings.Contains(r.Stdout, "HOST-SECRET") {
			t.Errorf("read %s reached the host's /tmp: %+v", p, r)
		}
	}
	if testutil.UnderLandlock() {
		return // no tmpfs there: TMPDIR is a host directory read sees as commands do
	}
	r := tl.Agent.Run(context.Background(), "read /tmp/scratch.txt")
	if r.ExitCode == 0 || !strings.Contains(r.Stderr+r.BlockedReason, "cat") {
		t.Errorf("read of a file in the agent's tmpfs: %+v, want a refusal pointing to a command", r)
	}
}
