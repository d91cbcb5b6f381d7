package shell

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readNB, writeNB and epollWaitNB make calls that never block (the
// descriptors are non-blocking, the wait has no timeout) without the
// runtime's bookkeeping for a call that might: entering one wakes the
// runtime's monitor thread whenever it sleeps, which an idle shell session
// lets it do, so each read or write cost a futex wake and the monitor's
// own calls besides (issue 30).
func readNB(fd int, b []byte) (int, error)  { return rawIO(unix.SYS_READ, fd, b) }
func writeNB(fd int, b []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, b) }

// rawIO is read or write (nr) of b on fd as a raw call.
func rawIO(nr uintptr, fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(nr, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

func epollWaitNB(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// start runs the pump on an epoll descriptor over both pipes and the stop
// pipe, itself watched by the runtime's poller: the goroutine parks like
// any network read. (A goroutine blocked in poll(2) would hold a thread and
// its P in a system call, and the runtime's monitor would wake every 20µs
// to take the P back.)
func (pu *pump) start(stopFd int) error {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("reading the shell's pipes: %w", err)
	}
	for _, fd := range []int{pu.out.fd, pu.err.fd, stopFd} {
		if err == nil {
			err = unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
		}
	}
	if err == nil {
		err = unix.SetNonblock(ep, true) // so os.NewFile hands it to the runtime's poller
	}
	if err != nil {
		_ = unix.Close(ep)
		return fmt.Errorf("reading the shell's pipes: %w", err)
	}
	f := os.NewFile(uintptr(ep), "shell pipes")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("reading the shell's pipes: %w", err)
	}
	go func() {
		defer close(pu.done)
		defer f.Close()
		events := make([]unix.EpollEvent, 3)
		b := make([]byte, 64<<10)
		open := 2
		// The callback returns false to wait for the epoll descriptor to be
		// readable again, true to end. The runtime's poller reports only new
		// readiness (data that arrives later is new), so the callback looks
		// again before waiting when something may be left: a read that
		// filled the buffer (a pipe read returns all it holds up to the
		// buffer's size), or a hang-up not yet read.
		_ = rc.Read(func(uintptr) bool {
			for {
				n, err := epollWaitNB(ep, events)
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if err != nil {
					return true
				}
				if n == 0 {
					return false
				}
				var urgent, marker, more bool
				for _, ev := range events[:n] {
					fd := int(ev.Fd)
					if fd == stopFd {
						return true
					}
					got, end, u, m := pu.readOne(fd, b)
					if end {
						_ = unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, fd, nil)
						open--
					}
					// A full buffer may have left data behind; a hang-up
					// read past with data will not be reported anew.
					left := got == len(b) || !end && ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0
					urgent, marker, more = urgent || u, marker || m, more || left
				}
				if marker && pu.drainErr(b) {
					_ = unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, pu.err.fd, nil)
					open--
				}
				pu.tell(urgent, marker)
				if open == 0 {
					return true
				}
				if !more {
					return false
				}
			}
		})
		pu.finish()
	}()
	return nil
}
