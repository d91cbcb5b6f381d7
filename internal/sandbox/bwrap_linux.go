//go:build linux

package sandbox

import (
	"errors"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/synapse-agent/synapse/internal/repoguard"
)

// revertGit removes the git control files that appeared where none was
// when the sandbox started (see gitControlFiles) and returns their paths.
// Only inside the writable roots: one elsewhere no command could write
// (the user's own, in the repository the project is a worktree of). And
// through no symlink: .git/objects, worktrees and modules are no mount
// points, and a command can put a symlink to another repository's in
// their place; the folder is opened with no link followed and the entry
// removed relative to it (a directory put there is renamed aside).
func (mp mountPlan) revertGit() []string {
	var removed []string
	for _, p := range mp.gitWatch {
		if mp.watch == nil || mp.watch.RootOf(p) == "" {
			continue
		}
		fd, err := mp.watch.OpenBeneath(filepath.Dir(p), unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			continue // missing, or reached through a symlink: not this repository's
		}
		base := filepath.Base(p)
		err = unix.Unlinkat(fd, base, 0)
		if errors.Is(err, unix.EISDIR) {
			if err = unix.Unlinkat(fd, base, unix.AT_REMOVEDIR); err != nil {
				err = unix.Renameat2(fd, base, fd, base+repoguard.DisabledMark+strconv.FormatInt(time.Now().UnixNano(), 10), unix.RENAME_NOREPLACE)
			}
		}
		unix.Close(fd)
		if err == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
