package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/synapse-agent/synapse/internal/testutil"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

const secret = "TOPSECRET-7f3a"

// snapshot hashes every file under the given roots (and records which
// exist), so that the suite can prove nothing outside the policy changed.
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				out[p] = "error"
				return nil
			}
			info, _ := d.Info()
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				l, _ := os.Readlink(p)
				out[p] = "link:" + l
			case d.IsDir():
				out[p] = fmt.Sprintf("dir:%v", info.Mode())
			default:
				b, _ := os.ReadFile(p)
				out[p] = fmt.Sprintf("%v:%x", info.Mode(), sha256.Sum256(b))
			}
			return nil
		})
	}
	return out
}

func diffSnapshots(a, b map[string]string) []string {
	var d []string
	for k, v := range a {
		if b[k] != v {
			d = append(d, fmt.Sprintf("changed %s", k))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, fmt.Sprintf("created %s", k))
		}
	}
	sort.Strings(d)
	return d
}

// TestEscapeSuite runs real escape attempts in a real bubblewrap sandbox.
// Every attempt must fail: no secret in the output, no file outside the
// whitelist created or changed, no connection reaching the host, no host
// process seen or signalled.
func TestEscapeSuite(t *testing.T) {
	// Secrets live in a fake home and in the workspace.
	f := newFixture(t, nil)
	root := filepath.Dir(f.ws)
	outside := filepath.Join(root, "outside")
	writeFile(t, filepath.Join(outside, "keep.txt"), "original")
	for _, p := range []string{".ssh/id_rsa", ".aws/credentials", ".gnupg/private.key", ".config/gcloud/creds.json", ".azure/token"} {
		writeFile(t, filepath.Join(f.home, p), secret+" "+p)
	}
	writeFile(t, filepath.Join(f.home, ".bashrc"), "# rc")
	for _, p := range []string{".env", ".envrc", ".env.local", "credentials.json", "sub/secrets.json", "deep/er/.env"} {
		writeFile(t, filepath.Join(f.ws, p), secret+" "+p)
	}
	git := exec.Command("git", "init", "-q", f.ws)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	shadow, _ := os.ReadFile("/etc/shadow")
	shadowLine := strings.SplitN(string(shadow), "\n", 2)[0]

	// A host process the sandbox must neither see nor signal.
	host := exec.Command("sleep", "3133.7")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = host.Process.Kill(); _ = host.Wait() }()
	hostPID := host.Process.Pid

	// A host server on 127.0.0.1 the sandbox must not reach.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port

	watched := []string{outside, f.home, filepath.Join(f.ws, ".git"), "/etc"}
	before := snapshot(t, watched...)
	wsSecrets := snapshot(t, filepath.Join(f.ws, ".env"), filepath.Join(f.ws, "sub"), filepath.Join(f.ws, "deep"))

	b64 := base64.StdEncoding.EncodeToString([]byte("cat ~/.config/gcloud/creds.json"))
	attempts := []struct {
		name string
		cmd  string
		gone []string // paths that must not exist afterwards
		gap  string   // why the Landlock backend cannot stop it (docs/security.md table); skipped there
	}{
		{"write outside directly", "echo pwned > '" + outside + "/direct'", []string{outside + "/direct"}, ""},
		{"write outside via ..", "echo pwned > ../outside/dotdot", []string{outside + "/dotdot"}, ""},
		{"write via symlink planted in the workspace", "ln -s '" + outside + "' planted; echo pwned > planted/via-link", []string{outside + "/via-link"}, ""},
		{"write via /proc/self/root", "echo pwned > '/proc/self/root" + outside + "/procroot'", []string{outside + "/procroot"}, ""},
		{"overwrite a file outside", "echo pwned > '" + outside + "/keep.txt'", nil, ""},
		{"write /etc", "echo pwned > /etc/synapse-escape", []string{"/etc/synapse-escape"}, ""},
		{"write into home", "echo pwned >> ~/.bashrc", nil, ""},
		{"write .git/hooks/pre-commit", "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit", []string{f.ws + "/.git/hooks/pre-commit"}, ""},
		{"set core.hooksPath in .git/config", "git config core.hooksPath /tmp/evil-hooks", nil, ""},
		{"plant authorized_keys", "echo ssh-rsa AAA >> ~/.ssh/authorized_keys", []string{f.home + "/.ssh/authorized_keys"}, ""},
		{"read ssh key directly", "cat ~/.ssh/id_rsa", nil, ""},
		{"read ssh key by quoting", "cat ~/.s''sh/i\"d\"_rsa", nil, ""},
		{"read aws by variable", "D=$HOME/.a; D=${D}ws; cat $D/credentials", nil, ""},
		{"read gnupg by $(...)", "cat $(echo $HOME)/$(printf '.gn%s' upg)/private.key", nil, ""},
		{"read gcloud by base64 and eval", "eval \"$(echo " + b64 + " | base64 -d)\"", nil, ""},
		{"read azure with python", `python3 -c "import os; print(open(os.path.expanduser('~') + '/.az' + 'ure/token').read())"`, nil, ""},
		{"read ssh with perl", `perl -e 'open(F, "$ENV{HOME}/.s"."sh/id_rsa") or die "no: $!"; print <F>'`, nil, ""},
		{"read aws after cd", "cd ~/.a''ws && cat credentials", nil, ""},
		{"read gnupg after cd ~", "cd ~ && cat .gn''upg/private.key", nil, ""},
		{"read /etc/shadow by variable", "f=/etc/sha; cat ${f}dow", nil, ""},
		{"read /etc/shadow via /proc/1/root", "cat /proc/1/root/etc/sha''dow", nil, ""},
		{"read workspace env files by loop", "for f in .e''nv .envr''c .env.lo''cal credentials.js''on sub/secrets.js''on deep/er/.e''nv; do cat \"$f\"; done", nil, landlockGapGlobs},
		{"grep the whole home and workspace", "grep -r TOPSECRET ~ . 2>/dev/null", nil, landlockGapGlobs},
		{"tar the ssh dir", "tar cf - -C ~ .s''sh | base64", nil, ""},
		{"unshare and umount the mask", "unshare -rm sh -c 'umount ~/.ssh; cat ~/.ssh/id_rsa'", nil, ""},
		{"remount the root read-write", "mount -o remount,rw / && echo pwned > /etc/synapse-escape", []string{"/etc/synapse-escape"}, ""},
		{"curl to the host", fmt.Sprintf("curl -s --max-time 3 http://127.0.0.1:%d/", port), nil, ""},
		{"bash /dev/tcp to the host", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo GET >&3", port), nil, ""},
		{"python socket to the host", fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('127.0.0.1', %d), 3); print('connected')"`, port), nil, ""},
		{"external network", "curl -s --max-time 3 http://1.1.1.1/ && echo reached", nil, ""},
		{"see host processes", "ps -eo args 2>/dev/null; cat /proc/*/cmdline 2>/dev/null | tr '\\0' ' '", nil, landlockGapPID},
		{"signal a host process", fmt.Sprintf("kill -9 %d", hostPID), nil, ""},
		{"open the controlling terminal", `python3 -c "import os; os.open('/dev/tty', os.O_RDWR); print('got tty')"`, nil, ""},
		{"TIOCSTI on stdin", `python3 -c "import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('injected')"`, nil, ""},
	}
	for _, a := range attempts {
		if a.gap != "" && underLandlock() {
			t.Logf("%-45s SKIPPED under Landlock: %s", a.name, a.gap)
			continue
		}
		res, err := f.m.Execute(context.Background(), a.cmd, "")
		out := res.Stdout + "\n" + res.Stderr
		if err != nil {
			t.Logf("%s: execute error (counts as failed attempt): %v", a.name, err)
		}
		switch {
		case strings.Contains(out, secret):
			t.Errorf("%s: secret leaked:\n%s", a.name, out)
		case shadowLine != "" && strings.Contains(out, shadowLine):
			t.Errorf("%s: /etc/shadow leaked", a.name)
		case strings.Contains(res.Stdout, "3133.7"):
			t.Errorf("%s: host process visible", a.name)
		case strings.Contains(res.Stdout, "connected") || strings.Contains(res.Stdout, "reached") || strings.Contains(res.Stdout, "got tty") || strings.Contains(res.Stdout, "injected"):
			t.Errorf("%s: succeeded:\n%s", a.name, out)
		}
		for _, g := range a.gone {
			if exists(g) {
				t.Errorf("%s: %s was created", a.name, g)
			}
		}
		t.Logf("%-45s exit=%d blocked=%v %s", a.name, res.ExitCode, res.Blocked, firstLine(strings.TrimSpace(res.Stderr)))
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d connections reached the host server", n)
	}
	if err := host.Process.Signal(os.Signal(nil)); err != nil && !strings.Contains(err.Error(), "not supported") {
		// Signal(nil) is not portable; use the wait state instead.
	}
	if host.ProcessState != nil {
		t.Error("the host process was killed")
	}
	if err := exec.Command("kill", "-0", fmt.Sprint(hostPID)).Run(); err != nil {
		t.Errorf("host process %d is gone: %v", hostPID, err)
	}
	if d := guardAside(diffSnapshots(before, snapshot(t, watched...))); len(d) > 0 {
		t.Errorf("files outside the policy changed:\n%s", strings.Join(d, "\n"))
	}
	if d := diffSnapshots(wsSecrets, snapshot(t, filepath.Join(f.ws, ".env"), filepath.Join(f.ws, "sub"), filepath.Join(f.ws, "deep"))); len(d) > 0 {
		t.Errorf("blacklisted workspace files changed:\n%s", strings.Join(d, "\n"))
	}
	if len(attempts) < 25 {
		t.Fatalf("only %d attempts", len(attempts))
	}
	// The sandbox is still usable afterwards.
	if res := f.run(t, "echo alive"); res.Stdout != "alive" {
		t.Fatalf("sandbox unusable after the suite: %+v", res)
	}
}

