package skills

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/synapse-agent/synapse/internal/command"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func newTestHandler(t *testing.T) (*Handler, string) {
	t.Helper()
	dir := copyTestSkills(t)
	cwd := t.TempDir()
	return &Handler{
		Index: NewIndex(Root{Dir: dir, Source: SourceUser}),
		Store: &Store{Dir: dir, MaxVersions: 3},
		Cwd:   func() string { return cwd },
		Home:  t.TempDir(),
		// As a user who says yes to every install the model asks for.
		Import: ImportPolicy{ApproveInstall: func(context.Context, InstallRequest) bool { return true }},
	}, cwd
}

func TestManagementCommands(t *testing.T) {
	h, _ := newTestHandler(t)
	tests := []struct {
		line     string
		exit     int
		contains []string
	}{
		{"skill:list", 0, []string{"2 skill(s)", "pdf-tools (1.2.0) — Extract text and page counts from PDF documents.", "scripts: skill:pdf-tools:count, skill:pdf-tools:extract", "hello (0.1)", "warning:", "broken"}},
		{"skill:load pdf-tools", 0, []string{"Skill: pdf-tools (version 1.2.0)", "Folder: ", "Script commands", "skill:pdf-tools:extract", "---\nname: pdf-tools", "# PDF tools"}},
		{"skill:load nope", 1, []string{`Unknown skill "nope"`, "Installed skills: hello, pdf-tools"}},
		{"skill:load", 1, []string{"Usage: skill:load <name>"}},
		{"skill:info pdf-tools", 0, []string{"Name: pdf-tools", "Version: 1.2.0", "Tags: pdf, documents", "License: MIT", "skill:pdf-tools:extract  Extract the text of a PDF file.", "skill:pdf-tools:nodoc  (no description", "References: references/", "Snapshots: none"}},
		{"skill:load -h", 0, []string{"Usage: skill:load <name>"}},
		{"skill:import --help", 0, []string{"Usage: skill:import <dir|git-url>", "--force", "snapshotted", "--continue=a,b", "--merge=src:installed", "nothing to import (exit 0)", "rename"}},
		{"skill:frobnicate x", 1, []string{`Unknown skill command "skill:frobnicate"`, "skill:load <name>", "skill:list", "skill:info", "skill:import", "skill:rollback", "skill:delete", "skill:<skill>:<script>"}},
		{"skill:pdf-tools", 1, []string{"Valid commands", `"pdf-tools" is a skill`, "skill:load pdf-tools", "skill:pdf-tools:extract"}},
		{"skill:pdf-tools:missing", 1, []string{`no script "missing"`, "skill:pdf-tools:count"}},
		{"skill:hello:greet 'unclosed", 1, []string{"Unclosed quote"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			r := h.Run(context.Background(), tt.line)
			out := r.Stdout + r.Stderr
			if r.ExitCode != tt.exit {
				t.Errorf("exit = %d, want %d; output:\n%s", r.ExitCode, tt.exit, out)
			}
			for _, c := range tt.contains {
				if !strings.Contains(out, c) {
					t.Errorf("output lacks %q:\n%s", c, out)
				}
			}
		})
	}
	if strings.Contains(h.Run(context.Background(), "skill:load -h").Stdout, "\n\n") {
		t.Error("-h should be the short usage only")
	}
}

func TestScriptHelp(t *testing.T) {
	h, _ := newTestHandler(t)
	tests := []struct {
		line     string
		contains []string
	}{
		{"skill:pdf-tools:extract --help", []string{"Usage: skill:pdf-tools:extract [args…]", "scripts/extract.py", "/usr/bin/env python3", "Extract the text of a PDF file.\n\nUsage: extract.py <file.pdf> [--pages N]"}},
		{"skill:pdf-tools:count -h", []string{"Usage: skill:pdf-tools:count", "Count pages of a PDF file.\nUsage: count.sh <file.pdf>"}},
		{"skill:pdf-tools:nodoc --help", []string{"Usage: skill:pdf-tools:nodoc [args…]", "python3", "has no docstring or header comment", "skill:load pdf-tools"}},
		{"skill:hello:greet -h", []string{"run with bash", "has no docstring"}},
	}
	for _, tt := range tests {
		r := h.Run(context.Background(), tt.line)
		if r.ExitCode != 0 {
			t.Errorf("%s: exit %d: %s", tt.line, r.ExitCode, r.Stderr)
		}
		for _, c := range tt.contains {
			if !strings.Contains(r.Stdout, c) {
				t.Errorf("%s: output lacks %q:\n%s", tt.line, c, r.Stdout)
			}
		}
	}
}

