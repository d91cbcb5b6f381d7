//go:build !linux

package cli

import "syscall"

// sealInheritedFDs marks descriptors above 2 close-on-exec (see the Linux
// version); without close_range it walks a fixed range.
func sealInheritedFDs() error {
	for fd := 3; fd < 1024; fd++ {
		syscall.CloseOnExec(fd)
	}
	return nil
}
