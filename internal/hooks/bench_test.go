package hooks

import (
	"context"
	"os"
	"testing"
)

// The matcher runs for every hook entry on every tool call.
func BenchmarkMatches(b *testing.B) {
	for b.Loop() {
		Matches("rm|mv|git", `cd repo && make test 2>&1 | tail -n 20; git status --short`)
	}
}

// The matcher as the runner uses it: its expression compiled once.
func BenchmarkMatchesCompiled(b *testing.B) {
	re := wordRegexp("rm|mv|git")
	for b.Loop() {
		matches("rm|mv|git", re, `cd repo && make test 2>&1 | tail -n 20; git status --short`)
	}
}

// One PreToolUse command hook around a call: the cost a user hook adds.
func BenchmarkPreToolUseCommandHook(b *testing.B) {
	cfg, _ := ParseConfig([]byte(`{"PreToolUse": [{"hooks": [{"type": "command", "command": "cat >/dev/null"}]}]}`))
	set := NewSet(&Runner{Config: cfg, Env: os.Environ()})
	dir := b.TempDir()
	for b.Loop() {
		if v := set.PreToolUse(context.Background(), "s", dir, "ls"); v.Block != "" || len(v.Problems) > 0 {
			b.Fatal(v)
		}
	}
}
