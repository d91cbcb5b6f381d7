package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// gitEnv is the environment of the sandboxed git the attacks below run:
// no user configuration, a committer.
const gitEnv = "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t; "

// hostGit runs git on the host as the user would after the agent's turn,
// with no configuration but the repository's own; its failure is not
// fatal (a disabled repository is no repository to git).
func hostGit(dir string, args ...string) string {
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, _ := c.CombinedOutput()
	return string(out)
}

// plantIsDisabled runs plant (a command line that ends by planting an
// armed repository) in the sandbox and holds the checks to it: the plant
// succeeded, the repository whose .git is at repo was reported disabled,
// and git status run on the host in statusDir did not run what was armed
// (it would create mark).
func plantIsDisabled(t *testing.T, f *fixture, plant, repo, statusDir, mark string) {
	t.Helper()
	res := f.run(t, plant+" && echo planted")
	if res.Stdout != "planted" {
		t.Fatalf("plant for %s: %+v", repo, res)
	}
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+repo) {
		t.Errorf("the repository at %s was not reported: %q", repo, res.Stderr)
	}
	hostGit(statusDir, "status", "--short")
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("git status on the host ran what was armed in the repository at %s", repo)
	}
}

// TestRedTeamNestedRepoInUnwatchedFolder: git status on the host runs
// `git status` inside every gitlink of the index that holds a .git, and
// that child git runs the nested repository's core.fsmonitor. The index is
// writable inside the sandbox (git needs it), so a repository the watcher
// never looks at is as good as one in the project root. The watcher
// skipped node_modules, .svn and .hg folders and any name containing
// ".synapse-disabled-"; a repository planted there was never checked.
func TestRedTeamNestedRepoInUnwatchedFolder(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	gitHost(t, f.ws, "commit", "-q", "--allow-empty", "-m", "init")
	// Folders that exist when the sandbox starts (skipped by the scan).
	for _, d := range []string{"node_modules/left-pad", ".svn/pristine", "vendor/.hg/store"} {
		if err := os.MkdirAll(filepath.Join(f.ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mark := filepath.Join(t.TempDir(), "pwned")
	for _, p := range []string{
		"node_modules/left-pad/evil",    // an existing node_modules
		"fresh/node_modules/evil",       // a new one
		".svn/pristine/evil",            // an existing .svn
		"vendor/.hg/store/evil",         // inside an existing .hg
		"x.synapse-disabled-0/evil",     // a name the watcher took for its own
		"newhg/.hg/evil",                // inside a new .hg
		"deep/a/b/c/d/e/f/g/h/i/j/evil", // a new deep tree
	} {
		plantIsDisabled(t, f, gitEnv+"mkdir -p "+filepath.Dir(p)+" && git init -q "+p+" && git -C "+p+" commit -q --allow-empty -m e && "+
			"git -C "+p+" config core.fsmonitor 'touch "+mark+"; :' && "+
			"git update-index --add --cacheinfo 160000,$(git -C "+p+" rev-parse HEAD),"+p,
			filepath.Join(f.ws, p, ".git"), f.ws, mark)
	}
}

// TestRedTeamGitConfigParser: the check reads a new repository's config
// with a parser of its own, and every place it reads the file differently
// from git is a way past it. A comment line longer than the scanner's
// buffer ended the look early, a UTF-8 byte-order mark hid an [include]
// section, a second header on one line ([core] [include]) was read as a
// key, and keys git runs that the list did not name passed.
func TestRedTeamGitConfigParser(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	fsmon := `[core]\n\tfsmonitor = "touch ` + mark + `; :"\n`
	for name, plant := range map[string]string{
		"long":   `{ printf '#'; head -c 2000000 /dev/zero | tr '\0' a; printf '\n` + fsmon + `'; } >> $r/.git/config`,
		"bom":    `printf '` + fsmon + `' > $r/.git/evil.cfg && { printf '\xef\xbb\xbf[include]\n\tpath = evil.cfg\n'; cat $r/.git/config; } > $r/x && mv $r/x $r/.git/config`,
		"twohdr": `printf '` + fsmon + `' > $r/.git/evil.cfg && printf '[core] [include] path = evil.cfg\n' >> $r/.git/config`,
		"nosect": `printf '` + fsmon + `' > $r/.git/evil.cfg && { printf 'path = evil.cfg\n'; cat $r/.git/config; } > $r/x && mv $r/x $r/.git/config`,
	} {
		plantIsDisabled(t, f, gitEnv+"r="+name+"; git init -q $r && "+plant,
			filepath.Join(f.ws, name, ".git"), filepath.Join(f.ws, name), mark)
	}
}

// TestRedTeamWatchFollowsNoLink: the checks run on the host with the
// user's rights, on paths a command can change under them. A new
// repository the check had found harmless, whose folder a command then
// replaced with a symlink to a repository outside the project, had that
// outside repository judged (its hook) and renamed aside; a watched folder
// moved away and replaced by a symlink made the next event's walk go
// through the link. Nothing outside the project may be touched.
func TestRedTeamWatchFollowsNoLink(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	outside := t.TempDir()
	var victims []string
	for _, name := range []string{"proj", "other"} {
		v := filepath.Join(outside, name)
		gitHost(t, outside, "init", "-q", v)
		writeFile(t, filepath.Join(v, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n") // a user's own hook (husky, pre-commit)
		victims = append(victims, v)
	}
	f := newFixture(t, nil)
	if err := os.MkdirAll(filepath.Join(f.ws, "watched"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.run(t, gitEnv+"git init -q sub")
	f.run(t, "mv sub sub2 && ln -s "+victims[0]+" sub")
	f.run(t, gitEnv+"git init -q r && mv watched r/.git/watched && ln -s "+outside+" watched && mkdir r/.git/watched/other")
	f.m.Settle()
	for _, v := range victims {
		if _, err := os.Lstat(filepath.Join(v, ".git")); err != nil {
			t.Errorf("the sandbox's check renamed the .git of %s, outside the project: %v", v, err)
		}
	}
}

// TestRedTeamWatchDoesNotHang: the checks run with the backend's lock
// held, so one that blocks hangs every later command. A FIFO opened for
// reading blocks until a writer comes: a `.git` FIFO (read as a .git
// file), a FIFO for the hooks folder of a new repository, or for
// .git/worktrees of the project, each stopped the check for good.
func TestRedTeamWatchDoesNotHang(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	if err := os.Mkdir(filepath.Join(f.ws, "watched"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{
		"mkdir sub && mkfifo sub/.git",
		// A watched folder turned into a FIFO, then more events than the
		// inotify queue holds: every watched folder is read again.
		"mv watched w2 && mkfifo watched && seq 1 20000 | xargs touch && rm -f [0-9]*",
		gitEnv + "git init -q nohooks && rm -rf nohooks/.git/hooks && mkfifo nohooks/.git/hooks",
		"g=.git; mkfifo $g/worktrees",
		gitEnv + "git init -q wf && rm -f wf/.git/config && mkfifo wf/.git/commondir",
	} {
		done := make(chan struct{})
		var res command.Result
		go func() {
			defer close(done)
			res, _ = f.m.Execute(context.Background(), c, "")
		}()
		select {
		case <-done:
			if strings.HasPrefix(c, "mkdir sub") && !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "sub", ".git")) {
				t.Errorf("the .git FIFO was not disabled: %+v", res)
			}
		case <-time.After(20 * time.Second):
			// Unblock the check (open every FIFO for writing, until it is
			// through) so that the test can end.
			for unblocked := false; !unblocked; {
				_ = filepath.WalkDir(f.ws, func(p string, d os.DirEntry, err error) error {
					if err == nil && d.Type()&os.ModeNamedPipe != 0 {
						if fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
							_ = syscall.Close(fd)
						}
					}
					return nil
				})
				select {
				case <-done:
					unblocked = true
				case <-time.After(100 * time.Millisecond):
				}
			}
			t.Fatalf("the check after %q hung", c)
		}
	}
}

// TestRedTeamIdleHeldOpen: a background job opens a harmless new
// repository's config, writes core.fsmonitor into it and keeps the file
// open: no close event comes, and the idle watcher slept while host git
// in another terminal ran the program.
func TestRedTeamIdleHeldOpen(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	if res := f.run(t, gitEnv+"git init -q plain && echo made"); res.Stdout != "made" || strings.Contains(res.Stderr, "disabled") {
		t.Fatalf("git init: %+v", res)
	}
	f.run(t, `(exec 3>>plain/.git/config; sleep 0.5; printf '[core]\n\tfsmonitor = "touch `+mark+`; :"\n' >&3; sleep 60) >/dev/null 2>&1 & disown; echo started`)
	plain := filepath.Join(f.ws, "plain")
	testutil.WaitFor(t, "the idle watcher to disable the repository", func() bool {
		m, _ := filepath.Glob(filepath.Join(plain, ".git.synapse-disabled-*"))
		return len(m) > 0
	})
	hostGit(plain, "status", "--short")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("host git ran what a background job wrote into a config it kept open while the session was idle")
	}
}

// TestRedTeamNewWorktreeConfig: with extensions.worktreeConfig on (git
// sparse-checkout turns it on), git reads each worktree's own
// config.worktree from its admin folder. A command adds an admin folder
// under .git/worktrees with one setting core.fsmonitor, and a checkout
// whose .git file names it; the check looked at the common folder only.
func TestRedTeamNewWorktreeConfig(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	gitHost(t, f.ws, "commit", "-q", "--allow-empty", "-m", "init")
	gitHost(t, f.ws, "config", "extensions.worktreeConfig", "true")
	mark := filepath.Join(t.TempDir(), "pwned")
	plantIsDisabled(t, f, gitEnv+"a=.git/worktrees/evil; mkdir -p $a wt && echo ../.. > $a/commondir && "+
		"git rev-parse HEAD > $a/HEAD && echo \"$PWD/wt/.git\" > $a/gitdir && "+
		"printf '[core]\\n\\tfsmonitor = \"touch "+mark+"; :\"\\n' > $a/config.worktree && "+
		"echo \"gitdir: $PWD/$a\" > wt/.git",
		filepath.Join(f.ws, "wt", ".git"), filepath.Join(f.ws, "wt"), mark)
}

// TestRedTeamGitfileReadAsGitDoes: a new .git file is judged by the
// repository it names, so the check must read the path git reads. It
// took the first line (git takes the whole file: a path with a newline)
// and cleaned l/../r lexically (git goes through the symlink l first).
// The repository itself lives in the private /tmp, whose host path a
// command reads from /proc/self/mountinfo and which no watch covers.
func TestRedTeamGitfileReadAsGitDoes(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	priv := f.m.PrivateTmp()
	tmp := "/tmp" // the private temp directory, as commands name it
	if underLandlock() {
		tmp = priv // not mounted anywhere: commands reach it by its host path
	} else if res := f.run(t, "grep -c ' /tmp ' /proc/self/mountinfo"); res.Stdout == "0" {
		t.Fatalf("the private /tmp is not in mountinfo: %+v", res)
	}
	arm := "git -C \"$r\" config core.fsmonitor 'touch " + mark + "; :'"
	for name, plant := range map[string]string{
		"newline": `r=$(printf '` + tmp + `/r1\nx'); git init -q "$r" && ` + arm + ` && mkdir newline && printf 'gitdir: ` + priv + `/r1\nx/.git\n' > newline/.git`,
		"dotdot":  `r=` + tmp + `/r2; git init -q "$r" && ` + arm + ` && mkdir -p ` + tmp + `/a dotdot && ln -s ` + priv + `/a dotdot/l && printf 'gitdir: l/../r2/.git\n' > dotdot/.git`,
	} {
		plantIsDisabled(t, f, gitEnv+plant, filepath.Join(f.ws, name, ".git"), filepath.Join(f.ws, name), mark)
	}
}

// TestRedTeamIdleMappedConfig: inotify sees no write made through a shared
// mapping. A background job maps a harmless new repository's config
// (padded with a comment) and, once the checks have passed it, writes
// core.fsmonitor through the mapping while the session is idle: no event
// comes at all. The idle watcher also looks again at a fixed pace while
// something only a look can tell about exists (new repositories, folders
// inotify could not watch), so the window is seconds, not until the next
// command.
func TestRedTeamIdleMappedConfig(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	testutil.RequireTool(t, "python3")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	if res := f.run(t, gitEnv+"git init -q plain && printf '#%0200d\\n' 0 >> plain/.git/config && echo made"); res.Stdout != "made" || strings.Contains(res.Stderr, "disabled") {
		t.Fatalf("git init: %+v", res)
	}
	script := `import mmap, sys, time
f = open("plain/.git/config", "r+b")
m = mmap.mmap(f.fileno(), 0)
time.sleep(1)
i = m.find(b"#0")
evil = b"\n[core]\n\tfsmonitor = \"touch ` + mark + `; :\"\n#"
m[i:i+len(evil)] = evil
m.flush()
time.sleep(60)
`
	writeFile(t, filepath.Join(f.ws, "job.py"), script)
	f.run(t, "(python3 job.py) >/dev/null 2>&1 & disown; echo started")
	plain := filepath.Join(f.ws, "plain")
	armed := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(plain, ".git", "config")); err == nil && strings.Contains(string(b), "fsmonitor") {
			armed = true
		}
		if m, _ := filepath.Glob(filepath.Join(plain, ".git.synapse-disabled-*")); len(m) > 0 {
			armed = true
			break
		}
	}
	if !armed {
		t.Fatal("the job never armed the config")
	}
	hostGit(plain, "status", "--short")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("host git ran what a background job wrote through a mapping of a new repository's config while the session was idle")
	}
}

// TestRedTeamRevertFollowsNoLink: after each command the control files
// that appeared where none was at the start (objects/info/alternates,
// config.worktree…) are removed. .git/objects is no mount point: a command
// replaced it with a symlink to another repository's objects, and the
// removal deleted that repository's alternates (its objects then missing).
// And a control file outside every writable root, which no command can
// write, was removed all the same: the user's own config.worktree in the
// repository the project is a linked worktree of.
func TestRedTeamRevertFollowsNoLink(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	outside := t.TempDir()
	base := filepath.Join(outside, "base")
	gitHost(t, outside, "init", "-q", base)
	gitHost(t, base, "commit", "-q", "--allow-empty", "-m", "init")
	victim := filepath.Join(outside, "victim")
	gitHost(t, outside, "clone", "-q", "--shared", base, victim)
	alternates := filepath.Join(victim, ".git", "objects", "info", "alternates")
	if _, err := os.Stat(alternates); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	res := f.run(t, "g=.git; mv $g/objects $g/o2 && ln -s "+filepath.Join(victim, ".git", "objects")+" $g/objects && echo swapped")
	if res.Stdout != "swapped" {
		t.Fatalf("swap: %+v", res)
	}
	f.m.Settle()
	if _, err := os.Stat(alternates); err != nil {
		t.Errorf("the check deleted another repository's alternates through a symlink: %v", err)
	}

	// The project is a linked worktree of base; the user turns on a
	// sparse checkout there (config.worktree) while the session runs.
	f2 := newFixture(t, nil)
	if err := os.Remove(f2.ws); err != nil {
		t.Fatal(err)
	}
	gitHost(t, base, "worktree", "add", "-q", "-b", "wt", f2.ws)
	f2.run(t, "true") // the sandbox exists
	userCfg := filepath.Join(base, ".git", "config.worktree")
	writeFile(t, userCfg, "[core]\n\tsparseCheckout = true\n")
	f2.run(t, "true")
	if _, err := os.Stat(userCfg); err != nil {
		t.Errorf("the check deleted the user's config.worktree outside the writable roots: %v", err)
	}
}

// TestRedTeamConfigNamedWorktreePaths: the project's .git/config is read-
// only, but it can name files in the writable worktree that git runs or
// reads as configuration: core.hooksPath = .husky/_ (husky v9; a folder
// git ignores, so a change there does not show in git status), an
// include.path next to the project, a core.fsmonitor script. A command
// rewrote those, and the user's next git status or commit ran its code.
// The paths a repository's config names inside a writable root are kept
// read-only like its hooks (a missing one removed when it appears).
func TestRedTeamConfigNamedWorktreePaths(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	mark := filepath.Join(t.TempDir(), "pwned")
	gitHost(t, f.ws, "init", "-q")
	writeFile(t, filepath.Join(f.ws, ".husky", "_", "pre-commit"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(f.ws, ".husky", "_", "pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(f.ws, "tools", "fsmon.sh"), "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(filepath.Join(f.ws, "tools", "fsmon.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitHost(t, f.ws, "config", "core.hooksPath", ".husky/_")
	gitHost(t, f.ws, "config", "include.path", "../shared.gitconfig") // relative to .git/config: absent for now
	gitHost(t, f.ws, "config", "diff.tool.textconv", "./tools/fsmon.sh")
	writeFile(t, filepath.Join(f.ws, "a.txt"), "a\n")
	gitHost(t, f.ws, "add", "a.txt")
	evil := "#!/bin/sh\\ntouch " + mark + "\\n"
	res := f.run(t, "printf '"+evil+"' > .husky/_/pre-commit; printf '"+evil+"' > .husky/_/post-commit; chmod +x .husky/_/post-commit; "+
		"printf '"+evil+"' > tools/fsmon.sh; "+
		"printf '[core]\\n\\tfsmonitor = \"touch "+mark+"; :\"\\n' > shared.gitconfig; "+
		"mv .husky .h2 2>/dev/null; mkdir -p .husky/_ && printf '"+evil+"' > .husky/_/pre-commit; chmod +x .husky/_/pre-commit; true")
	for _, p := range []string{".husky/_/pre-commit", "tools/fsmon.sh"} {
		if b, _ := os.ReadFile(filepath.Join(f.ws, p)); strings.Contains(string(b), mark) {
			t.Errorf("%s, named by the project's config, was rewritten", p)
		}
	}
	if _, err := os.Lstat(filepath.Join(f.ws, "shared.gitconfig")); err == nil {
		t.Errorf("the include.path the project's config names was planted: %q", res.Stderr)
	}
	hostGit(f.ws, "status", "--short")
	c := exec.Command("git", "-C", f.ws, "commit", "-q", "-m", "x")
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, _ := c.CombinedOutput()
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("git on the host ran code a command planted in a path the project's config names:\n%s", out)
	}
}

// TestRedTeamConfigNamedPathsInProcess: write and edit run on the host,
// also before any sandbox exists to mount anything; the paths the
// project's config names in the worktree are refused there as its hooks
// are.
func TestRedTeamConfigNamedPathsInProcess(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	writeFile(t, filepath.Join(f.ws, ".husky", "_", "pre-commit"), "#!/bin/sh\nexit 0\n")
	gitHost(t, f.ws, "config", "core.hooksPath", ".husky/_")
	gitHost(t, f.ws, "config", "include.path", "../shared.gitconfig")
	gitHost(t, f.ws, "config", "core.fsmonitor", "tools/fsmon.sh")
	for _, p := range []string{".husky/_/pre-commit", ".husky/_/post-commit", "shared.gitconfig", "tools/fsmon.sh"} {
		if blocked, reason, _ := f.m.CheckPath(filepath.Join(f.ws, p), true); !blocked {
			t.Errorf("a write of %s, which the project's config names, was not refused", p)
		} else if !strings.Contains(reason, "config") {
			t.Errorf("%s refused for another reason: %s", p, reason)
		}
	}
	for _, p := range []string{".husky/pre-commit", "tools/other.sh", "src/main.go"} {
		if blocked, reason, _ := f.m.CheckPath(filepath.Join(f.ws, p), true); blocked {
			t.Errorf("an ordinary write of %s was refused: %s", p, reason)
		}
	}
}
