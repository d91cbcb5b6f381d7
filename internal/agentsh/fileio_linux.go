package agentsh

import "golang.org/x/sys/unix"

// dirOpenFlags open a directory only to walk through it: O_PATH needs no
// read permission (a 0711 home directory can still be crossed).
const dirOpenFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
