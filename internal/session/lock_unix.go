//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package session

import (
	"os"
	"syscall"
)

// openLockFile opens (creating, 0600) a lock file without following a
// symlink: one planted at the lock's path must not make us create or
// truncate its target.
func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}

// lockFile takes an exclusive flock on path (created if needed); the returned
// func releases it. The kernel drops the lock if the process dies.
func lockFile(path string) (func(), error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// tryLock takes an exclusive flock on f without waiting; held reports that
// another open file (another process) has it. Closing f releases it.
func tryLock(f *os.File) (held bool, err error) {
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if err == syscall.EWOULDBLOCK {
		return true, nil
	}
	return false, err
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
