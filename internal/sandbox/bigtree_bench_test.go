package sandbox

import (
	"testing"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// BenchmarkPlanBigTree: what the sandbox does in a 100 000-folder
// repository (nested repositories, a node_modules) before its first
// command and in the check after it: the mount plan's scan, the watch's
// start, one check. It reports the inotify watches held.
func BenchmarkPlanBigTree(b *testing.B) {
	tree, err := testutil.MakeBigTree(b.TempDir(), 100_000)
	if err != nil {
		b.Fatal(err)
	}
	p := Policy{Whitelist: []string{tree.Root}, Blacklist: DefaultBlacklist(), Home: b.TempDir()}
	watches := 0
	for b.Loop() {
		mp := planMounts(p, nil)
		mp.watch.Start()
		mp.watch.ControlFiles(mp.gitWatch)
		_ = mp.watch.Check()
		watches = mp.watch.Watches()
		mp.watch.Close()
	}
	b.ReportMetric(float64(watches), "watches")
}
