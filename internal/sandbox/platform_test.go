package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGlobRegex(t *testing.T) {
	tests := []struct {
		glob, path string
		match      bool
	}{
		{"**/.env", "/w/.env", true},
		{"**/.env", "/.env", true},
		{"**/.env", "/w/a/b/.env", true},
		{"**/.env", "/w/.env/inner", true},
		{"**/.env", "/w/config.env.example", false},
		{"**/.env", "/w/.envrc", false},
		{"**/*.pem", "/w/k/server.pem", true},
		{"/home/**/id_*", "/home/u/x/id_rsa", true},
		{"/home/**/id_*", "/opt/id_rsa", false},
		{"/w/secret?.txt", "/w/secret1.txt", true},
		{"/w/secret?.txt", "/w/secret/1.txt", false},
		{"/w/[ab].key", "/w/a.key", true},
		{"/w/[!ab].key", "/w/a.key", false},
		{"/w/(x).key", "/w/(x).key", true},
		{".env", "/w/a/.env", true},
		{"credentials.json", "/w/credentials.json.bak", false},
		{"*.pem", "/w/a.pem/x", true},
		{"**/id_?sa", "/w/id_rsa", true},
		{"**/id_?sa", "/w/id_rrsa", false},
		{"**/[!.]*.key", "/w/.a.key", false},
		{"**/[!.]*.key", "/w/b.key", true},
	}
	for _, tt := range tests {
		rules := compileRules([]string{tt.glob}, "/home/u")
		if _, got := matchRules(rules, tt.path); got != tt.match {
			t.Errorf("%s ~ %s = %v, want %v", tt.glob, tt.path, got, tt.match)
		}
		// The component fast path must say what the whole-path regex
		// (the one Seatbelt gets) says.
		if r := rules[0]; r.re != nil && r.re.MatchString(tt.path) != tt.match {
			t.Errorf("regex of %s ~ %s = %v, want %v", tt.glob, tt.path, !tt.match, tt.match)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	home := filepath.Join(root, "home")
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "k")
	writeFile(t, filepath.Join(ws, "ok.txt"), "x")
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(ws, "innocent")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "etc-link")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Whitelist: []string{ws, "/scratch"}, Blacklist: DefaultBlacklist(), Home: home, TempDir: "/scratch"}
	tests := []struct {
		path    string
		write   bool
		blocked bool
	}{
		{"ok.txt", false, false},
		{"ok.txt", true, false},
		{"new/dir/file.txt", true, false},
		{"~/.ssh/id_rsa", false, true},
		{"innocent/id_rsa", false, true}, // symlink into the blacklist
		{"etc-link/passwd", true, true},  // symlink out of the whitelist
		{"etc-link/passwd", false, false},
		{"../home/x", true, true},
		{".env", false, true},
		{"/scratch/x", true, false},
		{"/etc/shadow", false, true},
	}
	for _, tt := range tests {
		blocked, reason, resource := p.Check(tt.path, ws, tt.write)
		if blocked != tt.blocked || blocked && (reason == "" || resource == "") {
			t.Errorf("Check(%s, write=%v) = %v %q %q, want %v", tt.path, tt.write, blocked, reason, resource, tt.blocked)
		}
	}
	ro := p
	ro.ReadOnly = true
	if b, _, _ := ro.Check("ok.txt", ws, true); !b {
		t.Error("read-only policy allowed a workspace write")
	}
	if b, reason, _ := ro.Check("/scratch/y", ws, true); !b || !strings.Contains(reason, "read-only") {
		t.Errorf("read-only policy allowed a write to the host temp dir (%q)", reason)
	}
}

func TestWrapArgvWithoutBwrapFailsClosed(t *testing.T) {
	noBwrap := func(string) (string, error) { return "", errors.New("executable file not found in $PATH") }
	argv, err := WrapArgv(Policy{}, []string{"/bin/echo", "hi"}, WrapOptions{GOOS: "linux", LookPath: noBwrap})
	if err == nil || !strings.Contains(err.Error(), "bwrap is required") || argv != nil {
		t.Fatalf("argv=%v err=%v", argv, err)
	}
	if _, err := newPlatform("linux", t.TempDir(), noBwrap); err == nil || !strings.Contains(err.Error(), "bwrap is required") {
		t.Fatalf("platform err = %v", err)
	}
	_, err = LocalProvider{}.Create(t.Context(), CreateOptions{GOOS: "linux", LookPath: noBwrap, StartSession: func() StartSession {
		return nil
	}()})
	if err == nil {
		t.Fatal("create without bwrap or shell succeeded")
	}
	if _, err := WrapArgv(Policy{}, []string{"x"}, WrapOptions{GOOS: "plan9"}); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("err = %v", err)
	}
}

