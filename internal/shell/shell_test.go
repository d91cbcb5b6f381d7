package shell

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

func TestParseCommand(t *testing.T) {
	env := []string{"HOME=/home/u", "WRAP=/opt/wrap"}
	tests := []struct {
		in      string
		program string
		args    []string
		wantErr bool
	}{
		{in: "sandbox-exec -f /tmp/test.sb /bin/bash", program: "sandbox-exec",
			args: []string{"-f", "/tmp/test.sb", "/bin/bash", "--norc", "--noprofile"}},
		{in: "/bin/bash", program: "/bin/bash", args: []string{"--norc", "--noprofile"}},
		{in: `"/opt/my shell/wrap" --label 'a b' /bin/bash`, program: "/opt/my shell/wrap",
			args: []string{"--label", "a b", "/bin/bash", "--norc", "--noprofile"}},
		{in: `env FOO=a\ b /bin/bash`, program: "env", args: []string{"FOO=a b", "/bin/bash", "--norc", "--noprofile"}},
		{in: `$WRAP ~/bash`, program: "/opt/wrap", args: []string{"/home/u/bash", "--norc", "--noprofile"}},
		{in: "", wantErr: true},
		{in: "   ", wantErr: true},
		{in: `sandbox-exec "unclosed`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			program, args, err := parseCommand(tt.in, env)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want error, got %q %q", program, args)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if program != tt.program || !slices.Equal(args, tt.args) {
				t.Fatalf("got %q %q, want %q %q", program, args, tt.program, tt.args)
			}
		})
	}
	// The exported form uses the process environment.
	program, args, err := parseCommand("sandbox-exec -f /tmp/test.sb /bin/bash", os.Environ())
	if err != nil || program != "sandbox-exec" || !slices.Equal(args, []string{"-f", "/tmp/test.sb", "/bin/bash", "--norc", "--noprofile"}) {
		t.Fatalf("ParseCommand = %q %q %v", program, args, err)
	}
}

func TestOptionsArgv(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		program string
		args    []string
	}{
		{"default", Options{}, DefaultShell, []string{"--norc", "--noprofile"}},
		{"command", Options{Command: "env /bin/bash", Env: []string{}}, "env", []string{"/bin/bash", "--norc", "--noprofile"}},
		{"argv wins", Options{Command: "ignored", Argv: []string{"bwrap", "--ro-bind", "/", "/", "/bin/bash"}},
			"bwrap", []string{"--ro-bind", "/", "/", "/bin/bash", "--norc", "--noprofile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			program, args, err := tt.opts.argv()
			if err != nil || program != tt.program || !slices.Equal(args, tt.args) {
				t.Fatalf("argv() = %q %q %v", program, args, err)
			}
		})
	}
	// Appending must not write into the caller's Argv.
	argv := make([]string, 2, 10)
	copy(argv, []string{"/bin/bash", "-x"})
	_, _, _ = Options{Argv: argv}.argv()
	if got := argv[:cap(argv)][2]; got != "" {
		t.Fatalf("argv() wrote %q into the caller's slice", got)
	}
}

// Seed 003: 命令执行期间禁止并发执行.
func TestConcurrentExecuteIsBusy(t *testing.T) {
	s := startT(t, Options{})
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tg := tag(t)
	first := executeAsync(ctx, s, "touch "+dir+"/started; sleep "+tg)
	waitRunning(t, tg)

	_, err := s.Execute(context.Background(), "echo hi")
	if !errors.Is(err, ErrBusy) || err.Error() != "Another command is already executing" {
		t.Fatalf("second Execute: err = %v, want ErrBusy", err)
	}
	cancel()
	if r := recv(t, first); r.err != nil || r.res.ExitCode != 130 {
		t.Fatalf("first command: %+v %v", r.res, r.err)
	}
	if r := execT(t, s, "echo hi"); r.Stdout != "hi\n" {
		t.Fatalf("after busy: %+v", r)
	}
}

