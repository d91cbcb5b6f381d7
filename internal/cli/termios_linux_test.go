package cli

import "golang.org/x/sys/unix"

// reqGetTermios is the ioctl that reads a terminal's settings (TCGETS on
// Linux, TIOCGETA on macOS and the BSDs).
const reqGetTermios = unix.TCGETS
