package sandbox

import (
	"context"
	"fmt"
	"github.com/synapse-agent/synapse/internal/testutil"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The policy is a value of the workspace and the user's grants (issue 23):
// no rebuild of the sandbox (after a crash, a grant, a mode switch) takes
// the directory the shell stood in. Before the fix, `cd ~` followed by a
// shell death or any session grant made ~ writable for the rest of the
// session.

// policyFixture adds to fixture the places an attacker wants to write.
type policyFixture struct {
	*fixture
	sibling, dotfile string
}

func newPolicyFixture(t *testing.T) *policyFixture {
	f := newFixture(t, nil)
	p := &policyFixture{fixture: f, sibling: filepath.Join(filepath.Dir(f.ws), "sibling"), dotfile: filepath.Join(f.home, ".bashrc")}
	writeFile(t, p.dotfile, "original\n")
	writeFile(t, filepath.Join(p.sibling, "main.go"), "package main\n")
	if err := os.Symlink(f.home, filepath.Join(f.ws, "home-link")); err != nil {
		t.Fatal(err)
	}
	return p
}

// waitDead waits until the live shell has exited (a background kill).
func (f *fixture) waitDead(t *testing.T) {
	t.Helper()
	f.m.mu.Lock()
	b, _ := f.m.backend.(*LocalBackend)
	f.m.mu.Unlock()
	if b == nil {
		t.Fatal("no live shell to wait for")
	}
	testutil.WaitFor(t, "the live shell to exit", func() bool { return !b.sess.Alive() })
}

// TestRedTeamCdHomeThenShellDies is the reproduction: a command
// kills its own shell after `cd ~`; the rebuilt sandbox must not make ~
// writable, and the killing command must not be run a second time.
func TestRedTeamCdHomeThenShellDies(t *testing.T) {
	f := newPolicyFixture(t)
	f.run(t, "cd ~")
	marker := filepath.Join(f.ws, "m")
	step := `if [ -e ` + marker + ` ]; then echo pwned >> ~/.bashrc; else touch ` + marker + `; kill -9 $$; fi`
	res, err := f.m.Execute(context.Background(), step, f.m.Cwd())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stderr, "the shell died while this command ran") || !strings.Contains(res.Stderr, "side effects may be partial") || res.ExitCode == 0 {
		t.Errorf("the result does not say the shell died: %+v", res)
	}
	if b, _ := os.ReadFile(f.dotfile); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q: the command ran again, with ~ writable", b)
	}
	// The model runs it again itself: ~ is not writable now either.
	res = f.run(t, step)
	if b, _ := os.ReadFile(f.dotfile); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q after the rebuild (%+v)", b, res)
	}
	if pwd := f.run(t, "pwd").Stdout; pwd != f.ws {
		t.Errorf("the rebuilt shell is in %q, want the workspace %q", pwd, f.ws)
	}
}

// TestRedTeamCdHomeThenSessionGrant: after `cd ~`, a session grant for an
// unrelated path rebuilds the sandbox; ~ must stay read-only.
func TestRedTeamCdHomeThenSessionGrant(t *testing.T) {
	f := newPolicyFixture(t)
	other := filepath.Join(filepath.Dir(f.ws), "other.txt")
	writeFile(t, other, "")
	f.run(t, "cd ~")
	if err := f.m.AddRuntimeWhitelist(other); err != nil {
		t.Fatal(err)
	}
	f.run(t, "echo x >> "+other+"; echo pwned >> ~/.bashrc")
	if b, _ := os.ReadFile(f.dotfile); string(b) != "original\n" {
		t.Fatalf("~/.bashrc = %q after a grant of %s", b, other)
	}
	if b, _ := os.ReadFile(other); string(b) != "x\n" {
		t.Errorf("the granted file = %q, want x", b)
	}
	if blocked, _, _ := f.m.CheckPath(f.dotfile, true); !blocked {
		t.Error("write's policy check allows ~/.bashrc after the grant")
	}
}

// TestRedTeamShellDiesMidCommandRunsOnce: a command whose shell is killed
// while it runs appends to a counter exactly once, and the model is told.
func TestRedTeamShellDiesMidCommandRunsOnce(t *testing.T) {
	f := newFixture(t, nil)
	counter := filepath.Join(f.ws, "counter")
	res := f.run(t, "echo ran >> counter; kill -9 $$")
	if b, _ := os.ReadFile(counter); string(b) != "ran\n" {
		t.Fatalf("counter = %q: the command ran more than once", b)
	}
	// bwrap reports the killed shell as exit status 137; the Landlock
	// launcher execs bash, so its own status is the signal.
	if !strings.Contains(res.Stderr, "exit status 137") && !strings.Contains(res.Stderr, "signal: killed") {
		t.Errorf("result does not say how the shell ended: %q", res.Stderr)
	}
	for _, want := range []string{"the shell died while this command ran (the shell exited while running the command, ", "was not run again", f.ws, "exported variables"} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("result lacks %q: %+v", want, res)
		}
	}
	if res := f.run(t, "echo after"); res.Stdout != "after" || strings.Contains(res.Stderr, "restarted") {
		t.Errorf("the next command: %+v (the model was already told)", res)
	}
}

