package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// synapseBin is the binary built once for the end-to-end tests.
var synapseBin string

func TestMain(m *testing.M) {
	os.Exit(runWithBinary(m))
}

func runWithBinary(m *testing.M) int {
	dir, err := os.MkdirTemp("", "synapse-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	// make test-landlock runs this package as an unprivileged user that
	// cannot build: it passes the binary it built.
	if bin := os.Getenv("SYNAPSE_TEST_BINARY"); bin != "" {
		synapseBin = bin
		return m.Run()
	}
	synapseBin = filepath.Join(dir, "synapse")
	// Static, as `make build` builds releases.
	build := exec.Command("go", "build", "-o", synapseBin, "github.com/synapse-agent/synapse/cmd/synapse")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building synapse failed: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

type runResult struct {
	stdout, stderr string
	code           int
}

// synapse runs the built binary with a private HOME and SYNAPSE_HOME.
func synapse(t *testing.T, dir string, args ...string) runResult {
	t.Helper()
	return synapseEnv(t, dir, testEnv(t), args...)
}

// synapseEnv runs the built binary in dir with exactly env.
func synapseEnv(t *testing.T, dir string, env []string, args ...string) runResult {
	t.Helper()
	c := exec.Command(synapseBin, args...)
	c.Dir = dir
	c.Env = env
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return runResult{out.String(), errb.String(), code}
}

// testEnv is a private HOME and SYNAPSE_HOME; TMPDIR stays the test's, whose
// directories (t.TempDir) the sandbox then keeps writable.
func testEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "SYNAPSE_HOME=" + filepath.Join(home, ".synapse"), "LC_ALL=C", "SYNAPSE_MCP_START_TIMEOUT=60000",
		"TMPDIR=" + os.TempDir()}
}

func TestExecRunsCommandsInOneSession(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "sub") // a cd within the workspace: file commands follow it
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	r := synapse(t, dir, "exec",
		"cd "+other,
		"pwd",
		"export SYNAPSE_E2E=shared",
		"bash echo $SYNAPSE_E2E",
		`write notes.txt "hello -h"`,
		"read notes.txt",
		"echo out; echo err >&2",
	)
	want := strings.Join([]string{
		"(Command executed successfully with no output)",
		other,
		"(Command executed successfully with no output)",
		"shared",
		"Created " + filepath.Join(other, "notes.txt") + " (8 bytes, 1 line)",
		"     1\thello -h",
		"out\n[stderr]\nerr",
	}, "\n") + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", r.code, r.stdout, want, r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(other, "notes.txt")); err != nil || string(got) != "hello -h" {
		t.Errorf("notes.txt = %q, %v", got, err)
	}
}

func TestExecExitStatusIsTheLastCommands(t *testing.T) {
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"echo hi"}, 0, "hi\n"},
		{[]string{"false", "echo ok"}, 0, ""},
		{[]string{"echo ok", "false"}, 1, ""},
		{[]string{"(exit 7)"}, 7, "[exit code: 7]"},
		{[]string{"nosuchcommand_e2e"}, 127, "`nosuchcommand_e2e` is not a command here"},
		{[]string{"read"}, 1, `Bash(command="read --help")`},
		{[]string{"mcp:demo:echo"}, 1, `Unknown MCP server "demo": no MCP servers are configured`},
		{[]string{"mcp:"}, 0, "No MCP servers are configured."}, // lists servers, not bash's exit 127
		{[]string{"read --help"}, 0, "# read"},
		{[]string{"read -h"}, 0, "Usage: read <file_path>"},
		{[]string{"echo a", "--json"}, 127, "--json"}, // after the first command, everything is a command
	}
	for _, tt := range tests {
		r := synapse(t, t.TempDir(), append([]string{"exec"}, tt.args...)...)
		if r.code != tt.code || !strings.Contains(r.stdout, tt.out) {
			t.Errorf("exec %q: exit %d, stdout %q (stderr %q); want exit %d with %q", tt.args, r.code, r.stdout, r.stderr, tt.code, tt.out)
		}
	}
}

func TestExecJSON(t *testing.T) {
	r := synapse(t, t.TempDir(), "exec", "--json", "echo hi", "read", "ls /nonexistent-e2e")
	if r.code != 2 {
		t.Errorf("exit = %d, want 2 (ls's status)", r.code)
	}
	type rec struct {
		Command string         `json:"command"`
		Output  string         `json:"output"`
		IsError bool           `json:"isError"`
		Message string         `json:"message"`
		Extras  map[string]any `json:"extras"`
	}
	var recs []rec
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var x rec
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, x)
	}
	if len(recs) != 3 {
		t.Fatalf("got %d JSON lines: %s", len(recs), r.stdout)
	}
	if recs[0].Command != "echo hi" || recs[0].Output != "hi" || recs[0].IsError || recs[0].Extras["exitCode"] != 0.0 {
		t.Errorf("first = %+v", recs[0])
	}
	if !recs[1].IsError || recs[1].Extras["failureCategory"] != "invalid_usage" || !strings.Contains(recs[1].Output, `Bash(command="read --help")`) {
		t.Errorf("second = %+v", recs[1])
	}
	if !recs[2].IsError || recs[2].Extras["failureCategory"] != "execution_error" || recs[2].Extras["exitCode"] != 2.0 {
		t.Errorf("third = %+v", recs[2])
	}
}

