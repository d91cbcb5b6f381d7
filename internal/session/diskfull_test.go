//go:build linux

package session

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tornChildEnv names the sessions directory of the child process in
// TestAppendAfterAFailedWriteStartsANewLine.
const tornChildEnv = "SYNAPSE_SESSION_TORN_CHILD"

// A write that fails half-way (a disk that fills up mid-line) leaves a torn
// line; the next append must start on a line of its own, or the message it
// writes is glued to the torn one and lost on resume. The child process runs
// under a file-size limit so that the kernel really cuts the write short.
func TestAppendAfterAFailedWriteStartsANewLine(t *testing.T) {
	if dir := os.Getenv(tornChildEnv); dir != "" {
		tornChild(t, dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppendAfterAFailedWriteStartsANewLine$", "-test.count=1")
	cmd.Env = append(os.Environ(), tornChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	id := strings.TrimSpace(lastLine(string(out), "ID "))
	if id == "" {
		t.Fatalf("child printed no session id:\n%s", out)
	}
	w := &warnings{}
	msgs, err := NewStore(dir, nil, w.add).History(id)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text)
	}
	if len(texts) != 2 || texts[0] != "before" || texts[1] != "after" {
		t.Fatalf("history = %q, want [before after] (the torn message dropped, the next one kept)", texts)
	}
	if len(w.all()) != 1 {
		t.Errorf("warnings = %v, want one for the torn line", w.all())
	}
}

func lastLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimPrefix(l, prefix)
		}
	}
	return ""
}

func tornChild(t *testing.T, dir string) {
	s := NewStore(dir, nil, nil)
	ss := s.Create("/w")
	if err := ss.Append(user("before")); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, ss.ID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	// Room for 20 more bytes: the next line is cut after them.
	lim := old
	lim.Cur = uint64(st.Size()) + 20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("cannot limit the file size: %v", err)
	}
	err = ss.Append(user(strings.Repeat("lost ", 100)))
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("the append past the file-size limit did not fail")
	}
	if st2, _ := os.Stat(filepath.Join(dir, ss.ID()+".jsonl")); st2.Size() <= st.Size() {
		t.Fatalf("the failed write wrote nothing (%d bytes): the test needs a torn line", st2.Size())
	}
	if err := ss.Append(user("after")); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ID " + ss.ID() + "\n")
}
