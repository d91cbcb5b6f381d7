package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

func TestCommandTextCheck(t *testing.T) {
	home := "/home/u"
	rules := compileRules(append(DefaultBlacklist(), "/home/.ssh"), home)
	tests := []struct {
		cmd, cwd string
		blocked  bool
		resource string
	}{
		{cmd: "cat ~/.ssh/id_rsa", blocked: true, resource: "~/.ssh"},
		{cmd: `bash -c "cat ~/.ssh/id_rsa"`, blocked: true, resource: "~/.ssh"},
		{cmd: `bash -c "cat /home/.ssh/id_rsa"`, blocked: true, resource: "/home/.ssh"},
		{cmd: "cd ~ && cat .ssh/id_rsa", blocked: true, resource: "~/.ssh"},
		{cmd: "cd && cat .aws/credentials", blocked: true, resource: "~/.aws"},
		{cmd: `echo "see ~/.ssh docs"`},
		{cmd: "cat config.env.example", cwd: "/w"},
		{cmd: "cat .env", cwd: "/w", blocked: true, resource: "**/.env"},
		{cmd: "cat ./sub/../.env.local", cwd: "/w", blocked: true, resource: "**/.env.local"},
		{cmd: `cat ~/".s"sh/id_rsa`, blocked: true, resource: "~/.ssh"},
		{cmd: `cat "$HOME/.gnupg/x"`, blocked: true, resource: "~/.gnupg"},
		{cmd: "cat < /etc/shadow", blocked: true, resource: "/etc/shadow"},
		{cmd: "dd if=/etc/shadow of=/dev/null", blocked: true, resource: "/etc/shadow"},
		{cmd: `eval "cat ~/.azure/x"`, blocked: true, resource: "~/.azure"},
		{cmd: `sh -lc 'cd ~/.config && cat gcloud/creds'`, blocked: true, resource: "~/.config/gcloud"},
		{cmd: `python3 -c "print(open('/home/u/.ssh/id_rsa').read())"`, blocked: true, resource: "~/.ssh"},
		{cmd: `echo $(cat /w/secrets.json)`, blocked: true, resource: "**/secrets.json"},
		{cmd: "ls -la /w/src", cwd: "/w"},
		{cmd: "grep -r TODO .", cwd: "/w"},
		{cmd: `cat "~/.ssh/id_rsa"`, cwd: "/w"}, // quoted ~ is literal in bash
		{cmd: "if then fi (", cwd: "/w"},        // unparsable: left to the shell and mounts
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			cwd := tt.cwd
			if cwd == "" {
				cwd = "/w"
			}
			res, blocked := checkCommandText(tt.cmd, cwd, home, rules, nil)
			if blocked != tt.blocked {
				t.Fatalf("blocked = %v, want %v (%+v)", blocked, tt.blocked, res)
			}
			if blocked && (res.BlockedResource != tt.resource || res.BlockedReason == "" || !res.Blocked) {
				t.Fatalf("res = %+v, want resource %q", res, tt.resource)
			}
		})
	}
}

