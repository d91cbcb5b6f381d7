//go:build !linux

package shell

import (
	"errors"

	"golang.org/x/sys/unix"
)

// readNB and writeNB are plain calls here (the Linux ones skip the
// runtime's bookkeeping).
func readNB(fd int, b []byte) (int, error)  { return unix.Read(fd, b) }
func writeNB(fd int, b []byte) (int, error) { return unix.Write(fd, b) }

// start runs the pump in a goroutine that waits in poll(2) on both pipes and
// the stop pipe.
func (pu *pump) start(stopFd int) error {
	go func() {
		defer close(pu.done)
		fds := []unix.PollFd{
			{Fd: int32(pu.out.fd), Events: unix.POLLIN},
			{Fd: int32(pu.err.fd), Events: unix.POLLIN},
			{Fd: int32(stopFd), Events: unix.POLLIN},
		}
		b := make([]byte, 64<<10)
		for fds[0].Fd >= 0 || fds[1].Fd >= 0 {
			if _, err := unix.Poll(fds, -1); err != nil {
				if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
					continue
				}
				break // cannot happen with valid descriptors; end as if closed
			}
			if fds[2].Revents != 0 {
				break // stop: the shell is being torn down
			}
			var urgent, marker bool
			for i := range 2 {
				if fds[i].Fd < 0 || fds[i].Revents == 0 {
					continue
				}
				_, end, u, m := pu.readOne(int(fds[i].Fd), b)
				if end {
					fds[i].Fd = -1 // poll skips it from now on
				}
				urgent, marker = urgent || u, marker || m
			}
			if marker && pu.drainErr(b) {
				fds[1].Fd = -1
			}
			pu.tell(urgent, marker)
		}
		pu.finish()
	}()
	return nil
}