// Seed 003: 进程未就绪时执行命令返回错误.
func TestNotReady(t *testing.T) {
	t.Run("never started", func(t *testing.T) {
		var s Session
		_, err := s.Execute(context.Background(), "echo hi")
		if !errors.Is(err, ErrNotReady) || !strings.HasPrefix(err.Error(), "Bash session is not ready") {
			t.Fatalf("err = %v", err)
		}
		if s.Alive() {
			t.Fatal("zero Session is alive")
		}
	})
	t.Run("closed", func(t *testing.T) {
		s := startT(t, Options{})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		_, err := s.Execute(context.Background(), "echo hi")
		if !errors.Is(err, ErrNotReady) || errors.Is(err, ErrCrashed) {
			t.Fatalf("err = %v", err)
		}
		if s.Alive() {
			t.Fatal("closed session is alive")
		}
		if err := s.Restart(context.Background()); !errors.Is(err, ErrNotReady) {
			t.Fatalf("Restart after Close: %v", err)
		}
	})
	t.Run("exited", func(t *testing.T) {
		s := startT(t, Options{})
		r := execT(t, s, "echo bye; exit 3")
		if r.ExitCode != 3 || r.Stdout != "bye\n" {
			t.Fatalf("exit result: %+v", r)
		}
		if s.Alive() {
			t.Fatal("alive after exit")
		}
		_, err := s.Execute(context.Background(), "echo hi")
		if !errors.Is(err, ErrNotReady) || errors.Is(err, ErrCrashed) {
			t.Fatalf("err = %v", err)
		}
		if err := s.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := execT(t, s, "echo back"); r.Stdout != "back\n" || !s.Alive() {
			t.Fatalf("after restart: %+v", r)
		}
	})
}

// Seed 003: 会话重启后环境变量应被重置 (and the working directory).
func TestRestartResetsEnvAndCwd(t *testing.T) {
	dir := t.TempDir()
	s := startT(t, Options{Dir: dir})
	if r := execT(t, s, "export SYNAPSE_TEST_VAR=works; echo $SYNAPSE_TEST_VAR"); r.Stdout != "works\n" {
		t.Fatalf("export: %+v", r)
	}
	execT(t, s, "cd /")
	if s.Cwd() != "/" {
		t.Fatalf("cwd = %q", s.Cwd())
	}
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := execT(t, s, `echo "[$SYNAPSE_TEST_VAR]"`)
	if r.Stdout != "[]\n" {
		t.Fatalf("after restart: %q", r.Stdout)
	}
	if s.Cwd() != dir || r.Cwd != dir {
		t.Fatalf("cwd after restart = %q / %q, want %q", s.Cwd(), r.Cwd, dir)
	}
}

// Seed 003: 支持自定义 shellCommand 启动 / 自定义 shell 下命令结束标记仍可正确解析.
func TestCustomShellCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my wrapper")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(dir, "args")
	wrapper := filepath.Join(dir, "wrap shell")
	script := "#!/bin/sh\nprintf '%s\\n' \"$0\" \"$@\" > '" + argsFile + "'\nexec \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		command  string
		wantArgs []string // what the wrapper saw, when it is the wrapper
	}{
		{name: "env", command: "env /bin/bash"},
		{name: "quoted wrapper path", command: `"` + wrapper + `" /bin/bash`,
			wantArgs: []string{wrapper, "/bin/bash", "--norc", "--noprofile"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startT(t, Options{Command: tt.command})
			program, _ := s.Program()
			if want, _, _ := parseCommand(tt.command, os.Environ()); program != want {
				t.Fatalf("program = %q, want %q", program, want)
			}
			r := execT(t, s, "echo hello")
			if r.Stdout != "hello\n" || strings.TrimSpace(r.Stdout) != "hello" || r.ExitCode != 0 || r.Stderr != "" {
				t.Fatalf("echo hello: %+v", r)
			}
			if tt.wantArgs != nil {
				b, err := os.ReadFile(argsFile)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"); !slices.Equal(got, tt.wantArgs) {
					t.Fatalf("wrapper saw %q, want %q", got, tt.wantArgs)
				}
			}
		})
	}
	if _, err := Start(context.Background(), Options{Command: "/nonexistent/shell-xyz"}); err == nil ||
		!strings.Contains(err.Error(), "/nonexistent/shell-xyz") {
		t.Fatalf("missing program: err = %v", err)
	}
	if _, err := Start(context.Background(), Options{Command: "/bin/false"}); err == nil ||
		!strings.Contains(err.Error(), "exited before it was ready") {
		t.Fatalf("program that exits: err = %v", err)
	}
}

