package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Whatever a command does to its descriptors 0, 1 and 2 lasts for that
// command only: the next one again reads /dev/null and writes to the
// response pipes (the driver opens them anew for every command).
func TestCommandDescriptorsLastOneCommand(t *testing.T) {
	s := startT(t, Options{})
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("line1\nline2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const isNull = `[[ /dev/stdin -ef /dev/null && -c /dev/stdin ]] && echo null`
	steps := []struct{ name, cmd, stdout, stderr string }{
		{"stdin is /dev/null", isNull, "null\n", ""},
		{"stdin redirected for the rest of a command", "exec <" + in + "; read a; read b; echo $a $b", "line1 line2\n", ""},
		{"stdin back to /dev/null", isNull + `; read x; echo "rc=$? [$x]"`, "null\nrc=1 []\n", ""},
		{"stdin closed", "exec <&-; read x; echo rc=$?", "rc=1\n", "bash: line 1: read: read error: 0: Bad file descriptor\n"},
		{"stdin back after close", isNull, "null\n", ""},
		{"stderr to a file", "exec 2>/dev/null; echo hidden >&2; echo out", "out\n", ""},
		{"stderr back", "echo err >&2", "", "err\n"},
		{"stderr closed", "exec 2>&-; echo gone >&2; echo out", "out\n", ""},
		{"stderr back after close", "echo err >&2", "", "err\n"},
		{"stdout closed", "exec >&-; echo gone; echo err >&2", "", "bash: line 1: echo: write error: Bad file descriptor\nerr\n"},
		{"stdout back after close", "echo out", "out\n", ""},
		{"stdout onto stderr", "exec 1>&2; echo swapped", "", "swapped\n"},
		{"stdout back after swap", "echo out; echo err >&2", "out\n", "err\n"},
		{"both to a file", "exec >/dev/null 2>&1; echo a; echo b >&2", "", ""},
		{"background job keeps its descriptors", "{ sleep 0.2; echo late; } & wait; echo now", "late\nnow\n", ""},
		{"traces left on stay the command's", "set -x; exec 2>&-", "", "+++ exec\n"},
		{"a trace on a reopened stderr", "echo t", "t\n", "+++ echo t\n"},
		{"traces off", "set +x; echo u", "u\n", "+++ set +x\n"},
	}
	for _, st := range steps {
		r := execT(t, s, st.cmd)
		if r.Stdout != st.stdout || r.Stderr != st.stderr || !s.Alive() {
			t.Fatalf("%s: %q: stdout %q stderr %q (alive %v), want %q %q", st.name, st.cmd, r.Stdout, r.Stderr, s.Alive(), st.stdout, st.stderr)
		}
	}
}

// The driver takes a request of up to requestMin bytes in one read and a
// larger one in two: commands on both sides of that edge, plain and
// escaped (non-ASCII), arrive whole.
func TestRequestSizes(t *testing.T) {
	s := startT(t, Options{Env: append(os.Environ(), "LC_ALL=C.UTF-8")})
	// The text is the command and its newline after the 31-byte header.
	edge := requestMin - 31
	for _, n := range []int{1, edge - 2, edge - 1, edge, edge + 1, edge + 2, 2 * requestMin, 70000} {
		for _, fill := range []string{"q", "é"} {
			// echo '<fill...>' | wc -m, with the text n bytes long, newline included.
			pre, post := "echo '", "' | wc -m"
			k := n - len(pre) - len(post) - 1
			if k < 0 {
				pre, post, k = "", "", 0
			}
			body := strings.Repeat(fill, k/len(fill))
			cmd := pre + body + post
			if pre == "" {
				cmd = ":"
			}
			r := execT(t, s, cmd)
			want := ""
			if pre != "" {
				want = strconv.Itoa(len([]rune(body))+1) + "\n"
			}
			if r.Stdout != want || r.Stderr != "" || r.ExitCode != 0 {
				t.Fatalf("n=%d fill %q: %+v", n, fill, r)
			}
		}
	}
}

// A move to the background asked for just as its command ended leaves its
// "D" ahead of the next request, where the driver skips it; a USR2 (which
// once meant a move) still only cancels the command that gets it.
func TestLateDetachMarkAndUSR2(t *testing.T) {
	s := startT(t, Options{})
	big := "x='" + strings.Repeat("q", 3000) + "'; echo ${#x}"
	for _, n := range []int{1, 3, 300} {
		s.mu.Lock()
		p := s.p
		s.mu.Unlock()
		if err := p.send([]byte(strings.Repeat("D", n))); err != nil {
			t.Fatal(err)
		}
		if r := execT(t, s, "echo ok"); r.Stdout != "ok\n" || r.ExitCode != 0 {
			t.Fatalf("after %d late marks: %+v", n, r)
		}
		if r := execT(t, s, big); r.Stdout != "3000\n" {
			t.Fatalf("large request after %d late marks: %+v", n, r)
		}
	}
	if r := execT(t, s, "kill -USR2 $$; echo not reached"); r.Stdout != "" || r.ExitCode != 130 || !s.Alive() {
		t.Fatalf("USR2: %+v alive %v", r, s.Alive())
	}
	if r := execT(t, s, "echo still"); r.Stdout != "still\n" {
		t.Fatalf("after USR2: %+v", r)
	}
}

// A background job flooding stderr cannot keep the end of a command from
// being seen: reading stderr to its end once stdout's trailer arrived
// stops at what the pipe could have held when the trailer was written.
func TestStderrFloodDoesNotHoldTheEnd(t *testing.T) {
	s := startT(t, Options{MaxOutputBytes: 1 << 16})
	execT(t, s, "for i in 1 2 3 4; do yes flood >&2 & done")
	for range 5 {
		if r := execT(t, s, "echo ok"); r.Stdout != "ok\n" {
			t.Fatalf("%+v", r)
		}
	}
	execT(t, s, "kill %1 %2 %3 %4; wait")
}
