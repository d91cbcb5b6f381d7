package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// hgHost runs Mercurial on the host, as the user would after the agent's
// turn, with no configuration but the repository's own (.hg/hgrc). It
// returns the combined output; a failure is not fatal (a disabled
// repository is no repository to hg).
func hgHost(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("hg", append([]string{"--cwd", dir}, args...)...)
	c.Env = append(os.Environ(), "HGRCPATH=", "HGPLAIN=1", "HGUSER=t <t@t>")
	out, _ := c.CombinedOutput()
	return string(out)
}

// TestRedTeamMercurialControlFiles: Mercurial runs the hooks and loads the
// extensions of a repository's .hg/hgrc on every command, as git runs
// core.fsmonitor. The attack: plant a pre-status hook by every route (a
// new hgrc in an existing repository, appending to an existing hgrc, a new
// nested repository, a bare planted .hg directory, in-process write), then
// run `hg status` on the host; the hook must never run.
func TestRedTeamMercurialControlFiles(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "hg")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	hook := `[hooks]\npre-status = touch ` + mark + `\n`
	withRC := filepath.Join(f.ws, "withrc")
	for _, d := range []string{f.ws, withRC} {
		if out, err := exec.Command("hg", "init", d).CombinedOutput(); err != nil {
			t.Fatalf("hg init %s: %v\n%s", d, err, out)
		}
	}
	writeFile(t, filepath.Join(withRC, ".hg", "hgrc"), "[paths]\ndefault = https://example.org/repo\n")

	// In-process: the agent shell's write and edit.
	sh := agentsh.New(agentsh.Options{Exec: f.m, Paths: f.m})
	if res := sh.Run(context.Background(), "edit withrc/.hg/hgrc 'https://example.org/repo' 'x\n[hooks]\npre-status = touch "+mark+"'"); !res.Blocked {
		t.Errorf("edit withrc/.hg/hgrc was not refused: %+v", res)
	}
	for _, p := range []string{".hg/hgrc", "withrc/.hg/hgrc", "fresh/.hg/hgrc", ".hg/hgrc-not-shared", ".hg/sharedpath"} {
		res := sh.Run(context.Background(), "write "+p+" '[hooks]\npre-status = touch "+mark+"\n'")
		if !res.Blocked {
			t.Errorf("write %s was not refused: %+v", p, res)
		}
	}

	// Native: names built at run time, so only the mounts and the checks
	// after the command stand in the way.
	res := f.run(t, "h=.hg; printf '"+hook+"' > $h/hgrc; printf '"+hook+"' >> withrc/$h/hgrc; "+
		"hg init nested && printf '"+hook+"' > nested/$h/hgrc; "+
		"mkdir -p planted/$h && printf '"+hook+"' > planted/$h/hgrc && echo dotencode > planted/$h/requires; true")
	for _, want := range []string{
		"removed " + filepath.Join(f.ws, ".hg", "hgrc"),
		"disabled a new Mercurial repository at " + filepath.Join(f.ws, "nested", ".hg"),
		"disabled a new Mercurial repository at " + filepath.Join(f.ws, "planted", ".hg"),
	} {
		if !strings.Contains(res.Stderr, want) {
			t.Errorf("the command's output does not say %q:\n%s", want, res.Stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(withRC, ".hg", "hgrc")); strings.Contains(string(b), "hooks") {
		t.Errorf("the existing hgrc was changed:\n%s", b)
	}
	// A harmless new repository (hg init, a clone's [paths]) is left alone.
	res = f.run(t, "hg init plain && printf '[paths]\\ndefault = https://example.org/r\\n' > plain/.hg/hgrc")
	if strings.Contains(res.Stderr, "disabled") {
		t.Errorf("a harmless new repository was disabled: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "plain", ".hg", "hgrc")); err != nil {
		t.Errorf("the harmless repository's hgrc: %v", err)
	}
	for _, d := range []string{f.ws, withRC, filepath.Join(f.ws, "nested"), filepath.Join(f.ws, "planted"), filepath.Join(f.ws, "plain")} {
		hgHost(t, d, "status")
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("hg on the host ran a hook planted by the sandbox")
	}
	// Ordinary work still works: commit in the existing repository.
	if res := f.run(t, "echo x > a.txt && hg add -q a.txt && HGUSER='t <t@t>' hg commit -q -m x && hg log -T '{desc}'"); res.ExitCode != 0 || res.Stdout != "x" {
		t.Errorf("hg commit in the sandbox: %+v", res)
	}
}

// TestRedTeamRebaseState: a todo list with exec lines, planted in an
// existing repository's .git/rebase-merge (or a custom merge strategy in
// .git/sequencer/opts), runs its commands on the host at the user's next
// `git rebase --continue` (or `git cherry-pick --continue`). The sandbox
// renames such state aside after the command and says so; a rebase a
// command started and that stopped on a conflict stays as it is.
func TestRedTeamRebaseState(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	gitHost(t, f.ws, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(f.ws, "a.txt"), "base\n")
	gitHost(t, f.ws, "add", "a.txt")
	gitHost(t, f.ws, "commit", "-q", "-m", "base")
	env := "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; "

	// A real rebase that stops on a conflict, started by a command: kept.
	res := f.run(t, env+"git checkout -q -b topic && echo topic > a.txt && git commit -qam topic && "+
		"git checkout -q main && echo main > a.txt && git commit -qam main && git checkout -q topic && "+
		"(git rebase main >/dev/null 2>&1; test -d .git/rebase-merge && echo stopped)")
	if res.Stdout != "stopped" || strings.Contains(res.Stderr, "rebase") {
		t.Fatalf("the conflicting rebase: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, ".git", "rebase-merge", "git-rebase-todo")); err != nil {
		t.Fatalf("an ordinary stopped rebase lost its state: %v", err)
	}
	// In-process write and edit are refused there outright.
	sh := agentsh.New(agentsh.Options{Exec: f.m, Paths: f.m})
	if res := sh.Run(context.Background(), "write .git/rebase-merge/git-rebase-todo 'exec touch "+mark+"'"); !res.Blocked {
		t.Errorf("in-process write of the todo list was not refused: %+v", res)
	}
	// The next command adds an exec line to that rebase's todo list.
	res = f.run(t, "g=.git; echo 'exec touch "+mark+"' >> $g/rebase-merge/git-rebase-todo")
	if !strings.Contains(res.Stderr, "rebase-merge") || !strings.Contains(res.Stderr, "touch "+mark) {
		t.Errorf("the planted exec line was not reported: %+v", res)
	}
	// The user resolves the conflict and continues the rebase on the host.
	writeFile(t, filepath.Join(f.ws, "a.txt"), "resolved\n")
	gitHost(t, f.ws, "add", "a.txt")
	c := exec.Command("git", "-C", f.ws, "rebase", "--continue")
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_EDITOR=true", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, _ := c.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("git rebase --continue on the host ran an exec line planted by the sandbox:\n%s", out)
	}
	gitHost(t, f.ws, "checkout", "-q", "-f", "main")

	// Planted from nothing: rebase-merge, and the sequencer's options with
	// a merge strategy that names a program in the project.
	res = f.run(t, "g=.git; h=$(git rev-parse HEAD); mkdir -p $g/rebase-merge && (cd $g/rebase-merge && "+
		"echo refs/heads/main > head-name && echo $h > onto && echo $h > orig-head && touch interactive && "+
		"printf 'exec touch "+mark+"\\n' > git-rebase-todo)")
	if !strings.Contains(res.Stderr, "rebase-merge") {
		t.Errorf("the planted rebase-merge was not reported: %+v", res)
	}
	c = exec.Command("git", "-C", f.ws, "rebase", "--continue")
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_EDITOR=true", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	_, _ = c.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git rebase --continue on the host ran a todo list planted by the sandbox")
	}
	// The cherry-pick sequencer's options name a merge strategy; git runs
	// `git-merge-<name>`, and with a name like ../../evil that is a path
	// into the project (through a directory called git-merge-..).
	gitHost(t, f.ws, "checkout", "-q", "-b", "side")
	for _, n := range []string{"b", "c"} {
		writeFile(t, filepath.Join(f.ws, n), n+"\n")
		gitHost(t, f.ws, "add", n)
		gitHost(t, f.ws, "commit", "-q", "-m", n)
	}
	gitHost(t, f.ws, "checkout", "-q", "main")
	res = f.run(t, "g=.git; mkdir -p git-merge-.. $g/sequencer && printf '#!/bin/sh\\ntouch "+mark+"\\n' > evil && chmod +x evil && "+
		"git rev-parse HEAD > $g/sequencer/head && printf 'pick %s b\\npick %s c\\n' $(git rev-parse side~1) $(git rev-parse side) > $g/sequencer/todo && "+
		"printf '[options]\\n\\tstrategy = ../../evil\\n' > $g/sequencer/opts")
	if !strings.Contains(res.Stderr, "sequencer") || !strings.Contains(res.Stderr, "merge strategy ../../evil") {
		t.Errorf("the planted sequencer state was not reported: %+v", res)
	}
	c = exec.Command("git", "-C", f.ws, "cherry-pick", "--continue")
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_EDITOR=true", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, _ = c.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("git cherry-pick --continue on the host ran a merge strategy planted by the sandbox:\n%s", out)
	}
}

