package shell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/synapse-agent/synapse/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
)

func startT(t *testing.T, opts Options) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func execT(t *testing.T, s *Session, cmd string) command.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := s.Execute(ctx, cmd)
	if err != nil {
		t.Fatalf("Execute(%q): %v", cmd, err)
	}
	return r
}

// tag returns a sleep duration unique to this test run ("1000.<digits>"), so
// the processes a test starts can be found by their command line.
func tag(t *testing.T) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	digits := strings.Map(func(r rune) rune {
		if r >= 'a' {
			return '0' + (r-'a')%10
		}
		return r
	}, h)
	return "1000." + digits
}

// liveWithTag lists running (non-zombie) processes whose command line holds tag.
func liveWithTag(tag string) []string {
	var out []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(b), tag) {
			continue
		}
		dir := filepath.Dir(p)
		st, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(st), ')'); i >= 0 {
			if f := strings.Fields(string(st[i+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		out = append(out, filepath.Base(dir)+": "+strings.ReplaceAll(string(b), "\x00", " "))
	}
	return out
}

func waitGone(t *testing.T, tag string) {
	t.Helper()
	testutil.WaitFor(t, "processes tagged "+tag+" to exit", func() bool { return len(liveWithTag(tag)) == 0 })
}

func waitRunning(t *testing.T, tag string) {
	t.Helper()
	testutil.WaitFor(t, "a process tagged "+tag, func() bool { return len(liveWithTag(tag)) > 0 })
}

type execResult struct {
	res command.Result
	err error
}

// executeAsync runs cmd in the background and returns its result channel.
func executeAsync(ctx context.Context, s *Session, cmd string) <-chan execResult {
	ch := make(chan execResult, 1)
	go func() {
		r, err := s.Execute(ctx, cmd)
		ch <- execResult{r, err}
	}()
	return ch
}

func recv(t *testing.T, ch <-chan execResult) execResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("Execute did not return")
		return execResult{}
	}
}