// hostile are arguments a shell would expand or execute; they must reach the
// script as these exact bytes.
func hostile(marker string) []string {
	return []string{
		"$(touch /tmp/pwned)",
		"$(touch " + marker + ")",
		"`touch " + marker + "`",
		"; touch " + marker,
		"a | touch " + marker,
		"$HOME",
		"*",
		"it's \"quoted\"",
		"",
	}
}

func quoteAll(args []string) string {
	var parts []string
	for _, a := range args {
		parts = append(parts, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return strings.Join(parts, " ")
}

func TestScriptArgumentsArriveVerbatim(t *testing.T) {
	testutil.RequireTool(t, "python3")
	testutil.RequireTool(t, "bash")
	h, cwd := newTestHandler(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	_ = os.Remove("/tmp/pwned")
	args := hostile(marker)
	line := "skill:pdf-tools:extract " + quoteAll(args)

	r := h.Run(context.Background(), line)
	if r.ExitCode != 0 {
		t.Fatalf("python script failed: %d %s", r.ExitCode, r.Stderr)
	}
	var got struct {
		Args []string
		Cwd  string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("bad output %q: %v", r.Stdout, err)
	}
	if !reflect.DeepEqual(got.Args, args) {
		t.Errorf("python got args %q, want %q", got.Args, args)
	}
	if got.Cwd != cwd {
		t.Errorf("python ran in %q, want the session cwd %q", got.Cwd, cwd)
	}

	// Double quotes and backticks written unquoted-ish by a model.
	r = h.Run(context.Background(), "skill:pdf-tools:count \"$(touch "+marker+")\" `touch "+marker+"`")
	want := "arg=$(touch " + marker + ")\narg=`touch\narg=" + marker + "`\n" + cwd + "\n"
	if r.ExitCode != 0 || r.Stdout != want {
		t.Errorf("shell script output %q (exit %d, %s), want %q", r.Stdout, r.ExitCode, r.Stderr, want)
	}
	r = h.Run(context.Background(), "skill:pdf-tools:count "+quoteAll(args))
	var lines []string
	for _, a := range args {
		lines = append(lines, "arg="+a)
	}
	if want := strings.Join(lines, "\n") + "\n" + cwd + "\n"; r.Stdout != want {
		t.Errorf("shell script output %q, want %q", r.Stdout, want)
	}
	for _, p := range []string{marker, "/tmp/pwned"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists: an argument was executed", p)
		}
	}
}

// An operator written bare (`&&`, `|`, `>`) would reach the script as an
// argument while the model expects the shell to act on it: refused before the
// script runs, with the fix; quoted, it is an ordinary argument.
func TestScriptRefusesBareShellOperators(t *testing.T) {
	testutil.RequireTool(t, "python3")
	h, _ := newTestHandler(t)
	for _, line := range []string{
		"skill:pdf-tools:extract a.pdf && echo after",
		"skill:pdf-tools:extract a.pdf | head -1",
		"skill:pdf-tools:extract a.pdf > out.json",
		"skill:pdf-tools:extract a.pdf ; ls",
	} {
		r := h.Run(context.Background(), line)
		if r.ExitCode == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "shell operator") || !strings.Contains(r.Stderr, "on its own") {
			t.Errorf("%s: exit %d stdout %q stderr %q; want a refusal before the script runs", line, r.ExitCode, r.Stdout, r.Stderr)
		}
	}
	r := h.Run(context.Background(), `skill:pdf-tools:extract '&&' "|" \>`)
	var got struct{ Args []string }
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || !reflect.DeepEqual(got.Args, []string{"&&", "|", ">"}) {
		t.Errorf("quoted operators: args %q (%v), exit %d, stderr %q", got.Args, err, r.ExitCode, r.Stderr)
	}
}

func TestScriptExitCodesTimeoutCancel(t *testing.T) {
	testutil.RequireTool(t, "python3")
	h, _ := newTestHandler(t)
	r := h.Run(context.Background(), "skill:pdf-tools:nodoc a b")
	if r.ExitCode != 3 || strings.TrimSpace(r.Stdout) != "2" {
		t.Errorf("nodoc: exit %d out %q, want 3 and 2", r.ExitCode, r.Stdout)
	}
	dir := h.Index.roots[0].Dir
	slow := filepath.Join(dir, "hello", "scripts", "slow.sh")
	started := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(slow, []byte("touch '"+started+"'\nsleep 30 & wait\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.Timeout = 200 * time.Millisecond
	r = h.Run(context.Background(), "skill:hello:slow")
	if r.ExitCode != TimedOut || !strings.Contains(r.Stderr, "timed out") {
		t.Errorf("timeout: exit %d stderr %q", r.ExitCode, r.Stderr)
	}
	h.Timeout = 0
	if err := os.Remove(started); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err) // the timed-out run may have stopped before its touch
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan command.Result, 1)
	go func() { done <- h.Run(ctx, "skill:hello:slow") }()
	testutil.WaitFor(t, "the script to start", func() bool { _, err := os.Stat(started); return err == nil })
	cancel()
	r = <-done
	if r.ExitCode != 130 || !strings.Contains(r.Stderr, "interrupted") {
		t.Errorf("cancel: exit %d stderr %q", r.ExitCode, r.Stderr)
	}
}

func TestScriptWrapperIsUsed(t *testing.T) {
	h, _ := newTestHandler(t)
	var seen []string
	h.Scripts.Wrap = func(argv []string, cwd, _ string) ([]string, error) {
		seen = argv
		return append([]string{"echo", "wrapped"}, argv...), nil
	}
	r := h.Run(context.Background(), "skill:hello:greet 'a b'")
	if !strings.HasPrefix(r.Stdout, "wrapped bash ") || !strings.HasSuffix(r.Stdout, "greet.sh a b\n") {
		t.Errorf("output %q", r.Stdout)
	}
	if len(seen) != 3 || seen[0] != "bash" || seen[2] != "a b" {
		t.Errorf("wrapper saw %q", seen)
	}
}

// TestScriptUnderBubblewrap runs a skill script inside a real bwrap sandbox
// (read-only root, writable session cwd): arguments still arrive verbatim and
// writes outside the cwd fail.
func TestScriptUnderBubblewrap(t *testing.T) {
	testutil.RequireBwrap(t)
	testutil.RequireTool(t, "python3")
	h, cwd := newTestHandler(t)
	h.Scripts.Wrap = func(argv []string, dir, _ string) ([]string, error) {
		return append([]string{"bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
			"--bind", dir, dir, "--unshare-all", "--die-with-parent", "--chdir", dir, "--"}, argv...), nil
	}
	marker := filepath.Join(t.TempDir(), "pwned")
	args := hostile(marker)
	r := h.Run(context.Background(), "skill:pdf-tools:extract "+quoteAll(args))
	var got struct{ Args []string }
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil || !reflect.DeepEqual(got.Args, args) {
		t.Fatalf("under bwrap: %q (exit %d, %s), err %v", r.Stdout, r.ExitCode, r.Stderr, err)
	}
	dir := h.Index.roots[0].Dir
	probe := filepath.Join(dir, "hello", "scripts", "probe.sh")
	outside := filepath.Join(t.TempDir(), "outside")
	script := "touch inside && echo ok-inside\ntouch " + outside + " || echo blocked-outside\n"
	if err := os.WriteFile(probe, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	r = h.Run(context.Background(), "skill:hello:probe")
	if !strings.Contains(r.Stdout, "ok-inside") || !strings.Contains(r.Stdout, "blocked-outside") {
		t.Errorf("probe output %q stderr %q", r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(cwd, "inside")); err != nil {
		t.Errorf("write in cwd did not land: %v", err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("write outside the sandbox succeeded")
	}
}

func TestTabsAndOddCommandWords(t *testing.T) {
	h, _ := newTestHandler(t)
	for _, tt := range []struct {
		line string
		exit int
		want string
	}{
		{"skill:load\tpdf-tools", 0, "Skill: pdf-tools"},
		{"  skill:list  ", 0, "2 skill(s)"},
		{"skill:", 1, "Valid commands"},
		{"skill::", 1, `Unknown skill ""`},
		{"skill:hello:", 1, `no script ""`},
	} {
		r := h.Run(context.Background(), tt.line)
		if r.ExitCode != tt.exit || !strings.Contains(r.Stdout+r.Stderr, tt.want) {
			t.Errorf("%q: exit %d, output %q", tt.line, r.ExitCode, r.Stdout+r.Stderr)
		}
	}
}

// A skill without a description is listed by name alone, not "name — ".
func TestListSkillWithoutDescription(t *testing.T) {
	dir := t.TempDir()
	writeSkill(t, filepath.Join(dir, "nodesc"), "nodesc", "", "")
	h := &Handler{Index: NewIndex(Root{Dir: dir, Source: SourceUser}), Store: &Store{Dir: dir, MaxVersions: 3}, Home: t.TempDir()}
	r := h.Run(context.Background(), "skill:list")
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "\nnodesc\n") || strings.Contains(r.Stdout, "—") {
		t.Errorf("skill:list = %+v", r)
	}
}
