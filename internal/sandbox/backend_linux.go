//go:build linux

package sandbox

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// The idle watcher waits on the repository watcher's inotify descriptor
// and an eventfd (Linux's; backend_other.go has the stubs).

// startIdle starts the idle watcher: while no command runs, a job a
// command left in the background can still plant a repository or a control
// file, and the user's own git or hg could run it before the next command.
// The watcher waits on the inotify descriptor and runs the checks as soon
// as anything changes in a watched directory. Without inotify it does not
// run; the checks before each command and Settle remain.
func (b *LocalBackend) startIdle() {
	b.wake = -1
	fd := b.plat.lastPlan.watch.WaitFD()
	if fd < 0 {
		return
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return
	}
	b.wake, b.idleEnd = wake, make(chan struct{})
	go b.idle(fd, wake)
}

// idlePace is how often the idle watcher looks again with no event while
// something only a look can tell about exists: a new repository (inotify
// sees no write made through a shared mapping of its config), a folder
// inotify could not watch (the watch limit), a control folder it could not
// watch. A look that took long (a million unwatched folders) spaces the
// next ones out, so they cost at most a twentieth of a core.
const idlePace = 2 * time.Second

func (b *LocalBackend) idle(fd, wake int) {
	defer close(b.idleEnd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
	timeout := -1
	if b.plat.lastPlan.watch.NeedsLook() {
		timeout = int(idlePace / time.Millisecond)
	}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, timeout); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 || fds[0].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
			return
		}
		if fds[0].Revents != 0 && b.settleQuiet(wake) {
			return
		}
		b.runMu.Lock()
		start := time.Now()
		b.pending = append(b.pending, b.settleLocked()...)
		took := time.Since(start)
		needs := b.plat.lastPlan.watch.NeedsLook()
		b.runMu.Unlock()
		timeout = -1
		if needs {
			timeout = int(max(idlePace, 20*took) / time.Millisecond)
		}
	}
}

// idleDelay is how long the idle watcher lets events settle before it
// looks: a command's own events wake it as the command ends, and the
// check after the command has looked already; a session that ends then
// (synapse exec) should not wait for a look, and its sweep step, that
// the end makes anyway.
const idleDelay = 50 * time.Millisecond

// settleQuiet waits idleDelay, or until wake says stop (true).
func (b *LocalBackend) settleQuiet(wake int) bool {
	fds := []unix.PollFd{{Fd: int32(wake), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(idleDelay/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n > 0
	}
}

// stopIdle stops the idle watcher and waits for it.
func (b *LocalBackend) stopIdle() {
	if b.wake < 0 || b.idleEnd == nil {
		return
	}
	_, _ = unix.Write(b.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-b.idleEnd
	_ = unix.Close(b.wake)
	b.wake = -1
}
