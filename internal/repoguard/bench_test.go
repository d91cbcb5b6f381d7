//go:build linux

package repoguard

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// BenchmarkBigTree measures a Watch in a generated tree of 100 000
// folders with nested repositories and a node_modules (made once): its
// start (a scan as the sandbox's, bounded, then Start), a check after a
// command that changed nothing, and the whole pass the session's last
// check makes. It reports the watches held.
func BenchmarkBigTree(b *testing.B) {
	tree, err := testutil.MakeBigTree(b.TempDir(), 100_000)
	if err != nil {
		b.Fatal(err)
	}
	start := func(b *testing.B) *Watch {
		w := NewWatch()
		w.SetRoots([]string{tree.Root})
		// The sandbox's scan: the first folders, six levels at most,
		// node_modules not entered; past its bound, the sweep.
		left := 20_000
		base := strings.Count(tree.Root, "/")
		_ = filepath.WalkDir(tree.Root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if left--; left < 0 {
				w.MarkUnseen()
				return fs.SkipAll
			}
			switch {
			case d.Name() == ".git":
				w.MarkKnown(p)
				w.Baseline(p)
				return fs.SkipDir
			case d.Name() == "node_modules", strings.Count(p, "/")-base > 6:
				w.MarkUnseen()
				return fs.SkipDir
			}
			w.Remember(p)
			return nil
		})
		w.Start()
		return w
	}
	b.Run("start", func(b *testing.B) {
		watches := 0
		for b.Loop() {
			w := start(b)
			watches = watchCount(w)
			w.Close()
		}
		b.ReportMetric(float64(watches), "watches")
		b.ReportMetric(float64(tree.Dirs), "dirs")
	})
	b.Run("check", func(b *testing.B) {
		w := start(b)
		defer w.Close()
		for b.Loop() {
			if lines := w.Check(); len(lines) > 0 {
				b.Fatal(lines)
			}
		}
		b.ReportMetric(float64(watchCount(w)), "watches")
	})
	b.Run("exhaust", func(b *testing.B) {
		w := start(b)
		defer w.Close()
		for b.Loop() {
			w.Exhaust()
			if lines := w.Check(); len(lines) > 0 {
				b.Fatal(lines)
			}
		}
	})
}