func TestExecCwdFlag(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("in dir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := synapse(t, t.TempDir(), "exec", "--cwd", dir, "pwd", "read f.txt")
	if r.code != 0 || r.stdout != dir+"\n     1\tin dir\n" {
		t.Errorf("got %+v", r)
	}
	r = synapse(t, t.TempDir(), "exec", "--cwd", filepath.Join(dir, "missing"), "pwd")
	if r.code != 2 || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("bad --cwd: %+v", r)
	}
}

func TestExecNeedsACommand(t *testing.T) {
	r := synapse(t, t.TempDir(), "exec")
	if r.code != 2 || !strings.Contains(r.stderr, "give at least one command") {
		t.Errorf("got %+v", r)
	}
}

func TestExecInterrupt(t *testing.T) {
	c := exec.Command(synapseBin, "exec", "sleep 30", "echo not-reached")
	c.Dir = t.TempDir()
	c.Env = testEnv(t)
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let the command start; not a speed assertion
	if err := c.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130", err)
	}
	if !strings.Contains(out.String(), "[interrupted") || strings.Contains(out.String(), "not-reached") {
		t.Errorf("stdout = %q", out.String())
	}
}

// synapse exec runs native and file commands under the same sandbox as
// synapse run: writes outside the workspace fail (and are reported as
// blocked), --cwd is the writable workspace, sandbox.json is honoured.
func TestExecIsSandboxed(t *testing.T) {
	testutil.RequireBwrap(t)
	ws, outside, tmp := t.TempDir(), testutil.OutsideTmp(t), t.TempDir()
	// A temp dir of its own (writable in the sandbox) that does not hold outside.
	var env []string
	home := ""
	for _, kv := range testEnv(t) {
		if v, ok := strings.CutPrefix(kv, "SYNAPSE_HOME="); ok {
			home = v
		}
		if !strings.HasPrefix(kv, "TMPDIR=") {
			env = append(env, kv)
		}
	}
	env = append(env, "TMPDIR="+tmp)
	exec1 := func(args ...string) runResult {
		t.Helper()
		return synapseEnv(t, t.TempDir(), env, append([]string{"exec"}, args...)...)
	}
	type rec struct {
		Command string         `json:"command"`
		Output  string         `json:"output"`
		Extras  map[string]any `json:"extras"`
	}
	records := func(r runResult) []rec {
		t.Helper()
		var out []rec
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var x rec
			if err := json.Unmarshal([]byte(line), &x); err != nil {
				t.Fatalf("line %q: %v (stderr %s)", line, err, r.stderr)
			}
			out = append(out, x)
		}
		return out
	}

	planted := filepath.Join(outside, "planted.txt")
	r := exec1("--json", "--cwd", ws,
		"echo inside > in.txt && cat in.txt",
		"echo x > "+planted,
		"cd "+outside+" && touch planted2.txt",
		"write "+filepath.Join(outside, "planted3.txt")+" x",
	)
	recs := records(r)
	if len(recs) != 4 {
		t.Fatalf("got %d records: %s %s", len(recs), r.stdout, r.stderr)
	}
	if recs[0].Output != "inside" {
		t.Errorf("workspace write: %+v", recs[0])
	}
	for _, x := range recs[1:] {
		if x.Extras["type"] != "sandbox_blocked" || !strings.HasPrefix(x.Extras["resource"].(string), outside) {
			t.Errorf("%s: not reported as blocked on %s: %+v", x.Command, outside, x)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("synapse exec wrote outside the workspace: %v", entries)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "in.txt")); err != nil || string(data) != "inside\n" {
		t.Errorf("in.txt = %q, %v", data, err)
	}

	// sandbox.json is honoured: a whitelisted directory is writable...
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, "sandbox.json")
	if err := os.WriteFile(cfg, []byte(`{"enabled": true, "policy": {"filesystem": {"whitelist": ["`+outside+`"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := exec1("--cwd", ws, "echo ok > "+planted+" && cat "+planted); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("whitelisted write: %+v", r)
	}
	// ...and so is "enabled": false (commands then run without the sandbox).
	if err := os.WriteFile(cfg, []byte(`{"enabled": false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "unsandboxed.txt")
	if r := exec1("--cwd", ws, "echo free > "+other); r.code != 0 {
		t.Errorf("sandbox off: %+v", r)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("with the sandbox off the write should happen: %v", err)
	}
}