func TestBlacklistedCommandDoesNotReachSession(t *testing.T) {
	sess := &fakeSession{started: SessionOptions{Dir: "/w"}}
	p := Policy{Whitelist: []string{"/w", "/home/.ssh"}, Blacklist: []string{"/home/.ssh"}, Home: "/home/u"}
	b := &LocalBackend{policy: p, rules: compileRules(p.Blacklist, p.Home), plat: &platform{goos: "linux"}, sess: sess}
	for _, c := range []string{"cat /home/.ssh/id_rsa", `bash -c "cat /home/.ssh/id_rsa"`} {
		res, err := b.Execute(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Blocked || res.BlockedResource != "/home/.ssh" {
			t.Fatalf("%s: %+v", c, res)
		}
	}
	if len(sess.calls) != 0 {
		t.Fatalf("session.Execute called: %v", sess.calls)
	}
}

func TestViolationDetection(t *testing.T) {
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]")
	p := Policy{Whitelist: []string{ws, "/tmp"}, Blacklist: DefaultBlacklist(), Home: "/home/u", TempDir: "/tmp"}
	ro := p
	ro.ReadOnly = true
	const (
		outside  = "outside the sandbox write whitelist"
		git      = gitProtectedReason
		readOnly = "sandbox is read-only"
	)
	tests := []struct {
		stderr   string
		readOnly bool
		blocked  bool
		resource string
		reason   string
	}{
		{stderr: "touch: cannot touch '/etc/x': Read-only file system\n", blocked: true, resource: "/etc/x", reason: outside},
		{stderr: "bash: line 1: /usr/bin/evil: Read-only file system\n", blocked: true, resource: "/usr/bin/evil", reason: outside},
		{stderr: "cat: .env: Permission denied\n", blocked: true, resource: "**/.env"},
		{stderr: "cat: /home/u/.ssh/id_rsa: Permission denied\n", blocked: true, resource: "~/.ssh"},
		{stderr: "PermissionError: [Errno 13] Permission denied: '/etc/shadow'\n", blocked: true, resource: "/etc/shadow"},
		{stderr: "cat: /root/private: Permission denied\n"}, // ordinary unix permissions, not the policy
		{stderr: "ls: cannot access 'x': No such file or directory\n"},
		{stderr: "cat: /home/u/.aws/credentials: No such file or directory\n", blocked: true, resource: "~/.aws"},
		// sed -i names its temporary file: the directory is the resource.
		{stderr: "sed: couldn't open temporary file /usr/share/doc/bash/sedqWTg21: Read-only file system\n", blocked: true, resource: "/usr/share/doc/bash", reason: outside},
		{stderr: "sed: couldn't open temporary file ./sedXr4Tq1: Read-only file system\n", readOnly: true, blocked: true, resource: ws, reason: readOnly},
		// Prose around the path, paths with spaces, curly quotes, the path after the message.
		{stderr: "mkdir: cannot create directory ‘/usr/y’: Read-only file system\n", blocked: true, resource: "/usr/y", reason: outside},
		{stderr: "OSError: [Errno 30] Read-only file system: '/usr/z'\n", blocked: true, resource: "/usr/z", reason: outside},
		{stderr: "cannot open /usr/z: Read-only file system at -e line 1.\n", blocked: true, resource: "/usr/z", reason: outside},
		{stderr: "bash: line 1: /srv/work space/f: Read-only file system\n", blocked: true, resource: "/srv/work space/f", reason: outside},
		{stderr: "mv: cannot move 'f' to '/usr/bin/x': Read-only file system\n", blocked: true, resource: "/usr/bin/x", reason: outside},
		// .git/config and hooks: read-only mounts (EROFS) and bind-mounted files (EBUSY).
		{stderr: "bash: line 3: .git/config: Read-only file system\n", blocked: true, resource: ws + "/.git/config", reason: git},
		{stderr: "bash: line 8: .git/hooks/pre-commit: Read-only file system\n", blocked: true, resource: ws + "/.git/hooks/pre-commit", reason: git},
		{stderr: "error: could not write config file .git/config: Device or resource busy\n", blocked: true, resource: ws + "/.git/config", reason: git},
		{stderr: "sed: cannot rename .git/sedWw9ucw: Device or resource busy\n", blocked: true, resource: ws + "/.git/config", reason: git},
		{stderr: "mv: cannot move 'f' to '.git/config': Device or resource busy\n", blocked: true, resource: ws + "/.git/config", reason: git},
		{stderr: "rm: cannot remove '.git/config': Device or resource busy\n", blocked: true, resource: ws + "/.git/config", reason: git},
		{stderr: "rm: cannot remove '.env': Device or resource busy\n", blocked: true, resource: "**/.env"},
		{stderr: "rm: cannot remove 'busy.txt': Device or resource busy\n"}, // a real busy file in the workspace
		// A read-only sandbox words its reason for what it is.
		{stderr: "touch: cannot touch 'x': Read-only file system\n", readOnly: true, blocked: true, resource: ws + "/x", reason: readOnly},
		{stderr: "cp: cannot create regular file '/tmp/y': Read-only file system\n", readOnly: true, blocked: true, resource: "/tmp/y", reason: readOnly},
		// No path in the message: the policy root that denied it.
		{stderr: "tool: Read-only file system\n", readOnly: true, blocked: true, resource: ws, reason: readOnly},
		{stderr: "tool: Read-only file system\n", blocked: true, resource: "", reason: outside},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("ro=%v %s", tt.readOnly, tt.stderr), func(t *testing.T) {
			pol := p
			if tt.readOnly {
				pol = ro
			}
			res := detectViolation(command.Result{Stderr: tt.stderr, ExitCode: 1}, ws, pol, compileRules(pol.Blacklist, pol.Home), false)
			if res.Blocked != tt.blocked {
				t.Fatalf("blocked = %v, want %v: %+v", res.Blocked, tt.blocked, res)
			}
			if tt.blocked && (res.BlockedResource != tt.resource || res.BlockedReason == "" || !strings.Contains(res.BlockedReason, tt.reason)) {
				t.Fatalf("resource %q, reason %q; want resource %q, reason with %q", res.BlockedResource, res.BlockedReason, tt.resource, tt.reason)
			}
			if res.Stderr != tt.stderr || res.ExitCode != 1 {
				t.Fatal("the original output must be kept")
			}
		})
	}
}

