package cli

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// sealInheritedFDs marks every descriptor above 2 close-on-exec. A
// descriptor the parent left open (a file outside the sandbox, a socket)
// would otherwise pass through bwrap into every sandboxed command, which
// could then write to it whatever the mounts say. Close-on-exec rather than
// close: the Go runtime may already hold descriptors of its own (the
// poller) by the time main runs.
func sealInheritedFDs() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Kernels before 5.11 lack CLOSE_RANGE_CLOEXEC: mark each open one.
	ents, derr := os.ReadDir("/proc/self/fd")
	if derr != nil {
		return derr
	}
	for _, e := range ents {
		fd, cerr := strconv.Atoi(e.Name())
		if cerr != nil || fd <= 2 {
			continue
		}
		unix.CloseOnExec(fd) // the directory's own descriptor is gone by now: harmless
	}
	return nil
}
