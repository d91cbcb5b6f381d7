//go:build linux

package repoguard

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDangerousGitConfig(t *testing.T) {
	tests := []struct {
		config, want string
	}{
		{"[core]\n\trepositoryformatversion = 0\n\tbare = false\n[branch \"main\"]\n\tremote = origin\n", ""},
		{"[core]\n\tfsmonitor = x\n", "core.fsmonitor"},
		{"[core]\n\thooksPath = /x\n", "core.hookspath"},
		{"[include]\n\tpath = /x\n", "a [include] section"},
		{"[includeIf \"gitdir:/\"]\n\tpath = /x\n", "a [includeif] section"},
		{"[filter \"lfs\"]\n\tclean = x\n", "a [filter] section"},
		{"[diff \"x\"]\n\ttextconv = x\n", "diff.textconv"},
		{"[credential]\n\thelper = x\n", "a [credential] section"},
		{"[core] sshCommand = x\n", "core.sshcommand"},
		// A clone's and a submodule's config, user settings: harmless.
		{"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://x/y\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n" +
			"[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[submodule \"s\"]\n\turl = ../s\n\tactive = true\n\tupdate = rebase\n" +
			"[user]\n\temail = a@b\n[pull]\n\trebase = true\n", ""},
		// Read as git reads it: a byte-order mark, two headers on a line,
		// a key before any section, a line longer than a scanner's buffer.
		{"\xef\xbb\xbf[include]\n\tpath = /x\n", "a [include] section"},
		{"[core] [include] path = /x\n", "a [include] section"},
		{"path = /x\n[core]\n", "a setting outside any section"},
		{"#" + strings.Repeat("a", 2<<20) + "\n[core]\n\tfsmonitor = x\n", "core.fsmonitor"},
		{"[core\t\"x\"]\n", "a [core\t\"x\"] section"},
		// Keys that run a program in sections that are otherwise harmless,
		// and sections that are not.
		{"[submodule \"s\"]\n\tupdate = \"!touch /x\"\n", "submodule.update"},
		{"[remote \"o\"]\n\turl = ext::sh -c touch% /x\n", "remote.url"},
		{"[remote \"o\"]\n\tvcs = ../../evil\n", "remote.vcs"},
		{"[lfs \"customtransfer.x\"]\n\tpath = /x\n", "lfs.path"},
		{"[init]\n\ttemplateDir = /x\n", "init.templatedir"},
		{"[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n", "a [gpg] section"},
		{"[interactive]\n\tdiffFilter = x\n", "a [interactive] section"},
		{"[mergetool \"x\"]\n\tcmd = x\n", "a [mergetool] section"},
		{"[protocol \"ext\"]\n\tallow = always\n", "a [protocol] section"},
		{"[alias]\n\tst = !touch /x\n", "a [alias] section"},
		{"[gc]\n\trecentObjectsHook = touch /x\n", "gc.recentobjectshook"},
		{"[http]\n\tsaveCookies = true\n\tcookieFile = /home/u/.bashrc\n", "http.savecookies"},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), "config")
		writeFile(t, p, tt.config)
		if got := dangerousGitConfig(p); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.config, got, tt.want)
		}
	}
}

// hgDanger: what in a .hg directory makes hg on the host run a program or
// read configuration from elsewhere; a clone's [paths] is harmless.
func TestHgDanger(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, hg string)
		want  string // substring; "" means harmless
	}{
		{"empty repository", func(t *testing.T, hg string) {}, ""},
		{"a clone's paths", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "# made by clone\n[paths]\ndefault = https://example.org/r\n")
		}, ""},
		{"hooks", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "[hooks]\npre-status = touch x\n")
		}, "its hgrc has a [hooks] section"},
		{"extensions after paths", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc"), "[paths]\ndefault = x\n[Extensions]\nevil = /x/evil.py\n")
		}, "[extensions] section"},
		{"include", func(t *testing.T, hg string) { writeFile(t, filepath.Join(hg, "hgrc"), "%include ../../rc\n") }, "an %include directive"},
		{"not-shared hgrc", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "hgrc-not-shared"), "[ui]\nssh = evil\n")
		}, "its hgrc-not-shared has a [ui] section"},
		{"sharedpath", func(t *testing.T, hg string) { writeFile(t, filepath.Join(hg, "sharedpath"), "/elsewhere/.hg\n") }, "sharedpath"},
		{"hgrc is a link", func(t *testing.T, hg string) {
			writeFile(t, filepath.Join(hg, "real"), "[paths]\n")
			if err := os.Symlink("real", filepath.Join(hg, "hgrc")); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
		{"hgrc is a FIFO", func(t *testing.T, hg string) {
			if err := syscall.Mkfifo(filepath.Join(hg, "hgrc"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hg := filepath.Join(t.TempDir(), ".hg")
			if err := os.Mkdir(hg, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, hg)
			got := hgDanger(hg)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("hgDanger = %q, want %q", got, tt.want)
			}
		})
	}
	dir := t.TempDir()
	if err := os.Symlink("/elsewhere", filepath.Join(dir, ".hg")); err != nil {
		t.Fatal(err)
	}
	if got := hgDanger(filepath.Join(dir, ".hg")); !strings.Contains(got, "symlink") {
		t.Errorf("a .hg symlink: %q", got)
	}
}

// stateRuns: what a rebase's or cherry-pick's state would run at the
// host's next --continue.
func TestStateRuns(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"ordinary picks", map[string]string{"git-rebase-todo": "pick 1234 one\n# exec in a comment\nfixup 5678 two\n", "strategy": "ort\n"}, nil},
		{"exec and x", map[string]string{"git-rebase-todo": "pick 1 a\nexec make test\nx  touch /tmp/p\n"}, []string{"exec make test", "exec touch /tmp/p"}},
		{"a strategy of its own", map[string]string{"strategy": "../../evil\n"}, []string{"merge strategy ../../evil"}},
		{"sequencer options", map[string]string{"opts": "[options]\n\tStrategy = \"../x\"\n\tstrategy-option = theirs\n", "todo": "pick 1 a\n"}, []string{"merge strategy ../x"}},
		{"builtin strategy in options", map[string]string{"opts": "[options]\n\tstrategy = recursive\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rebase-merge")
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			if got := stateRuns(dir); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("stateRuns = %q, want %q", got, tt.want)
			}
		})
	}
	root := t.TempDir()
	if got := stateRuns(filepath.Join(root, "absent")); got != nil {
		t.Errorf("no state: %q", got)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "rebase-merge")); err != nil {
		t.Fatal(err)
	}
	if got := stateRuns(filepath.Join(root, "rebase-merge")); len(got) != 1 || !strings.Contains(got[0], "not a directory") {
		t.Errorf("a linked state directory: %q", got)
	}
	fifo := filepath.Join(root, "seq")
	if err := os.Mkdir(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "todo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := stateRuns(fifo); len(got) != 1 || !strings.Contains(got[0], "todo:") {
		t.Errorf("a FIFO todo (read without blocking): %q", got)
	}
}
