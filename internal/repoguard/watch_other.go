//go:build !linux

package repoguard

import "strings"

// The watcher (inotify), the openat2 walks beneath the writable roots and
// the Landlock guard are Linux's (watch.go, beneath.go, guard.go): the
// other systems' sandbox (seatbelt) mounts nothing and guards no
// repository, so only the control-file judges of vcsstate.go build there.

func within(p, root string) bool {
	if p == root || root == "/" {
		return true
	}
	return strings.HasPrefix(p, root+"/")
}