func TestDisposeCallsSessionAndPlatformCleanup(t *testing.T) {
	sess := &fakeSession{}
	dir := t.TempDir()
	plat := &platform{goos: "linux", stateDir: dir + "/state"}
	writeFile(t, plat.stateDir+"/empty", "")
	b := &LocalBackend{sess: sess, plat: plat}
	if err := b.Dispose(); err != nil {
		t.Fatal(err)
	}
	if !sess.closed {
		t.Fatal("session not closed")
	}
	if exists(dir + "/state") {
		t.Fatal("platform files not cleaned up")
	}
	if err := b.Dispose(); err != nil {
		t.Fatal("second dispose:", err)
	}
}

// The text check's resolver answers as resolvePath does, through links to
// directories and files, dangling links, missing paths and files used as
// directories.
func TestResolverMatchesResolvePath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b", "secret/inner", "real"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(root, "a/file"), "x")
	links := map[string]string{
		"a/tosecret": "../secret",                         // relative, to a directory
		"a/b/abs":    filepath.Join(root, "secret/inner"), // absolute
		"a/dangling": "nowhere/at/all",
		"a/tofile":   "file",
		"real/loop":  "../a/tosecret", // a link to a link
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(root, l)); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, p := range []string{
		"", "a", "a/b", "a/b/new", "a/file", "a/file/under", "a/tosecret", "a/tosecret/inner/x",
		"a/b/abs", "a/b/abs/y/z", "a/dangling", "a/dangling/more", "a/tofile", "real/loop/inner",
		"missing/deeper/still", "a/b/../tosecret/z",
	} {
		paths = append(paths, filepath.Clean(filepath.Join(root, p)))
	}
	paths = append(paths, "/", "/etc", "/proc/self/cwd/x")
	rs := &resolver{}
	for round := 0; round < 2; round++ { // the second round answers from the cache
		for _, p := range paths {
			if got, want := rs.resolve(p), resolvePath(p, "/", ""); got != want {
				t.Errorf("resolve(%q) = %q, resolvePath = %q", p, got, want)
			}
		}
	}
}

// BenchmarkCommandTextCheck is the text check of a plain command in a
// workspace a few directories deep, as every sandboxed command has it.
func BenchmarkCommandTextCheck(b *testing.B) {
	ws := filepath.Join(b.TempDir(), "work", "projects", "app")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		b.Fatal(err)
	}
	rules := compileRules(DefaultBlacklist(), "/home/u")
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("kept=%v", keep), func(b *testing.B) {
			var st *stableDirs
			if keep {
				st = &stableDirs{roots: []string{ws}} // as a sandbox's check has it
			}
			for b.Loop() {
				if _, blocked := checkCommandText("echo hi", ws, "/home/u", rules, st); blocked {
					b.Fatal("blocked")
				}
			}
		})
	}
}

// A sandbox keeps from one check to the next how the directories above its
// writable roots resolve, never those below them: a command may swap a
// directory of the workspace for a link into a blacklisted one, and the
// next check must see the link.
func TestStableDirsKeepOnlyWhatCommandsCannotChange(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "above", "ws")
	secret := filepath.Join(root, "secret")
	for _, d := range []string{filepath.Join(ws, "sub"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rules := compileRules([]string{secret}, "/home/u")
	st := &stableDirs{roots: []string{ws}}
	steps := []struct {
		name, cmd, cwd string
		swap           func() error
		blocked        bool
	}{
		{"plain", "cat sub/x", ws, nil, false},
		{"again, from what was kept", "cat sub/x", ws, nil, false},
		{"the directory swapped for a link", "cat sub/x", ws, func() error {
			if err := os.Rename(filepath.Join(ws, "sub"), filepath.Join(ws, "old")); err != nil {
				return err
			}
			return os.Symlink(secret, filepath.Join(ws, "sub"))
		}, true},
		{"from a subdirectory", "cat ../sub/x", filepath.Join(ws, "old"), nil, true},
		{"through a link above the roots", "cat x", filepath.Join(root, "lnk", "ws"), func() error {
			return os.Symlink(filepath.Join(root, "above"), filepath.Join(root, "lnk"))
		}, false},
	}
	for _, s := range steps {
		if s.swap != nil {
			if err := s.swap(); err != nil {
				t.Fatal(err)
			}
		}
		_, blocked := checkCommandText(s.cmd, s.cwd, "/home/u", rules, st)
		if _, fresh := checkCommandText(s.cmd, s.cwd, "/home/u", rules, nil); blocked != s.blocked || fresh != s.blocked {
			t.Fatalf("%s: blocked %v (without what was kept %v), want %v", s.name, blocked, fresh, s.blocked)
		}
	}
	for _, d := range []string{root, filepath.Join(root, "above"), ws} {
		if _, ok := st.dirs[d]; !ok {
			t.Errorf("%s was not kept", d)
		}
	}
	for d := range st.dirs {
		if d != ws && within(d, ws) || d == filepath.Join(root, "lnk") || within(d, filepath.Join(root, "lnk")) {
			t.Errorf("kept %s, which a command or a link can change", d)
		}
	}
}