// argPairs returns the (flag, a, b) triples of a bwrap argv as strings.
func argTriples(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		switch argv[i] {
		case "--bind", "--ro-bind":
			if i+2 < len(argv) {
				out = append(out, fmt.Sprintf("%s %s %s", argv[i], argv[i+1], argv[i+2]))
				i += 2
			}
		case "--tmpfs", "--remount-ro", "--chdir":
			out = append(out, argv[i]+" "+argv[i+1])
			i++
		}
	}
	return out
}

func TestBwrapMounts(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "my ws")
	home := filepath.Join(root, "home")
	writeFile(t, filepath.Join(ws, ".git", "config"), "[core]")
	writeFile(t, filepath.Join(ws, ".env"), "S")
	writeFile(t, filepath.Join(ws, "deep", "a", ".env"), "S")
	writeFile(t, filepath.Join(ws, "node_modules", "x", ".env"), "S")
	writeFile(t, filepath.Join(ws, "sub", "secrets.json"), "S")
	writeFile(t, filepath.Join(home, ".ssh", "id_rsa"), "k")
	// A worktree: .git is a file pointing into the main repo.
	main := filepath.Join(root, "main")
	writeFile(t, filepath.Join(main, ".git", "config"), "[core]")
	writeFile(t, filepath.Join(main, ".git", "worktrees", "wt", "commondir"), "../..")
	wt := filepath.Join(ws, "wt")
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n")

	p := Policy{Whitelist: []string{ws, main}, Blacklist: DefaultBlacklist(), Home: home}
	argv, err := WrapArgv(p, []string{"/bin/bash"}, WrapOptions{Cwd: ws, GOOS: "linux", LookPath: func(string) (string, error) { return "/usr/bin/bwrap", nil }, EmptyFile: "/E"})
	if err != nil {
		t.Fatal(err)
	}
	got := argTriples(argv)
	want := []string{
		"--ro-bind / /", "--tmpfs /run",
		"--bind " + ws + " " + ws,
		"--ro-bind " + ws + "/.git/hooks " + ws + "/.git/hooks",
		"--ro-bind " + ws + "/.git/config " + ws + "/.git/config",
		"--ro-bind " + main + "/.git/hooks " + main + "/.git/hooks",
		"--ro-bind " + main + "/.git/config " + main + "/.git/config",
		"--tmpfs " + home + "/.ssh", "--remount-ro " + home + "/.ssh",
		"--ro-bind /E " + ws + "/.env",
		"--ro-bind /E " + ws + "/deep/a/.env",
		"--ro-bind /E " + ws + "/sub/secrets.json",
		"--chdir " + ws,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
	if slices.Contains(got, "--ro-bind /E "+ws+"/node_modules/x/.env") {
		t.Error("node_modules should not be scanned")
	}
	for _, flag := range []string{"--die-with-parent", "--unshare-all", "--new-session", "--cap-drop", "--proc", "--dev"} {
		if !slices.Contains(argv, flag) {
			t.Errorf("missing %s", flag)
		}
	}
	if slices.Contains(argv, "--share-net") {
		t.Error("network shared without allowNetwork")
	}
	// Hides come after the writable binds (a later mount wins).
	if slices.Index(argv, ws+"/.env") < slices.Index(argv, "--bind") {
		t.Error("hide placed before the writable bind")
	}
	p.AllowNetwork = true
	argv, _ = WrapArgv(p, []string{"x"}, WrapOptions{GOOS: "linux", AllowTTY: true, LookPath: func(string) (string, error) { return "/usr/bin/bwrap", nil }})
	if !slices.Contains(argv, "--share-net") || slices.Contains(argv, "--new-session") {
		t.Errorf("allowNetwork/AllowTTY not honoured: %v", argv)
	}
}