// TestRedTeamBackgroundPlant: a job a command leaves running in the
// background plants a repository after the check that follows the command.
// It is disabled while the session is idle (before the user's own git runs
// in the window), before the next command, and before the host commands
// Synapse runs itself (Settle); and the session's end kills such jobs.
func TestRedTeamBackgroundPlant(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	env := "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; "
	plant := func(name string, delay string) string {
		return "(" + env + "sleep " + delay + "; git init -q " + name + " && git -C " + name + " config core.fsmonitor 'touch " + mark + "; :') >/dev/null 2>&1 & disown; echo started"
	}
	hostStatus := func(dir string) {
		c := exec.Command("git", "-C", dir, "status", "--short")
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = c.CombinedOutput()
	}
	// While idle: the user's git in another terminal, a moment after the
	// job planted the repository.
	if res := f.run(t, plant("evil", "0.5")); res.Stdout != "started" {
		t.Fatalf("start the job: %+v", res)
	}
	evil := filepath.Join(f.ws, "evil")
	// The job plants; the idle watcher must disable the repository while
	// no command runs (within a few seconds even on a loaded machine; in
	// practice milliseconds), before the user's git in another terminal.
	armed := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(evil, ".git", "config")); err == nil && strings.Contains(string(b), "fsmonitor") {
			armed = true
		}
		if matches, _ := filepath.Glob(filepath.Join(evil, ".git.synapse-disabled-*")); len(matches) > 0 {
			armed = true
			break
		}
		if armed && time.Now().After(deadline.Add(-5*time.Second)) {
			break
		}
	}
	if !armed {
		t.Fatal("the background job never planted its repository")
	}
	hostStatus(evil)
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("host git ran what a background job planted while the session was idle")
	}
	// The next command reports what was disabled while idle.
	if res := f.run(t, "true"); !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(evil, ".git")) {
		t.Errorf("the next command does not report the repository disabled while idle: %+v", res)
	}

	// Before a host command of Synapse's own (a `!` line, a user hook):
	// Settle. The idle watcher is stopped here, as on a system without
	// inotify, so only Settle stands between the job and host git.
	f.m.mu.Lock()
	b := f.m.backend.(*LocalBackend)
	f.m.mu.Unlock()
	b.stopIdle()
	f.run(t, plant("evil2", "0"))
	evil2 := filepath.Join(f.ws, "evil2")
	testutil.WaitFor(t, "the job to plant evil2", func() bool {
		b, err := os.ReadFile(filepath.Join(evil2, ".git", "config"))
		return err == nil && strings.Contains(string(b), "fsmonitor")
	})
	if report := strings.Join(f.m.Settle(), "\n"); !strings.Contains(report, "disabled a new git repository at "+filepath.Join(evil2, ".git")) {
		t.Errorf("Settle does not report the planted repository: %q", report)
	}
	hostStatus(evil2)
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("host git after Settle ran what a background job planted")
	}

	// The session's end kills the jobs, even one that left the shell's
	// session (setsid): nothing is planted after it.
	f.run(t, plant("late", "1"))
	f.run(t, "setsid -f sh -c 'sleep 1; mkdir late2' </dev/null >/dev/null 2>&1; echo ok")
	if err := f.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Lstat(filepath.Join(f.ws, "late2")); err == nil {
		t.Error("a job started with setsid outlived the session")
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "late")); err == nil {
		hostStatus(filepath.Join(f.ws, "late"))
		t.Errorf("a background job outlived the session and planted a repository (host git ran it: %v)", func() bool { _, err := os.Stat(mark); return err == nil }())
	}
}