func TestCdAndExportPersist(t *testing.T) {
	base := t.TempDir()
	spaced := filepath.Join(base, "dir with spaces")
	newline := filepath.Join(base, "odd\nname")
	for _, d := range []string{spaced, newline} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := startT(t, Options{Dir: base, Env: append(os.Environ(), "FROM_OPTIONS=yes")})
	if s.Cwd() != base {
		t.Fatalf("initial cwd = %q, want %q", s.Cwd(), base)
	}
	steps := []struct {
		cmd, stdout, cwd string
	}{
		{"echo $FROM_OPTIONS", "yes\n", base},
		{"cd 'dir with spaces' && export GREETING=hi", "", spaced},
		{"pwd; echo $GREETING", spaced + "\nhi\n", spaced},
		{"LOCALVAR=1; declare -A m=([k]=v)", "", spaced},
		{`echo "$LOCALVAR ${m[k]}"`, "1 v\n", spaced},
		{"cd ../$'odd\\nname'", "", newline},
		{"f() { echo fn; }; cd ..", "", base},
		{"f; alias ll='echo aliased'", "fn\n", base},
	}
	for _, st := range steps {
		r := execT(t, s, st.cmd)
		if r.Stdout != st.stdout || r.ExitCode != 0 || r.Cwd != st.cwd || s.Cwd() != st.cwd {
			t.Fatalf("%q: got %+v (Cwd() %q), want stdout %q cwd %q", st.cmd, r, s.Cwd(), st.stdout, st.cwd)
		}
	}
}

func TestStdinIsEOF(t *testing.T) {
	py := testutil.RequireTool(t, "python3")
	s := startT(t, Options{})
	tests := []struct{ cmd, stdout string }{
		{"cat; echo done", "done\n"},
		{`read x; echo "rc=$? x=[$x]"`, "rc=1 x=[]\n"},
		{"head -n 1; echo done", "done\n"},
		{"bash -c 'read y'; echo rc=$?", "rc=1\n"},
		{py + "; echo rc=$?", "rc=0\n"},
	}
	for _, tt := range tests {
		r := execT(t, s, tt.cmd)
		if r.Stdout != tt.stdout {
			t.Fatalf("%q: %+v, want stdout %q", tt.cmd, r, tt.stdout)
		}
	}
}

func TestOutputCapture(t *testing.T) {
	s := startT(t, Options{})
	big := 5 << 20
	tests := []struct {
		name, cmd      string
		stdout, stderr string
		code           int
	}{
		{"no trailing newline", "printf abc", "abc", "", 0},
		{"separate streams", "echo out; echo err >&2; echo out2; printf e2 >&2; exit_code=4; (exit 4)", "out\nout2\n", "err\ne2", 4},
		{"non-utf8", `printf '\xff\xfe\x00\x80z'; printf '\xc3' >&2`, "\xff\xfe\x00\x80z", "\xc3", 0},
		{"large stdout", "head -c " + strconv.Itoa(big) + " /dev/zero | tr '\\0' a", strings.Repeat("a", big), "", 0},
		{"large stderr", "head -c " + strconv.Itoa(big) + " /dev/zero | tr '\\0' b >&2", "", strings.Repeat("b", big), 0},
		{"marker-like text", `printf '%s\n' "syn00:start" "syn00:end:0:done" "syn00:fin" ":start" ":end" >&2; echo "@ID@:fin"`,
			"@ID@:fin\n", "syn00:start\nsyn00:end:0:done\nsyn00:fin\n:start\n:end\n", 0},
		{"command not found reads like bash", "no_such_cmd_xyz", "", "bash: line 1: no_such_cmd_xyz: command not found\n", 127},
		{"exec redirect lasts one command", "exec >/dev/null; echo hidden", "", "", 0},
		{"output restored", "echo visible", "visible\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := execT(t, s, tt.cmd)
			if r.Stdout != tt.stdout || r.Stderr != tt.stderr || r.ExitCode != tt.code {
				t.Fatalf("got stdout %q stderr %q code %d, want %q %q %d",
					trunc(r.Stdout), trunc(r.Stderr), r.ExitCode, trunc(tt.stdout), trunc(tt.stderr), tt.code)
			}
		})
	}
	// The driver's own state and trap text must not disturb framing either.
	for _, cmd := range []string{"set; declare -p; trap -p", "set -x; echo traced", "set +x", "break; echo no", "continue", "return 5"} {
		execT(t, s, cmd)
	}
	if r := execT(t, s, "echo still"); r.Stdout != "still\n" || r.Stderr != "" {
		t.Fatalf("after driver-state dump: %+v", r)
	}
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:40] + "..." + s[len(s)-40:]
	}
	return s
}

