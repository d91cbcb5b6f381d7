//go:build unix && !linux

package agentsh

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory to walk through it.
const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