// TestRedTeamRebuildKeepsCheckingNewRepos: a grant rebuilds the sandbox,
// whose new scan would take a repository a command created before for one
// of the project's own and stop checking it; but an extension process
// started earlier (a stdio MCP server) is not held by the new sandbox's
// read-only mounts and can still arm it. The repository stays checked.
func TestRedTeamRebuildKeepsCheckingNewRepos(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	if res := f.run(t, "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; git init -q plain && echo made"); res.Stdout != "made" || strings.Contains(res.Stderr, "disabled") {
		t.Fatalf("git init: %+v", res)
	}
	granted := filepath.Join(t.TempDir(), "granted.txt")
	writeFile(t, granted, "")
	if err := f.m.AddRuntimeWhitelist(granted); err != nil {
		t.Fatal(err)
	}
	f.run(t, "echo x > "+granted) // the rebuilt sandbox
	// What the earlier extension process does, outside the new mounts.
	cfg := filepath.Join(f.ws, "plain", ".git", "config")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(b, []byte("[core]\n\tfsmonitor = touch "+mark+"; :\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := f.run(t, "true"); !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "plain", ".git")) {
		t.Errorf("the repository armed after the rebuild was not disabled: %+v", res)
	}
	c := exec.Command("git", "-C", filepath.Join(f.ws, "plain"), "status", "--short")
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	_, _ = c.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("host git ran what was planted in a repository after the sandbox was rebuilt")
	}
}

