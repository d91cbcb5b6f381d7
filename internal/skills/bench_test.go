package skills

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkIndexCurrent is the cost of a read of an unchanged index of 50
// skills: the modification-time check that keeps it current.
func BenchmarkIndexCurrent(b *testing.B) {
	dir := b.TempDir()
	for i := range 50 {
		writeSkill(b, filepath.Join(dir, fmt.Sprintf("s%02d", i)), fmt.Sprintf("s%02d", i), fmt.Sprintf("skill number %d", i), "1")
	}
	ix := NewIndex(Root{Dir: dir, Source: SourceUser})
	if len(ix.Skills()) != 50 {
		b.Fatal("skills not loaded")
	}
	for b.Loop() {
		if _, ok := ix.Get("s07"); !ok {
			b.Fatal("missing")
		}
	}
}

// BenchmarkScriptRun is one skill:hello:greet through the handler (bash, no sandbox).
func BenchmarkScriptRun(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "skills")
	if _, err := copyTree("testdata/skills", dir); err != nil {
		b.Fatal(err)
	}
	cwd := b.TempDir()
	h := &Handler{Index: NewIndex(Root{Dir: dir, Source: SourceUser}), Cwd: func() string { return cwd }}
	for b.Loop() {
		if r := h.Run(context.Background(), "skill:hello:greet bench"); r.ExitCode != 0 {
			b.Fatal(r.Stderr)
		}
	}
}

// Saving a version: hashing the folder and comparing with every snapshot
// (identical content is not saved again), at the default limit of 20.
func BenchmarkCommitIdenticalAtTheLimit(b *testing.B) {
	st := &Store{Dir: filepath.Join(b.TempDir(), "skills")}
	src := filepath.Join(b.TempDir(), "s")
	for i := range DefaultMaxVersions {
		writeSkill(b, src, "s", fmt.Sprintf("version %d", i), "")
		if _, _, err := st.Commit("s", src, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if _, created, err := st.Commit("s", src, "bench"); err != nil || created {
			b.Fatal(err, created)
		}
	}
}