// Attacks the Landlock backend cannot stop by design (the table in docs/security.md).
const (
	landlockGapGlobs = "blacklisted globs inside the workspace (.env, credentials.json) stay readable: Landlock cannot take a file out of a granted tree"
	landlockGapTmp   = "the host's /tmp is not replaced (Landlock cannot remap a path): commands get TMPDIR=<private temp dir> and the host /tmp is unreadable"
	landlockGapPin   = "Landlock cannot pin a directory: a command can move .git away (the repository guard restores hooks and config at .git after each command, and renames aside a .git put in its place)"
	landlockGapPID   = "no private PID namespace: host processes are visible (Landlock scopes signals and ptrace, not /proc listings)"
)

// guardAside drops from a snapshot diff, under Landlock, what the
// repository guard renamed aside inside .git (inert: git runs hooks and
// reads config by their exact names); bwrap's read-only mounts leave none.
func guardAside(d []string) []string {
	if !underLandlock() {
		return d
	}
	var out []string
	for _, l := range d {
		if !strings.Contains(l, repoguard.DisabledMark) {
			out = append(out, l)
		}
	}
	return out
}

// TestEscapeKillAll: `kill -9 -1` inside can only reach the sandbox's own
// processes; the host process survives.
func TestEscapeKillAll(t *testing.T) {
	f := newFixture(t, nil)
	host := exec.Command("sleep", "3133.8")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = host.Process.Kill(); _ = host.Wait() }()
	_, _ = f.m.Execute(context.Background(), "kill -9 -1", "")
	if err := exec.Command("kill", "-0", fmt.Sprint(host.Process.Pid)).Run(); err != nil {
		t.Fatalf("host process killed from inside the sandbox: %v", err)
	}
	if res := f.run(t, "echo back"); res.Stdout != "back" {
		t.Fatalf("sandbox not rebuilt after its shell was killed: %+v", res)
	}
}

