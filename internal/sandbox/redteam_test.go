package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh"
	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamBlacklistedGrant: a blacklisted path cannot be granted, and a
// grant of one already saved in sandbox.json never stops the sandbox from
// starting (issue 11, item 10). The attack: allow ~/.ssh/id_rsa for good,
// then run `echo hi` (bubblewrap used to fail: "Can't create file …
// Read-only file system"), and `--allow-path ~/.ssh` (a runtime grant).
func TestRedTeamBlacklistedGrant(t *testing.T) {
	requireBackend(t)
	root := t.TempDir()
	home, ws := filepath.Join(root, "home"), filepath.Join(root, "ws")
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "SECRET KEY\n")
	writeFile(t, filepath.Join(ws, "a.txt"), "a\n")
	writeFile(t, filepath.Join(root, "tmp", "keep"), "")
	cfg := filepath.Join(home, ".synapse", "sandbox.json")
	writeFile(t, cfg, `{"enabled": true, "policy": {"filesystem": {"whitelist": ["~/.ssh/id_rsa", "`+filepath.Join(home, ".ssh")+`"]}}}`)
	m, err := NewManager(ManagerOptions{ConfigPath: cfg, Cwd: ws, TempDir: filepath.Join(root, "tmp"),
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, StartSession: realShell,
		Launcher: testLauncher(t), Backend: testBackend()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	warns := strings.Join(m.Warnings(), "\n")
	for _, e := range []string{`entry "~/.ssh/id_rsa" was skipped: it is on the sandbox blacklist (~/.ssh)`, `entry "` + filepath.Join(home, ".ssh") + `" was skipped`} {
		if !strings.Contains(warns, e) {
			t.Errorf("warnings lack %q:\n%s", e, warns)
		}
	}
	f := &fixture{ws: ws, home: home, m: m}
	// The text check refuses a command naming the key; the mount is what
	// keeps it hidden from one that does not name it.
	if res := f.run(t, "echo hi; d=.ss; cat ~/${d}h/id_rsa"); res.Stdout != "hi" {
		t.Fatalf("echo hi with a saved grant of a blacklisted path: %+v", res)
	}

	for _, p := range []string{"~/.ssh", "~/.ssh/id_rsa", filepath.Join(home, ".ssh", "new")} {
		err := m.AddRuntimeWhitelist(p)
		if err == nil || !strings.Contains(err.Error(), "is on the sandbox blacklist (~/.ssh)") || !strings.Contains(err.Error(), "cannot be allowed") {
			t.Errorf("AddRuntimeWhitelist(%s) = %v, want a refusal naming the blacklist", p, err)
		}
		if err := m.AddPermanentWhitelist(p); err == nil {
			t.Errorf("AddPermanentWhitelist(%s) was accepted", p)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".ssh", "new")); err == nil {
		t.Error("a refused grant created its file")
	}
	if b, _ := os.ReadFile(cfg); strings.Count(string(b), ".ssh") != 2 {
		t.Errorf("sandbox.json was changed: %s", b)
	}
	if res := f.run(t, "echo hi; d=.ss; echo x >> ~/${d}h/id_rsa"); res.Stdout != "hi" {
		t.Fatalf("echo hi after the refused grants: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "id_rsa")); string(b) != "SECRET KEY\n" {
		t.Errorf("id_rsa = %q", b)
	}
}

// TestRedTeamConfigVariables: $VAR, ${VAR} and ~ in sandbox.json entries
// protect (or allow) what they name; an unset variable is a warning naming
// the field, never an entry that silently matches nothing (issue 11, item 11).
func TestRedTeamConfigVariables(t *testing.T) {
	requireBackend(t)
	root := t.TempDir()
	home, ws, data := filepath.Join(root, "home"), filepath.Join(root, "ws"), filepath.Join(root, "data")
	writeFile(t, filepath.Join(ws, "kube", "config"), "token: SECRET\n")
	writeFile(t, filepath.Join(ws, "vault", "key"), "SECRET2\n")
	writeFile(t, filepath.Join(data, "keep"), "")
	writeFile(t, filepath.Join(root, "tmp", "keep"), "")
	cfg := filepath.Join(home, ".synapse", "sandbox.json")
	writeFile(t, cfg, `{"enabled": true, "policy": {"filesystem": {
		"blacklist": ["$PROJ/kube", "${PROJ}/vault/key", "$SYNAPSE_NO_SUCH_VAR/x"],
		"whitelist": ["${DATA_DIR}", "$SYNAPSE_NO_SUCH_VAR/y", "rel/$DATA_DIR"]}}}`)
	m, err := NewManager(ManagerOptions{ConfigPath: cfg, Cwd: ws, TempDir: filepath.Join(root, "tmp"),
		Env: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "PROJ=" + ws, "DATA_DIR=" + data}, StartSession: realShell,
		Launcher: testLauncher(t), Backend: testBackend()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	warns := strings.Join(m.Warnings(), "\n")
	for _, w := range []string{
		`field "policy.filesystem.blacklist": entry "$SYNAPSE_NO_SUCH_VAR/x" was skipped: $SYNAPSE_NO_SUCH_VAR is not set`,
		`field "policy.filesystem.whitelist": entry "$SYNAPSE_NO_SUCH_VAR/y" was skipped: $SYNAPSE_NO_SUCH_VAR is not set`,
		`field "policy.filesystem.whitelist": entry "rel/$DATA_DIR"`,
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	f := &fixture{ws: ws, home: home, m: m}
	// Named so that the text check does not see them: the mounts must hide them.
	res := f.run(t, "k=ku v=vau; cat ${k}be/config ${v}lt/key 2>&1; echo new > "+filepath.Join(data, "new")+" && echo wrote")
	if strings.Contains(res.Stdout, "SECRET") {
		t.Errorf("a $VAR blacklist entry protected nothing: %q", res.Stdout)
	}
	if !strings.Contains(res.Stdout, "wrote") {
		t.Errorf("a ${VAR} whitelist entry allowed nothing: %+v", res)
	}
	if blocked, _, _ := m.CheckPath(filepath.Join(ws, "kube", "config"), false); !blocked {
		t.Error("read of a $VAR-blacklisted file is allowed in-process")
	}
}

// gitHost runs git on the host, as the user would after the agent's turn,
// with a clean global configuration.
func gitHost(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", append([]string{"-C", dir}, args...)...)
	c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_ALLOW_PROTOCOL=file")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// TestRedTeamGitControlFiles: every git control file is protected against
// in-process writes (write/edit) and native ones alike (issue 11, item 4).
// The attack: plant core.fsmonitor (run by a plain `git status` on the
// host) through config.worktree, a submodule's config, a worktree's
// commondir, objects/info/alternates and a new .git file, then run git on
// the host.
func TestRedTeamGitControlFiles(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	outside := t.TempDir()
	mark := filepath.Join(outside, "pwned")
	src := filepath.Join(outside, "src")
	gitHost(t, outside, "init", "-q", src)
	gitHost(t, src, "commit", "-q", "--allow-empty", "-m", "init")
	gitHost(t, f.ws, "init", "-q")
	gitHost(t, f.ws, "commit", "-q", "--allow-empty", "-m", "init")
	gitHost(t, f.ws, "config", "extensions.worktreeConfig", "true")
	gitHost(t, f.ws, "-c", "protocol.file.allow=always", "submodule", "-q", "add", src, "sub")
	gitHost(t, f.ws, "worktree", "add", "-q", filepath.Join(outside, "wt"))
	evil := filepath.Join(f.ws, "evil")
	hook := "[core]\n\tfsmonitor = touch " + mark + "; :\n"

	// In-process: the agent shell's write and edit.
	sh := agentsh.New(agentsh.Options{Exec: f.m, Paths: f.m})
	for _, p := range []string{".git/config.worktree", ".git/commondir", ".git/modules/sub/config", ".git/modules/sub/hooks/post-checkout",
		".git/worktrees/wt/commondir", ".git/objects/info/alternates", "sub2/.git", ".git/config"} {
		res := sh.Run(context.Background(), "write "+p+" 'gitdir: "+evil+"\n"+hook+"'")
		if !res.Blocked {
			t.Errorf("write %s was not refused: %+v", p, res)
		}
	}

	// Native: the same through the sandboxed shell (names built at run time,
	// so only the mounts stand in the way).
	writeFile(t, filepath.Join(evil, "config"), hook)
	for _, c := range []string{
		"g=.git; printf '" + hook + "' > $g/config.worktree",
		"g=.git; printf '" + hook + "' >> $g/modules/sub/config",
		"g=.git; printf '" + hook + "' > $g/modules/sub/config.worktree",
		"g=.git; echo " + evil + " > $g/worktrees/wt/commondir",
		"g=.git; echo " + evil + " > $g/objects/info/alternates",
		"g=.git; mkdir -p $g/modules/sub/hooks && printf '#!/bin/sh\\ntouch " + mark + "\\n' > $g/modules/sub/hooks/post-checkout",
	} {
		f.run(t, c)
	}
	for _, p := range []string{".git/config.worktree", ".git/modules/sub/config.worktree", ".git/objects/info/alternates"} {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s planted by a command is still there", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "modules", "sub", "config")); strings.Contains(string(b), "fsmonitor") {
		t.Errorf("the submodule's config was changed:\n%s", b)
	}
	for _, d := range []string{f.ws, filepath.Join(f.ws, "sub"), filepath.Join(outside, "wt")} {
		gitHost(t, d, "status", "--short")
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git on the host ran a command planted by the sandbox")
	}
}

// TestRedTeamHostTempRepos: repositories in the host temp directory, deeper
// than any scan or without a hooks folder, are out of a command's reach:
// the sandbox mounts the session's private temp directory as /tmp (issue
// 11, item 6). The attack: plant a hook and core.fsmonitor in both, then
// run git there on the host.
func TestRedTeamHostTempRepos(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	hostTmp, err := os.MkdirTemp("/tmp", "synapse-redteam-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(hostTmp) })
	deep := filepath.Join(hostTmp, "a", "b", "c", "d", "e", "f", "g", "deep")
	nohooks := filepath.Join(hostTmp, "nohooks")
	for _, d := range []string{deep, nohooks} {
		gitHost(t, hostTmp, "init", "-q", d)
	}
	if err := os.RemoveAll(filepath.Join(nohooks, ".git", "hooks")); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "pwned")
	f := newFixture(t, func(o *ManagerOptions) { o.TempDir = "/tmp" })
	for _, repo := range []string{deep, nohooks} {
		f.run(t, "g=.git; mkdir -p "+repo+"/$g/hooks; printf '#!/bin/sh\\ntouch "+mark+"\\n' > "+repo+"/$g/hooks/post-checkout; chmod +x "+repo+"/$g/hooks/post-checkout; "+
			"printf '[core]\\n\\tfsmonitor = touch "+mark+"; :\\n' >> "+repo+"/$g/config")
		gitHost(t, repo, "status", "--short")
		gitHost(t, repo, "checkout", "-q", "-b", "x")
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git on the host ran what a sandboxed command planted in a repository of the temp dir")
	}
	if underLandlock() {
		t.Logf("the rest (one /tmp view for commands and file commands) is skipped under Landlock: %s", landlockGapTmp)
		return
	}

	// /tmp is still there for commands, and the same for read/write/edit.
	sh := agentsh.New(agentsh.Options{Exec: f.m, Paths: f.m})
	if res := sh.Run(context.Background(), "write /tmp/notes.txt 'from write'"); res.ExitCode != 0 {
		t.Fatalf("write /tmp/notes.txt: %+v", res)
	}
	if res := f.run(t, `cat /tmp/notes.txt; echo; echo "$TMPDIR"; echo native > /tmp/n2 && d=$(mktemp -d) && echo ok > $d/f && cat $d/f`); res.Stdout != "from write\n/tmp\nok" {
		t.Fatalf("native view of /tmp: %+v", res)
	}
	if res := sh.Run(context.Background(), "read /tmp/n2"); !strings.Contains(res.Stdout, "native") {
		t.Fatalf("read /tmp/n2: %+v", res)
	}
	priv := f.m.PrivateTmp()
	if err := checkPrivateDir(priv); err != nil || filepath.Dir(priv) != "/tmp" {
		t.Fatalf("private temp dir %q: %v", priv, err)
	}
	if _, err := os.Stat("/tmp/notes.txt"); err == nil {
		t.Error("write /tmp/notes.txt wrote the host's /tmp")
	}
	if err := f.m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(priv); err == nil {
		t.Errorf("the private temp directory %s outlived the session", priv)
	}
}

// TestRedTeamNewNestedRepo: a repository a command creates in the project
// after the sandbox started is checked after every command; one whose
// config or hooks git on the host would run is disabled and reported
// (issue 11, item 6). A plain `git init` is left alone, until a later
// command plants something in it.
func TestRedTeamNewNestedRepo(t *testing.T) {
	requireBackend(t)
	testutil.RequireTool(t, "git")
	f := newFixture(t, nil)
	gitHost(t, f.ws, "init", "-q")
	mark := filepath.Join(t.TempDir(), "pwned")
	env := "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1; "
	res := f.run(t, env+"mkdir -p a/b && git init -q a/b/evil && git -C a/b/evil config core.fsmonitor 'touch "+mark+"; :'")
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "a", "b", "evil", ".git")) || !strings.Contains(res.Stderr, "core.fsmonitor") {
		t.Errorf("the new repository was not reported: %+v", res)
	}
	res = f.run(t, env+"git init -q plain && git -C plain commit -q --allow-empty -m x 2>&1 || true; git -C plain log --oneline | wc -l")
	if strings.Contains(res.Stderr, "disabled") {
		t.Errorf("a harmless new repository was disabled: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "plain", ".git")); err != nil {
		t.Fatalf("plain repository: %v", err)
	}
	// A later command plants a hook in the repository that was harmless.
	res = f.run(t, "printf '#!/bin/sh\\ntouch "+mark+"\\n' > plain/.git/hooks/post-checkout; chmod +x plain/.git/hooks/post-checkout")
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "plain", ".git")) {
		t.Errorf("the hook planted later was not caught: %+v", res)
	}
	// A new .git file pointing at a directory with a hook.
	writeFile(t, filepath.Join(f.ws, "evilgit", "config"), "[core]\n\tbare = false\n")
	res = f.run(t, "mkdir -p evilgit/hooks evilgit/objects evilgit/refs && echo 'ref: refs/heads/main' > evilgit/HEAD && "+
		"printf '#!/bin/sh\\ntouch "+mark+"\\n' > evilgit/hooks/post-checkout && chmod +x evilgit/hooks/post-checkout && "+
		"mkdir sub && echo 'gitdir: "+filepath.Join(f.ws, "evilgit")+"' > sub/.git")
	if !strings.Contains(res.Stderr, "disabled a new git repository at "+filepath.Join(f.ws, "sub", ".git")) {
		t.Errorf("the new .git file was not caught: %+v", res)
	}
	for _, d := range []string{filepath.Join(f.ws, "a", "b", "evil"), filepath.Join(f.ws, "plain"), filepath.Join(f.ws, "sub")} {
		c := exec.Command("git", "-C", d, "status", "--short")
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = c.CombinedOutput()
		c = exec.Command("git", "-C", d, "checkout", "-q", "-b", "y")
		c.Env = c.Env[:0]
		c.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		_, _ = c.CombinedOutput()
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("git on the host ran a command planted in a new repository")
	}
}
