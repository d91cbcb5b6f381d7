package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gitWatch finds a dangerous new repository with inotify and, where a
// directory could not be watched, by its ctime; a harmless one is left.
func TestGitWatchFindsNewRepositories(t *testing.T) {
	for _, inotify := range []bool{true, false} {
		name := "ctime"
		if inotify {
			name = "inotify"
		}
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			writeFile(t, filepath.Join(ws, "src", "main.go"), "package main\n")
			mp := planMounts(Policy{Whitelist: []string{ws}}, nil)
			if inotify {
				mp.watch.start()
				if mp.watch.fd < 0 {
					t.Skip("no inotify here")
				}
				defer mp.watch.close()
			}
			if got := mp.watch.check(); len(got) != 0 {
				t.Fatalf("nothing changed, yet: %v", got)
			}
			writeFile(t, filepath.Join(ws, "src", "deep", "er", "repo", ".git", "config"), "[core]\n\tfsmonitor = evil\n")
			writeFile(t, filepath.Join(ws, "plain", ".git", "config"), "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = x\n")
			got := strings.Join(mp.watch.check(), "\n")
			if !strings.Contains(got, filepath.Join(ws, "src", "deep", "er", "repo", ".git")+": its config sets core.fsmonitor") {
				t.Errorf("the fsmonitor repository was not reported: %q", got)
			}
			if _, err := os.Lstat(filepath.Join(ws, "src", "deep", "er", "repo", ".git")); err == nil {
				t.Error("the dangerous .git is still in place")
			}
			if strings.Contains(got, "plain") {
				t.Errorf("a harmless repository was reported: %q", got)
			}
			// A later change to the harmless one is caught.
			writeFile(t, filepath.Join(ws, "plain", ".git", "hooks", "pre-commit"), "#!/bin/sh\n")
			if got := strings.Join(mp.watch.check(), "\n"); !strings.Contains(got, "it has a hook (pre-commit)") {
				t.Errorf("the hook planted later was not reported: %q", got)
			}
		})
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
