//go:build !linux

package repoguard

import (
	"errors"
	"os"
	"strings"
)

// The watcher (inotify), the openat2 walks beneath the writable roots and
// the Landlock guard are Linux's (watch.go, sweep.go, beneath.go,
// guard.go). Elsewhere (macOS: sandbox-exec) the repository guard's live
// watch does not run: Watch and Guard below are stubs that find, disable
// and restore nothing, so that the sandbox package, which plans its mounts
// with them, builds. On macOS the Seatbelt profile is what keeps the
// control files of the repositories it protects read-only (the policy's
// Protect list); a repository a command creates inside a writable root is
// not checked after the command. The control-file judges (gitdanger.go,
// vcsstate.go) are portable and build everywhere.

// Watch is the non-Linux stub of the repository watcher: it watches nothing.
type Watch struct{}

// NewWatch returns the stub watcher.
func NewWatch() *Watch { return &Watch{} }

// SetRoots does nothing off Linux.
func (*Watch) SetRoots([]string) {}

// MarkKnown does nothing off Linux.
func (*Watch) MarkKnown(string) {}

// Baseline does nothing off Linux.
func (*Watch) Baseline(string) {}

// Fresh lists no repository off Linux.
func (*Watch) Fresh() []string { return nil }

// ControlFiles does nothing off Linux.
func (*Watch) ControlFiles([]string) {}

// ControlChanged reports no change off Linux.
func (*Watch) ControlChanged() bool { return false }

// Adopt does nothing off Linux.
func (*Watch) Adopt([]string) {}

// NeedsLook is false off Linux.
func (*Watch) NeedsLook() bool { return false }

// MarkUnseen does nothing off Linux.
func (*Watch) MarkUnseen() {}

// Unmounted does nothing off Linux.
func (*Watch) Unmounted(string) {}

// WaitFD is -1 off Linux: there is no descriptor to wait on, so the
// sandbox's idle watcher does not run.
func (*Watch) WaitFD() int { return -1 }

// Remember does nothing off Linux.
func (*Watch) Remember(string) {}

// Start does nothing off Linux.
func (*Watch) Start() {}

// Close does nothing off Linux.
func (*Watch) Close() {}

// DupDescriptor has no descriptor to give off Linux.
func (*Watch) DupDescriptor() *os.File { return nil }

// Check finds nothing off Linux.
func (*Watch) Check() []string { return nil }

// Exhaust does nothing off Linux.
func (*Watch) Exhaust() {}

// HoldSweep does nothing off Linux.
func (*Watch) HoldSweep() {}

// DeferSweep does nothing off Linux.
func (*Watch) DeferSweep() {}

// RootOf is "" off Linux: the stub knows no writable root.
func (*Watch) RootOf(string) string { return "" }

// errLinuxOnly is what the stubs that would touch the file system return.
var errLinuxOnly = errors.New("the repository guard's live watch runs on Linux only")

// OpenBeneath opens nothing off Linux.
func (*Watch) OpenBeneath(string, int) (int, error) { return -1, errLinuxOnly }

// Guard is the non-Linux stub of the Landlock backend's guard (Landlock is
// Linux's): it restores nothing.
type Guard struct{}

// NewGuard returns the stub guard.
func NewGuard(*Watch, []string, []string, []string) *Guard { return &Guard{} }

// Check restores nothing off Linux.
func (*Guard) Check() []string { return nil }

// Take returns nothing off Linux.
func (*Guard) Take() []string { return nil }

// Forget does nothing off Linux.
func (*Guard) Forget([]string) {}

func within(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	return strings.HasPrefix(p, root+"/")
}

// Handoff is never needed off Linux: nothing is swept.
func (*Watch) Handoff() (Handoff, bool) { return Handoff{}, false }

// Handoff is the Linux watch's state for a background pass; unused here.
type Handoff struct{}

// Finish finds nothing off Linux.
func Finish(Handoff) []string { return nil }