func TestOutputCap(t *testing.T) {
	s := startT(t, Options{MaxOutputBytes: 1000})
	r := execT(t, s, "head -c 600 /dev/zero | tr '\\0' h; head -c 5000 /dev/zero | tr '\\0' m; head -c 600 /dev/zero | tr '\\0' t")
	if !strings.HasPrefix(r.Stdout, strings.Repeat("h", 500)+"\n[… 5200 bytes of output not shown]") ||
		!strings.HasSuffix(r.Stdout, "]\n"+strings.Repeat("t", 500)) {
		t.Fatalf("capped output = %q", trunc(r.Stdout))
	}
}

func TestLargeCommand(t *testing.T) {
	s := startT(t, Options{})
	for _, n := range []int{59000, 200000} { // both sides of the here-string/eval switch
		cmd := "x='" + strings.Repeat("q", n) + "'\necho ${#x}"
		r := execT(t, s, cmd)
		if r.Stdout != strconv.Itoa(n)+"\n" {
			t.Fatalf("n=%d: %+v", n, trunc(r.Stdout))
		}
	}
	if r := execT(t, s, "printf 'a\\0b'"); r.Stdout != "a\x00b" {
		t.Fatalf("NUL in output: %q", r.Stdout)
	}
	if r, err := s.Execute(context.Background(), "echo a\x00b"); err != nil || r.ExitCode == 0 || !strings.Contains(r.Stderr, "NUL") {
		t.Fatalf("NUL in command: %+v %v", r, err)
	}
}

// The driver reads a command by its length: text with multi-byte
// characters (or bytes that are none) must arrive whole and unchanged under
// a UTF-8 locale, where bash counts characters, whatever locale a command
// sets for the ones after it, readonly included.
func TestMultibyteCommandText(t *testing.T) {
	s := startT(t, Options{Env: append(os.Environ(), "LC_ALL=C.UTF-8")})
	for _, cmd := range []string{
		"echo 'héllo wörld ✓'",
		"export LC_ALL=POSIX; echo 'héllo wörld ✓'",
		"readonly LC_ALL=C.UTF-8; echo 'héllo wörld ✓'",
		"echo 'héllo wörld ✓'",
		"printf '%s\\n' 'ü\\x' \\\nline",
		`printf '%s\n' '\xc3\\\0' "\\c" 'é\x41'`,
		"printf '\\xff\\xfe%s' \xff\xfe\xc3",
	} {
		r := execT(t, s, cmd)
		want := "héllo wörld ✓\n"
		switch {
		case strings.HasPrefix(cmd, "printf '%s\\n' 'ü"):
			want = `ü\x` + "\nline\n"
		case strings.HasPrefix(cmd, "printf '%s\\n' '\\"):
			want = `\xc3\\\0` + "\n" + `\c` + "\n" + `é\x41` + "\n"
		case strings.HasPrefix(cmd, "printf '\\xff"):
			want = "\xff\xfe\xff\xfe\xc3"
		}
		if r.Stdout != want || r.Stderr != "" || r.ExitCode != 0 {
			t.Fatalf("%q: %+v", cmd, r)
		}
	}
}

// A command's TMOUT (bash's default timeout for read) must not end the
// driver's wait for the next command.
func TestTMOUTDoesNotEndTheShell(t *testing.T) {
	s := startT(t, Options{})
	execT(t, s, "export TMOUT=1")
	time.Sleep(1500 * time.Millisecond)
	if r := execT(t, s, "echo after"); r.Stdout != "after\n" || !s.Alive() {
		t.Fatalf("after an idle TMOUT: %+v alive=%v", r, s.Alive())
	}
}

