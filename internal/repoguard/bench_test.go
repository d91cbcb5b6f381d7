//go:build linux

package repoguard

import (
	"os"
	"path/filepath"
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
		// The sandbox's scan: the shallowest folders first, as many as
		// MaxWatches, node_modules not entered; past that, the sweep.
		queue := []string{tree.Root}
		for i := 0; i < len(queue) && i < MaxWatches; i++ {
			ents, _ := os.ReadDir(queue[i])
			for _, e := range ents {
				p := filepath.Join(queue[i], e.Name())
				switch {
				case !e.IsDir():
				case e.Name() == ".git":
					w.MarkKnown(p)
					w.Baseline(p)
				case e.Name() == "node_modules":
					w.MarkUnseen()
				default:
					queue = append(queue, p)
					w.Remember(p)
				}
			}
		}
		w.MarkUnseen()
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