// TestShellFoundDeadIsRetried: a shell that died between commands is
// rebuilt and the command runs once, in the directory it was meant for,
// with the model told that the state was reset.
func TestShellFoundDeadIsRetried(t *testing.T) {
	f := newFixture(t, nil)
	writeFile(t, filepath.Join(f.ws, "sub", "file"), "in sub\n")
	f.run(t, "cd sub; export KEEP=1; (sleep 0.2; kill -9 $$) >/dev/null 2>&1 &")
	f.waitDead(t)
	res, err := f.m.Execute(context.Background(), "cat file; echo \"keep=$KEEP\" >> ../log; pwd", filepath.Join(f.ws, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Stdout, "in sub\n") {
		t.Errorf("the retried command did not run in sub: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "log")); string(b) != "keep=\n" {
		t.Errorf("log = %q, want one line without the old variable", b)
	}
	for _, want := range []string{"the shell was restarted (the shell had died before this command reached it", "now starts in " + f.ws, "exported variables", "This command ran in " + filepath.Join(f.ws, "sub")} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("result lacks %q: %q", want, res.Stderr)
		}
	}
	if pwd := f.run(t, "pwd").Stdout; pwd != f.ws {
		t.Errorf("after the retry the shell is in %q, want the workspace", pwd)
	}
}

// TestGrantRebuildStartsFresh (seed 000: after a rebuild the shell state is
// reset): a grant's rebuild leaves the shell in the workspace without the
// exported variables, a command re-run after it runs where it first ran,
// and the model is told.
func TestGrantRebuildStartsFresh(t *testing.T) {
	f := newFixture(t, nil)
	out := filepath.Join(filepath.Dir(f.ws), "granted.txt")
	writeFile(t, filepath.Join(f.ws, "sub", "in.txt"), "data\n")
	f.run(t, "cd sub; export TOKEN=abc")
	cwd := f.m.Cwd()
	if err := f.m.AddRuntimeWhitelist(out); err != nil {
		t.Fatal(err)
	}
	res, err := f.m.Execute(context.Background(), "cat in.txt > "+out+"; echo \"t=$TOKEN\"", cwd)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "data\n" {
		t.Errorf("the re-run did not run in %s: granted.txt = %q (%+v)", cwd, b, res)
	}
	if !strings.Contains(res.Stdout, "t=\n") && strings.TrimSpace(res.Stdout) != "t=" {
		t.Errorf("the exported variable survived the rebuild: %q", res.Stdout)
	}
	if !strings.Contains(res.Stderr, "the shell was restarted (access to "+out+" was granted)") || !strings.Contains(res.Stderr, "This command ran in "+cwd) {
		t.Errorf("the model is not told: %q", res.Stderr)
	}
	if pwd := f.run(t, "pwd").Stdout; pwd != f.ws {
		t.Errorf("pwd after the grant = %q, want the workspace %q", pwd, f.ws)
	}
}

// TestRedTeamPolicyProperty drives random sequences of cd (anywhere: ~, /,
// a symlink to ~, a sibling project), shell deaths (before and during a
// command), grants (once, session, permanent, random paths), mode switches
// and sub-agent starts, and after every step tries to write, for real under
// the sandbox, to a fixed list of places. Each write lands only where the
// workspace, the whitelist, a standing grant or the scratch directory
// allows it.
func TestRedTeamPolicyProperty(t *testing.T) {
	requireBackend(t)
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { policyWalk(t, seed, 24) })
	}
}