func TestBackgroundJobDoesNotDelay(t *testing.T) {
	s := startT(t, Options{})
	tg := tag(t)
	// A deadline far shorter than the job: if Execute waited for it, the
	// command would come back interrupted (130) instead of 0.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := s.Execute(ctx, "sleep "+tg+" & echo started")
	if err != nil || r.ExitCode != 0 || r.Stdout != "started\n" {
		t.Fatalf("background job: %+v %v", r, err)
	}
	r, err = s.Execute(ctx, "echo next")
	if err != nil || r.ExitCode != 0 || r.Stdout != "next\n" {
		t.Fatalf("next command: %+v %v", r, err)
	}
	// The job may not have exec'd sleep yet on a loaded machine: wait for it
	// to show up (it never does if the next command killed it).
	testutil.WaitFor(t, "the background job to be running", func() bool { return len(liveWithTag(tg)) > 0 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, tg) // Close kills background jobs too
}

// Cancelling kills the command's whole process tree but keeps the shell,
// its cwd, its environment and background jobs of earlier commands.
func TestCancelKillsProcessTree(t *testing.T) {
	dir := t.TempDir()
	s := startT(t, Options{})
	execT(t, s, "cd "+dir+" && export KEEP=kept")
	keeper := tag(t)
	execT(t, s, "sleep "+keeper+" &")
	tests := []struct{ name, cmd string }{
		{"simple", "sleep %T; echo should-not-run"},
		{"orphaning child", "bash -c 'sleep %T & sleep %T'; echo should-not-run"},
		{"pipeline", "sleep %T | cat | cat; echo should-not-run"},
		{"function", "f() { sleep %T; echo should-not-run; }; g() { f; echo should-not-run; }; g; echo should-not-run"},
		{"builtin loop", "while :; do sleep %T; done; echo should-not-run"},
		{"busy loop", "sleep %T & while :; do :; done"},
		{"command substitution", "x=$(sleep %T); echo should-not-run"},
		{"job and wait", "sleep %T & wait; echo should-not-run"},
		{"subshell", "(sleep %T; echo should-not-run)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := tag(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := executeAsync(ctx, s, strings.ReplaceAll(tt.cmd, "%T", tg))
			waitRunning(t, tg)
			cancel()
			r := recv(t, ch)
			if r.err != nil {
				t.Fatalf("Execute error: %v", r.err)
			}
			if r.res.ExitCode != 130 || !strings.Contains(r.res.Stderr, "interrupted") || strings.Contains(r.res.Stdout, "should-not-run") {
				t.Fatalf("result: %+v", r.res)
			}
			waitGone(t, tg)
			after := execT(t, s, "echo $KEEP; pwd")
			if after.Stdout != "kept\n"+dir+"\n" || after.Cwd != dir {
				t.Fatalf("shell state after cancel: %+v", after)
			}
		})
	}
	if len(liveWithTag(keeper)) == 0 {
		t.Fatal("a background job from an earlier command was killed by a cancel")
	}
	_ = s.Close()
	waitGone(t, keeper)
}

func TestTimeout(t *testing.T) {
	s := startT(t, Options{Timeout: 300 * time.Millisecond})
	execT(t, s, "export KEEP=kept")
	tg := tag(t)
	r := execT(t, s, "bash -c 'sleep "+tg+" & sleep "+tg+"' | cat; echo should-not-run")
	if r.ExitCode != TimedOut || !strings.Contains(r.Stderr, "timed out after 300ms") || strings.Contains(r.Stdout, "should-not-run") {
		t.Fatalf("timeout result: %+v", r)
	}
	waitGone(t, tg)
	if r := execT(t, s, "echo $KEEP"); r.Stdout != "kept\n" || r.ExitCode != 0 {
		t.Fatalf("after timeout: %+v", r)
	}
}

