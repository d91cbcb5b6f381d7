//go:build !linux

package sandbox

// revertGit removes nothing off Linux: the control files it reverts are
// the ones the repository watcher lists (mountPlan.gitWatch), and macOS's
// sandbox plans no mounts (seatbelt.go).
func (mountPlan) revertGit() []string { return nil }