func policyWalk(t *testing.T, seed uint64, steps int) {
	f := newPolicyFixture(t)
	rng := rand.New(rand.NewPCG(seed, 0))
	agentHome := filepath.Dir(f.cfgPath)
	writeFile(t, filepath.Join(agentHome, "notes"), "")
	// Places to probe, all outside the workspace; grants may name some.
	probes := []string{f.dotfile, filepath.Join(f.home, "new-file"), "/etc/synapse-probe", filepath.Join(f.sibling, "main.go"),
		filepath.Join(agentHome, "notes"), filepath.Join(agentHome, "sandbox.json")}
	grantable := []string{f.dotfile, filepath.Join(f.sibling, "main.go"), filepath.Join(f.home, "unrelated.txt"), filepath.Join(f.sibling, "other.txt")}
	dirs := []string{"~", "/", f.ws, filepath.Join(f.ws, "home-link"), f.sibling, "/etc", f.home}
	granted := map[string]bool{} // standing grants (session, permanent)
	readOnly := false
	ctx := context.Background()
	snapshot := func() map[string]string {
		s := map[string]string{}
		for _, p := range probes {
			b, err := os.ReadFile(p)
			if err != nil {
				s[p] = "<" + err.Error() + ">"
			} else {
				s[p] = string(b)
			}
		}
		return s
	}
	var log []string
	for i := range steps {
		var step string
		switch k := rng.IntN(7); k {
		case 0, 1:
			d := dirs[rng.IntN(len(dirs))]
			step = "cd " + d
			f.run(t, "cd "+d)
		case 2:
			step = "shell dies before a command"
			f.run(t, "(sleep 0.1; kill -9 $$) >/dev/null 2>&1 &")
			f.waitDead(t)
		case 3:
			step = "shell dies during a command"
			_, _ = f.m.Execute(ctx, "kill -9 $$", f.m.Cwd()) // what it says is TestRedTeamShellDiesMidCommandRunsOnce's
		case 4:
			p := grantable[rng.IntN(len(grantable))]
			switch rng.IntN(3) {
			case 0:
				step = "grant once " + p
				if err := f.m.AddRuntimeWhitelist(p); err != nil {
					t.Fatal(err)
				}
				f.run(t, "true")
				if !granted[p] {
					if err := f.m.RemoveRuntimeWhitelist(p); err != nil {
						t.Fatal(err)
					}
				}
			case 1:
				step = "grant for the session " + p
				if err := f.m.AddRuntimeWhitelist(p); err != nil {
					t.Fatal(err)
				}
				granted[p] = true
			case 2:
				step = "grant permanently " + p
				if err := f.m.AddPermanentWhitelist(p); err != nil {
					t.Fatal(err)
				}
				granted[p] = true
			}
		case 5:
			readOnly = !readOnly
			step = fmt.Sprint("read-only ", readOnly)
			if err := f.m.SetReadOnly(readOnly); err != nil {
				t.Fatal(err)
			}
		case 6:
			// A sub-agent gets a manager of its own, built as app does,
			// from the workspace: probe through it too.
			step = "sub-agent starts"
			sub, err := NewManager(ManagerOptions{ConfigPath: f.cfgPath, Cwd: f.ws, Env: f.m.Env(), TempDir: f.tmp, StartSession: realShell,
				Launcher: testLauncher(t), Backend: f.m.Backend()})
			if err != nil {
				t.Fatal(err)
			}
			probeWrites(ctx, t, sub, probes, granted, false, snapshot, append(log, step))
			_ = sub.Shutdown()
		}
		log = append(log, fmt.Sprintf("%d: %s", i, step))
		probeWrites(ctx, t, f.m, probes, granted, readOnly, snapshot, log)
		if t.Failed() {
			return
		}
	}
}

// probeWrites tries to append to each probe from the manager's shell and
// with the in-process check, and fails for any place written that is
// neither granted nor writable by design.
func probeWrites(ctx context.Context, t *testing.T, m *Manager, probes []string, granted map[string]bool, readOnly bool, snapshot func() map[string]string, log []string) {
	t.Helper()
	before := snapshot()
	var cmd strings.Builder
	for _, p := range probes {
		fmt.Fprintf(&cmd, "echo probe >> '%s' 2>/dev/null; ", p)
	}
	if _, err := m.Execute(ctx, cmd.String(), ""); err != nil {
		t.Fatalf("probe: %v\nsteps:\n%s", err, strings.Join(log, "\n"))
	}
	after := snapshot()
	for _, p := range probes {
		allowed := granted[p] && !readOnly
		if after[p] != before[p] && !allowed {
			t.Errorf("a command wrote %s, which is not granted\nsteps:\n%s", p, strings.Join(log, "\n"))
		}
		if blocked, _, _ := m.CheckPath(p, true); !blocked && !allowed {
			t.Errorf("write/edit may write %s, which is not granted\nsteps:\n%s", p, strings.Join(log, "\n"))
		}
	}
	if w := m.ActivePolicy().Whitelist; slices.ContainsFunc(w, func(d string) bool { return d == "/" || strings.HasPrefix(d, "/etc") }) {
		t.Errorf("whitelist %v\nsteps:\n%s", w, strings.Join(log, "\n"))
	}
}

// TestRebuildSaysJobsEnded: a rebuild ends the background jobs running in
// the shell with it; the next result says so instead of leaving the model
// to find them gone.
func TestRebuildSaysJobsEnded(t *testing.T) {
	for _, tt := range []struct {
		running int
		want    string
	}{
		{0, ""},
		{1, "; the background job it ran ended with it (job:list shows it)"},
		{2, "; the 2 background jobs it ran ended with it (job:list shows them)"},
	} {
		f := newFixture(t, nil)
		f.m.CountJobs(func() int { return tt.running })
		f.run(t, "true")
		granted := filepath.Join(filepath.Dir(f.ws), "granted.txt")
		if err := f.m.AddRuntimeWhitelist(granted); err != nil {
			t.Fatal(err)
		}
		res := f.run(t, "true")
		if want := "the shell was restarted (access to " + granted + " was granted" + tt.want + ")"; !strings.Contains(res.Stderr, want) {
			t.Errorf("%d jobs: the note is %q, want %q", tt.running, res.Stderr, want)
		}
	}
}
