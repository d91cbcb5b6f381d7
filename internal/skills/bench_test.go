package skills

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
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

// BenchmarkStageSkill is the descriptor walk of a local import (stage.go):
// finding and copying one skill of 40 files in 4 folders, every entry opened
// with O_NOFOLLOW and checked.
func BenchmarkStageSkill(b *testing.B) {
	src := filepath.Join(b.TempDir(), "src")
	writeSkill(b, src, "big", "a skill of many files", "1")
	for d := range 4 {
		for f := range 10 {
			testutil.WriteFile(b, filepath.Join(src, fmt.Sprintf("dir%d", d), fmt.Sprintf("f%d.txt", f)), "some content of a reference file\n")
		}
	}
	dst := b.TempDir()
	n := 0
	for b.Loop() {
		n++
		out := filepath.Join(dst, fmt.Sprint(n))
		if err := os.Mkdir(out, 0o700); err != nil {
			b.Fatal(err)
		}
		staged, err := stageSkills(src, out, 3, func(string) (bool, string) { return true, "" })
		if err != nil || len(staged) != 1 {
			b.Fatal(err, len(staged))
		}
	}
}
