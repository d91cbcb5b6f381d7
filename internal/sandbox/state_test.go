package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStatePersistsWithinOneSandbox(t *testing.T) {
	f := newFixture(t, nil)
	f.run(t, "cd /tmp && export FOO=bar")
	if got := f.run(t, "pwd").Stdout; got != "/tmp" {
		t.Fatalf("pwd = %q, want /tmp", got)
	}
	if got := f.run(t, "echo $FOO").Stdout; got != "bar" {
		t.Fatalf("FOO = %q, want bar", got)
	}
	if f.m.Cwd() != "/tmp" {
		t.Fatalf("manager Cwd = %q", f.m.Cwd())
	}
}

func TestRebuildResetsShellState(t *testing.T) {
	f := newFixture(t, nil)
	f.run(t, "cd /tmp && export FOO=bar")
	extra := t.TempDir()
	if err := f.m.AddRuntimeWhitelist(extra); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, "pwd").Stdout; got == "/tmp" || got != f.ws {
		t.Fatalf("pwd after rebuild = %q, want the initial %q", got, f.ws)
	}
	if got := f.run(t, "echo \"[$FOO]\"").Stdout; got != "[]" {
		t.Fatalf("FOO after rebuild = %q, want empty", got)
	}
	// And the new path is writable in the new sandbox.
	if res := f.run(t, "echo x > '"+extra+"/f'"); res.ExitCode != 0 {
		t.Fatalf("write to the runtime whitelist failed: %+v", res)
	}
}

func TestRestartResetsState(t *testing.T) {
	f := newFixture(t, nil)
	f.run(t, "cd / && export FOO=bar")
	if err := f.m.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := f.run(t, "pwd; echo \"[$FOO]\"").Stdout; got != f.ws+"\n[]" {
		t.Fatalf("after restart: %q", got)
	}
}

func TestDisposeReleasesSessionAndPlatform(t *testing.T) {
	f := newFixture(t, nil)
	b, err := f.m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lb := b.(*LocalBackend)
	state := lb.plat.stateDir
	marker := filepath.Join(state, "empty") // bwrap's file mounted over hidden ones
	if underLandlock() {
		marker = filepath.Join(state, "tmp") // a read-only sandbox's scratch
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("platform state missing: %v", err)
	}
	if err := f.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if lb.sess.Alive() {
		t.Fatal("session still alive after dispose")
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Fatalf("platform state dir still there: %v", err)
	}
	if _, err := b.Execute(context.Background(), "echo hi"); err == nil {
		t.Fatal("a disposed backend ran a command")
	}
}

func TestPathsWithSpacesSymlinksAndMissingEntries(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real dir")
	link := filepath.Join(root, "link dir")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(root, "does not exist")
	f := newFixture(t, func(o *ManagerOptions) {
		o.Config.Policy.Whitelist = []string{link, missing}
	})
	// The workspace path itself has a space; writes there and via the link work.
	res := f.run(t, "echo a > 'in ws.txt' && echo b > '"+link+"/via link.txt' && cat 'in ws.txt' '"+real+"/via link.txt'")
	if res.ExitCode != 0 || res.Stdout != "a\nb" {
		t.Fatalf("res = %+v", res)
	}
	st := f.m.Status()
	if !strings.Contains(strings.Join(st.MissingWhitelist, "\n"), "does not exist") || !strings.Contains(st.String(), "missing: skipped") {
		t.Fatalf("missing entry not reported: %+v", st.MissingWhitelist)
	}
}

// The in-process check follows the policy the shell runs under, not the
// shell's current directory: after `cd` out of the workspace, file commands
// may not write there (as native commands may not), and relative paths
// resolve against the new directory.
func TestCheckPathAfterCdOutsideWorkspace(t *testing.T) {
	f := newFixture(t, nil)
	outside := t.TempDir()
	if res := f.run(t, "cd '"+outside+"' && pwd"); res.Stdout != outside {
		t.Fatalf("cd: %+v", res)
	}
	if res := f.run(t, "touch native.txt"); !res.Blocked {
		t.Errorf("native write after cd was not blocked: %+v", res)
	}
	for _, p := range []string{"rel.txt", filepath.Join(outside, "abs.txt")} {
		if blocked, _, resource := f.m.CheckPath(p, true); !blocked || resource != filepath.Join(outside, filepath.Base(p)) {
			t.Errorf("CheckPath(%s, write) after cd = %v %q, want blocked on %s", p, blocked, resource, filepath.Join(outside, filepath.Base(p)))
		}
	}
	if blocked, _, _ := f.m.CheckPath(filepath.Join(f.ws, "in.txt"), true); blocked {
		t.Error("CheckPath refused the workspace")
	}
	if st := f.m.Status(); !slices.Contains(st.Policy.Whitelist, f.ws) || slices.Contains(st.Policy.Whitelist, outside) {
		t.Errorf("status whitelist follows the cd: %v", st.Policy.Whitelist)
	}
}

// A shell Prepare started is the one the commands use, and it lives on
// after Prepare's creation (and its context) ended: the first command's
// process is a child of it, and the state it sets stays for the next.
func TestPreparedShellServesTheCommands(t *testing.T) {
	f := newFixture(t, nil)
	f.m.Prepare()
	prepared(t, f.m)
	b, err := f.m.GetSandbox(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f.run(t, "export FOO=bar")
	if got := f.run(t, "echo \"[$FOO]\"").Stdout; got != "[bar]" {
		t.Fatalf("FOO = %q, want the state of one shell", got)
	}
	if now, _ := f.m.GetSandbox(context.Background()); now != b {
		t.Fatal("the commands made a sandbox of their own")
	}
}