// TestBwrapScanBound: the scan reads the shallowest folders first, as
// deep as a small tree goes, and stops at its bound in a wide one, saying
// so.
func TestBwrapScanBound(t *testing.T) {
	deepRoot := t.TempDir()
	deep := deepRoot
	for i := range 12 {
		deep = filepath.Join(deep, fmt.Sprintf("d%d", i))
	}
	writeFile(t, filepath.Join(deep, ".env"), "S")
	mp := planMounts(Policy{Whitelist: []string{deepRoot}, Blacklist: DefaultBlacklist()}, nil)
	if mp.truncated || !slices.Contains(mp.hideFiles, filepath.Join(deep, ".env")) {
		t.Fatalf("a small deep tree was not scanned whole: truncated %v, hidden %q", mp.truncated, mp.hideFiles)
	}

	wide := t.TempDir()
	for i := range maxScanFolders {
		if err := os.Mkdir(filepath.Join(wide, fmt.Sprintf("d%05d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shallow := []string{filepath.Join(wide, ".env"), filepath.Join(wide, "d00000", ".env")}
	for _, f := range shallow {
		writeFile(t, f, "S")
	}
	past := filepath.Join(wide, "zzz", ".env") // its folder is the last to be read
	writeFile(t, past, "S")
	mp = planMounts(Policy{Whitelist: []string{wide}, Blacklist: DefaultBlacklist()}, nil)
	if !mp.truncated {
		t.Fatal("scan past the folder bound not reported")
	}
	for _, f := range shallow {
		if !slices.Contains(mp.hideFiles, f) {
			t.Errorf("%s, among the first folders read, is not hidden", f)
		}
	}
	if slices.Contains(mp.hideFiles, past) {
		t.Fatal("scan went past its bound")
	}
}

func TestSeatbeltProfile(t *testing.T) {
	p := Policy{Whitelist: []string{"/Users/u/ws", "/private/tmp"}, Blacklist: DefaultBlacklist(), Home: "/Users/u"}
	prof := seatbeltProfile(p)
	for _, want := range []string{
		"(deny default)",
		"(allow file-read*)",
		`(allow file-write* (subpath "/Users/u/ws"))`,
		"(deny network*)",
		`(deny file-read* file-write* (subpath "/Users/u/.ssh"))`,
		`(deny file-read* file-write* (regex #"^(/.*)?/\.env(/.*)?$"))`,
	} {
		if !strings.Contains(prof, want) {
			t.Errorf("profile lacks %s:\n%s", want, prof)
		}
	}
	lastAllow := strings.LastIndex(prof, "(allow ")
	firstRegexDeny := strings.Index(prof, "(regex #\"^(/.*)?/")
	if firstRegexDeny < lastAllow {
		t.Error("blacklist deny rules must come after the allow rules")
	}
	if strings.Contains(prof, "(allow network") {
		t.Error("network allowed")
	}
	argv, err := WrapArgv(p, []string{"/bin/ls"}, WrapOptions{GOOS: "darwin", LookPath: func(string) (string, error) { return "/usr/bin/sandbox-exec", nil }})
	if err != nil || argv[0] != "/usr/bin/sandbox-exec" || argv[1] != "-p" || !strings.Contains(argv[2], "(deny network*)") || argv[3] != "/bin/ls" {
		t.Fatalf("argv=%v err=%v", argv, err)
	}
	p.AllowNetwork, p.ReadOnly, p.TempDir = true, true, "/private/tmp"
	prof = seatbeltProfile(p)
	if !strings.Contains(prof, "(allow network*)") || strings.Contains(prof, `"/Users/u/ws"))`) {
		t.Errorf("allowNetwork/readOnly profile wrong:\n%s", prof)
	}
}

func TestRegistryUnknown(t *testing.T) {
	_, err := DefaultRegistry().New("nope")
	if err == nil || !strings.Contains(err.Error(), "available providers: bwrap, landlock, local") {
		t.Fatalf("err = %v", err)
	}
	if p, err := DefaultRegistry().New("local"); err != nil || p.Name() != "local" {
		t.Fatalf("local: %v", err)
	}
}
