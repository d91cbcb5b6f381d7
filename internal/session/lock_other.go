//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package session

import (
	"os"
	"sync"
)

// Platforms without flock serialise index writes within the process only.
var fallbackLock sync.Mutex

func lockFile(string) (func(), error) {
	fallbackLock.Lock()
	return fallbackLock.Unlock, nil
}

func openLockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// tryLock cannot tell another process's hold here: one writer per session
// is not enforced on these platforms.
func tryLock(*os.File) (bool, error) { return false, nil }