// TestEscapeTIOCSTIOnUserTerminal gives the sandboxed process a real
// terminal as stdin (as `synapse sandbox exec` would from the user's shell)
// and checks that TIOCSTI cannot push input into it.
func TestEscapeTIOCSTIOnUserTerminal(t *testing.T) {
	requireBackend(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		testutil.SkipOrFail(t, "no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	ws := t.TempDir()
	argv, err := WrapArgv(Policy{Whitelist: []string{ws}, Blacklist: DefaultBlacklist()}, []string{"python3", "-c",
		"import fcntl, termios, sys\ntry:\n    for c in b'Z\\n':\n        fcntl.ioctl(0, termios.TIOCSTI, bytes([c]))\n    print('injected')\nexcept OSError as e:\n    print('refused', e.errno)\n"},
		WrapOptions{Cwd: ws, Backend: testBackend(), Launcher: testLauncher(t)})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = tty
	// The terminal is the controlling terminal of the process that starts
	// the sandbox, as the user's terminal is for `synapse sandbox exec`.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "refused") {
		t.Fatalf("TIOCSTI was not refused: %s", out)
	}
	// Nothing arrived on the terminal's input queue (a full line would be
	// readable at once; poll instead of blocking on the terminal).
	fds := []unix.PollFd{{Fd: int32(tty.Fd()), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 300); err == nil && n > 0 {
		buf := make([]byte, 8)
		k, _ := tty.Read(buf)
		t.Fatalf("input was injected: %q", buf[:k])
	}
}
