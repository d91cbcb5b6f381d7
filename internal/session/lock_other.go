//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package session

import "sync"

// Platforms without flock serialise index writes within the process only.
var fallbackLock sync.Mutex

func lockFile(string) (func(), error) {
	fallbackLock.Lock()
	return fallbackLock.Unlock, nil
}
