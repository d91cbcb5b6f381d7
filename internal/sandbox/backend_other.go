//go:build !linux

package sandbox

// Off Linux there is no idle watcher: the repository watcher is a stub
// with no descriptor to wait on (repoguard's watch_other.go), so nothing
// is checked between commands.

// startIdle starts nothing off Linux.
func (b *LocalBackend) startIdle() { b.wake, b.idleEnd = -1, nil }

// stopIdle has nothing to stop off Linux.
func (*LocalBackend) stopIdle() {}
