package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// cold reads every folder of the scan; cached takes the unchanged
	// ones from the scan cache (a session after the first), as a manager
	// does: loaded and checked first, then the plan.
	for _, cached := range []bool{false, true} {
		name := "cold"
		if cached {
			name = "cached"
		}
		b.Run(name, func(b *testing.B) {
			dir := ""
			if cached {
				dir = b.TempDir()
				c := newDirCache(dir, scanKey(p))
				c.window = -int64(time.Hour) // the tree was just made: count it as settled
				go c.prepare()
				planMountsRead(p, nil, c.readDir).watch.Close()
				if err := writeCache(c.path, c.encode()); err != nil {
					b.Fatal(err)
				}
			}
			watches := 0
			for b.Loop() {
				c := newDirCache(dir, scanKey(p))
				c.window = -int64(time.Hour)
				go c.prepare()
				if dir == "" {
					c = nil
				}
				mp := planMountsRead(p, nil, c.readDir)
				mp.watch.Start()
				mp.watch.ControlFiles(mp.gitWatch)
				_ = mp.watch.Check()
				watches = inotifyWatches(b)
				mp.watch.Close()
			}
			b.ReportMetric(float64(watches), "watches")
		})
	}
}

// inotifyWatches counts the inotify watches this process holds (one
// "inotify wd:" line each in the fdinfo of its inotify descriptors).
func inotifyWatches(tb testing.TB) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err != nil || link != "anon_inode:inotify" {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue
		}
		n += strings.Count(string(b), "inotify wd:")
	}
	return n
}
