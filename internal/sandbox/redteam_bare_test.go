package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamBareRepoShape: git takes a directory holding HEAD, objects and
// refs for a bare repository, and looks for one in each directory before
// the .git of the directories above. A command that makes the project's own
// .git unusable (HEAD is writable) and turns the project, or a folder in it,
// into such a repository with core.fsmonitor got `git status` on the host to
// run its program, although no new .git appeared.
func TestRedTeamBareRepoShape(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	for _, tc := range []struct{ name, dir, prep string }{
		{"project root", ".", "echo garbage > .git/HEAD; "},
		{"sub-folder", "src", "mkdir -p src; "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			gitHost(t, f.ws, "init", "-q")
			gitHost(t, f.ws, "commit", "-q", "--allow-empty", "-m", "x")
			mark := filepath.Join(t.TempDir(), "pwned")
			plant := tc.prep + "cd " + tc.dir + " && mkdir -p objects refs && echo 'ref: refs/heads/main' > HEAD && " +
				"printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = \"touch " + mark + "\"\\n' > config"
			res := f.run(t, plant)
			if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, tc.dir, "HEAD")) {
				t.Errorf("the bare-shaped repository was not reported: %+v", res)
			}
			c := exec.Command("git", "status")
			c.Dir = filepath.Join(f.ws, tc.dir)
			c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			out, _ := c.CombinedOutput()
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("git status on the host ran the planted core.fsmonitor:\n%s", out)
			}
		})
	}
	// A folder that merely holds a file called HEAD is left alone.
	f := newFixture(t, nil)
	res := f.run(t, "mkdir -p notes && echo hi > notes/HEAD && mkdir notes/refs")
	if strings.Contains(res.Stderr, "disabled") {
		t.Errorf("a plain HEAD file was taken for a repository: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "notes", "HEAD")); err != nil {
		t.Errorf("notes/HEAD: %v", err)
	}
}

// TestRedTeamReposPastTheScanBounds: the start-up scan stopped six levels
// down, and the check after a command walked at most 5 000 new entries.
// A command planted a hook in an existing repository deeper than that
// (a Maven-style src/main/java/… tree), created one in an existing deep
// folder, or hid one behind 5 200 new files, and git on the host ran
// each.
func TestRedTeamReposPastTheScanBounds(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	deep := filepath.Join(f.ws, "src", "main", "java", "com", "acme", "app", "core")
	vendored := filepath.Join(deep, "vendored")
	if err := os.MkdirAll(vendored, 0o755); err != nil {
		t.Fatal(err)
	}
	gitHost(t, vendored, "init", "-q")
	mark := filepath.Join(t.TempDir(), "pwned")
	env := "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; "
	f.run(t, "printf '#!/bin/sh\\ntouch "+mark+"\\n' > '"+filepath.Join(vendored, ".git", "hooks", "post-checkout")+"'; chmod +x '"+filepath.Join(vendored, ".git", "hooks", "post-checkout")+"'; "+
		"git -C '"+vendored+"' config core.fsmonitor 'touch "+mark+"'")
	res := f.run(t, env+"cd '"+deep+"' && git init -q evil && git -C evil config core.fsmonitor 'touch "+mark+"'")
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(deep, "evil", ".git")) {
		t.Errorf("the repository made in a deep folder was not reported: %+v", res)
	}
	res = f.run(t, env+"cd '"+f.ws+"' && mkdir -p many && cd many && seq 1 5200 | xargs touch && git init -q zzz && git -C zzz config core.fsmonitor 'touch "+mark+"'")
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "many", "zzz", ".git")) {
		t.Errorf("the repository behind 5 200 new files was not reported: %+v", res)
	}
	for _, d := range []string{vendored, filepath.Join(deep, "evil"), filepath.Join(f.ws, "many", "zzz")} {
		c := exec.Command("git", "-C", d, "status")
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = c.CombinedOutput()
		c = exec.Command("git", "-C", d, "checkout", "-q", "-b", "y")
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = c.CombinedOutput()
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("git on the host ran a command planted in %s", d)
		}
	}
}