// TestSettleDoesNotWaitForACommand: a hook or a sub-agent calls Settle
// while the shell may be running a long build; the build's own check
// follows it, so Settle returns at once rather than after the build.
func TestSettleDoesNotWaitForACommand(t *testing.T) {
	f := newFixture(t, nil)
	f.run(t, "true") // the sandbox exists
	ctx, cancel := context.WithCancel(context.Background())
	cmdDone := make(chan struct{})
	go func() {
		defer close(cmdDone)
		_, _ = f.m.Execute(ctx, "echo started > started; sleep 30", "")
	}()
	testutil.WaitFor(t, "the command to start", func() bool { _, err := os.Stat(filepath.Join(f.ws, "started")); return err == nil })
	settled := make(chan struct{})
	go func() {
		f.m.Settle()
		close(settled)
	}()
	select {
	case <-settled:
	case <-cmdDone:
		t.Error("Settle waited for the running command to end")
	}
	cancel()
	<-cmdDone
}

// TestRedTeamHgrcNamedWorktreePaths: the project's .hg/hgrc is read-only,
// but it can name files in the writable worktree that hg runs or reads:
// a %include next to the project, a hook script, an extension's Python
// file. A command rewrote them and the user's next hg status ran its
// code. They are kept read-only (a missing one removed when it appears),
// for write and edit too.
func TestRedTeamHgrcNamedWorktreePaths(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "hg")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	if out, err := exec.Command("hg", "init", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("hg init: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(f.ws, "tools", "hook.sh"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(f.ws, "tools", "hook.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.ws, "tools", "ext.py"), "")
	writeFile(t, filepath.Join(f.ws, ".hg", "hgrc"), "%include ../.hgrc-shared\n[hooks]\npre-status = ./tools/hook.sh\n[extensions]\nmyext = ./tools/ext.py\n")
	for _, p := range []string{".hgrc-shared", "tools/hook.sh", "tools/ext.py"} {
		if blocked, _, _ := f.m.CheckPath(filepath.Join(f.ws, p), true); !blocked {
			t.Errorf("a write of %s, which the project's hgrc names, was not refused", p)
		}
	}
	f.run(t, "printf '#!/bin/sh\\ntouch "+mark+"\\n' > tools/hook.sh; printf 'open(\""+mark+"\", \"w\")\\n' > tools/ext.py; "+
		"printf '[hooks]\\npre-status.x = touch "+mark+"\\n' > .hgrc-shared; true")
	for _, p := range []string{"tools/hook.sh", "tools/ext.py"} {
		if b, _ := os.ReadFile(filepath.Join(f.ws, p)); strings.Contains(string(b), mark) {
			t.Errorf("%s, named by the project's hgrc, was rewritten", p)
		}
	}
	hgHost(t, f.ws, "status")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("hg on the host ran code a command planted in a path the project's hgrc names")
	}
}