// A timed-out command's stderr keeps what the command wrote and the note,
// not bash's report of the job we killed ("bash: line 1: 1234 Killed ...").
func TestTimeoutDropsKilledJobNoise(t *testing.T) {
	s := startT(t, Options{Timeout: 300 * time.Millisecond})
	for _, cmd := range []string{"echo started >&2; sleep 30", "echo started >&2; sleep 30 | cat"} {
		r := execT(t, s, cmd)
		if !r.TimedOut || r.ExitCode != TimedOut {
			t.Fatalf("%q: %+v, want a timeout", cmd, r)
		}
		if !strings.HasPrefix(r.Stderr, "started\nCommand timed out after 300ms") || strings.Contains(r.Stderr, "Killed") || strings.Contains(r.Stderr, "| cat") {
			t.Errorf("%q: stderr = %q, want the command's own line then the note", cmd, r.Stderr)
		}
	}
	if r := execT(t, s, "echo fine"); r.TimedOut {
		t.Errorf("a command that finished is marked timed out: %+v", r)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	s := startT(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := s.Execute(ctx, "touch "+filepath.Join(t.TempDir(), "ran"))
	if err != nil || r.ExitCode != 130 {
		t.Fatalf("got %+v %v", r, err)
	}
	if r := execT(t, s, "echo ok"); r.Stdout != "ok\n" {
		t.Fatalf("after: %+v", r)
	}
}

func TestCrashIsDetected(t *testing.T) {
	t.Run("during a command", func(t *testing.T) {
		s := startT(t, Options{})
		_, err := s.Execute(context.Background(), "kill -9 $$")
		if !errors.Is(err, ErrCrashed) {
			t.Fatalf("err = %v, want ErrCrashed", err)
		}
		_, err = s.Execute(context.Background(), "echo hi")
		if !errors.Is(err, ErrNotReady) || !errors.Is(err, ErrCrashed) {
			t.Fatalf("next Execute: %v", err)
		}
		if err := s.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := execT(t, s, "echo hi"); r.Stdout != "hi\n" {
			t.Fatalf("after restart: %+v", r)
		}
	})
	t.Run("between commands", func(t *testing.T) {
		s := startT(t, Options{})
		pid, err := strconv.Atoi(strings.TrimSpace(execT(t, s, "echo $$").Stdout))
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		testutil.WaitFor(t, "the session to notice the crash", func() bool { return !s.Alive() })
		_, err = s.Execute(context.Background(), "echo hi")
		if !errors.Is(err, ErrNotReady) || !errors.Is(err, ErrCrashed) || !strings.HasPrefix(err.Error(), "Bash session is not ready") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := range 15 {
		s, err := Start(context.Background(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		cmd := "echo hi"
		if i%3 == 0 {
			cmd = "sleep 1000 & echo hi" // a job holding the pipes open
		}
		if _, err := s.Execute(context.Background(), cmd); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			_ = s.Restart(context.Background())
		}
		_ = s.Close()
	}
	testutil.WaitFor(t, "goroutines to settle", func() bool { return runtime.NumGoroutine() <= before+1 })
}

func BenchmarkEchoRoundTrip(b *testing.B) {
	s, err := Start(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	benchEcho(b, s)
}

// benchEcho reports, besides the wall time that another load on the
// machine skews, the CPU time bash and this process spent per command.
func benchEcho(b *testing.B, s *Session) {
	ctx := context.Background()
	bash0, self0 := benchCPU(b, s)
	for b.Loop() {
		r, err := s.Execute(ctx, "echo hello")
		if err != nil || r.Stdout != "hello\n" {
			b.Fatalf("%+v %v", r, err)
		}
	}
	bash1, self1 := benchCPU(b, s)
	b.ReportMetric(float64(bash1-bash0)/float64(b.N), "bash-cpu-ns/op")
	b.ReportMetric(float64(self1-self0)/float64(b.N), "go-cpu-ns/op")
}

// benchCPU is the CPU time (ns) bash and this process have used so far.
func benchCPU(b *testing.B, s *Session) (bash, self int64) {
	b.Helper()
	s.mu.Lock()
	pid := s.p.shell
	s.mu.Unlock()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		b.Skipf("no schedstat: %v", err)
	}
	f := strings.Fields(string(st))
	bash, _ = strconv.ParseInt(f[0], 10, 64)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return bash, ru.Utime.Nano() + ru.Stime.Nano()
}

// The user's shell options apply to their commands and never leak the
// driver's own workings into the output.
func TestShellOptionsDoNotDisturbDriver(t *testing.T) {
	s := startT(t, Options{})
	steps := []struct{ cmd, stdout, stderr string }{
		{"set -u -o pipefail; shopt -s expand_aliases; alias echo='echo aliased'", "", ""},
		{"printf() { echo fake; }; read() { echo fake; }; mapfile() { echo fake; }", "", ""},
		{"echo plain", "aliased plain\n", ""}, // aliases persist like any shell state
		{"unalias echo", "", ""},
		{"set -x", "", ""},
		// Three levels: the driver's eval, its source of the command.
		{"echo traced", "traced\n", "+++ echo traced\n"},
		{"set +x", "", "+++ set +x\n"},
		{"unset -f printf read mapfile; echo ok", "ok\n", ""},
	}
	for _, st := range steps {
		r := execT(t, s, st.cmd)
		if r.Stdout != st.stdout || r.Stderr != st.stderr {
			t.Fatalf("%q: stdout %q stderr %q, want %q %q", st.cmd, r.Stdout, r.Stderr, st.stdout, st.stderr)
		}
	}
	// Like any non-interactive bash, an error that ends a script under
	// `set -u` ends the session; the command's own result still arrives.
	r := execT(t, s, "echo $UNSET_VAR_XYZ")
	if r.ExitCode != 1 || r.Stderr != "bash: line 1: UNSET_VAR_XYZ: unbound variable\n" || s.Alive() {
		t.Fatalf("unbound variable: %+v alive=%v", r, s.Alive())
	}
	if _, err := s.Execute(context.Background(), "echo hi"); !errors.Is(err, ErrNotReady) {
		t.Fatalf("after fatal error: %v", err)
	}
}

func TestRestartDuringCommand(t *testing.T) {
	s := startT(t, Options{})
	tg := tag(t)
	ch := executeAsync(context.Background(), s, "sleep "+tg)
	waitRunning(t, tg)
	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := recv(t, ch)
	if !errors.Is(r.err, ErrNotReady) || errors.Is(r.err, ErrCrashed) {
		t.Fatalf("in-flight command: %+v %v", r.res, r.err)
	}
	waitGone(t, tg)
	if r := execT(t, s, "echo fresh"); r.Stdout != "fresh\n" {
		t.Fatalf("after restart: %+v", r)
	}
}

// An inherited CDPATH is dropped: `cd dir` goes to ./dir or fails, never
// to a dir of the same name elsewhere (where the command, and the ask
// mode's check of it, did not look).
func TestInheritedCDPATHIsDropped(t *testing.T) {
	base, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(elsewhere, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := startT(t, Options{Dir: base, Env: append(os.Environ(), "CDPATH="+elsewhere)})
	r := execT(t, s, `echo "[$CDPATH]"; cd build`)
	if r.Stdout != "[]\n" || r.ExitCode == 0 || s.Cwd() != base {
		t.Fatalf("got %+v (cwd %q): CDPATH was used", r, s.Cwd())
	}
}

// The shell has no terminal, so its editors and pagers are non-interactive,
// whatever the user's environment says: an editor git starts accepts the
// file as it is instead of waiting for keys until the timeout.
func TestNonInteractiveEditorsAndPagers(t *testing.T) {
	s := startT(t, Options{Env: append(os.Environ(), "EDITOR=vim", "PAGER=less", "GIT_EDITOR=vi"), Timeout: time.Minute})
	r := execT(t, s, `echo "$GIT_EDITOR $EDITOR $VISUAL $PAGER $GIT_PAGER"`)
	if r.Stdout != "true true true cat cat\n" {
		t.Fatalf("editors and pagers: %q", r.Stdout)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	r = execT(t, s, "cd "+dir+" && git init -q && git -c user.name=t -c user.email=t@t commit --allow-empty")
	if r.TimedOut || r.ExitCode == 0 || !strings.Contains(r.Stderr, "empty commit message") {
		t.Fatalf("git commit without -m: %+v, want it to stop at once on the empty message", r)
	}
}