// TestRedTeamReposPastTheMountBudget: each mount costs bubblewrap more
// than the one before, so only the shallowest repositories get read-only
// control files. A command armed an existing repository past that budget
// (core.fsmonitor), which host git would run; and a commit in another one
// past it, whose own hook was there at start, must leave it alone.
func TestRedTeamReposPastTheMountBudget(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	n := maxRepoMounts/4 + 4 // four mounts a repository one folder down
	for i := range n {
		dir := filepath.Join(f.ws, fmt.Sprintf("r%02d", i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		gitHost(t, dir, "init", "-q")
	}
	armed := filepath.Join(f.ws, fmt.Sprintf("r%02d", n-1))
	hooked := filepath.Join(f.ws, fmt.Sprintf("r%02d", n-2))
	hook := filepath.Join(hooked, ".git", "hooks", "pre-commit")
	writeFile(t, hook, "#!/bin/sh\nexit 0\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	if st := f.m.Status(); !slices.Contains(st.Unmounted, filepath.Join(armed, ".git")) || !strings.Contains(st.String(), "past the mount budget") {
		t.Errorf("the status does not say which repositories are past the mount budget: %q\n%s", st.Unmounted, st)
	}
	mark := filepath.Join(t.TempDir(), "pwned")
	res := f.run(t, gitEnv+"git -C '"+hooked+"' commit -q --allow-empty -m mine && git -C '"+armed+"' config core.fsmonitor 'touch "+mark+"' && echo armed")
	if res.Stdout != "armed" {
		t.Fatalf("the command failed, so the repositories were mounted read-only after all: %+v", res)
	}
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(armed, ".git")) {
		t.Errorf("the armed repository past the mount budget was not reported: %q", res.Stderr)
	}
	if strings.Contains(res.Stderr, hooked) {
		t.Errorf("a commit in the user's own repository with its hook got it reported: %q", res.Stderr)
	}
	if _, err := os.Lstat(filepath.Join(hooked, ".git")); err != nil {
		t.Errorf("the user's own repository was moved: %v", err)
	}
	hostGit(armed, "status", "--short")
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git status on the host ran what a command armed in a repository past the mount budget")
	}
}

// TestRedTeamBareRepoInProcess: write and edit run on the host, and before
// the first native command no sandbox exists to watch what they create. A
// model that only used write made src/ a bare repository (HEAD, objects,
// refs, config with core.fsmonitor) that host git took before the project's
// .git. Each in-process write that would complete one is refused, in any
// order; ordinary files called config or HEAD are not.
func TestRedTeamBareRepoInProcess(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	mark := filepath.Join(t.TempDir(), "pwned")
	files := map[string]string{
		"HEAD":             "ref: refs/heads/main\n",
		"config":           "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch " + mark + "\"\n",
		"objects/info/x":   "",
		"refs/tags/x":      "",
		"hooks/post-merge": "#!/bin/sh\ntouch " + mark + "\n",
	}
	for _, order := range [][]string{
		{"HEAD", "config", "objects/info/x", "refs/tags/x", "hooks/post-merge"},
		{"config", "objects/info/x", "refs/tags/x", "hooks/post-merge", "HEAD"},
		{"refs/tags/x", "objects/info/x", "HEAD", "config", "hooks/post-merge"},
	} {
		dir := filepath.Join(f.ws, "src-"+strings.ReplaceAll(order[0], "/", "-"))
		refused := false
		for _, name := range order {
			p := filepath.Join(dir, name)
			if blocked, reason, _ := f.m.CheckPath(p, true); blocked {
				if !strings.Contains(reason, "bare repository") {
					t.Errorf("%s refused for another reason: %s", p, reason)
				}
				refused = true
				continue
			}
			writeFile(t, p, files[name])
		}
		if !refused {
			t.Errorf("order %v: no write was refused", order)
		}
		c := exec.Command("git", "status")
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, _ := c.CombinedOutput()
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("order %v: host git status ran the planted core.fsmonitor:\n%s", order, out)
		}
	}
	for _, p := range []string{filepath.Join(f.ws, "config"), filepath.Join(f.ws, "notes", "HEAD"), filepath.Join(f.ws, "app", "refs", "x")} {
		if blocked, reason, _ := f.m.CheckPath(p, true); blocked {
			t.Errorf("an ordinary file %s was refused: %s", p, reason)
		}
	}
}
