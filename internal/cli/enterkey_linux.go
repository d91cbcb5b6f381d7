package cli

import "golang.org/x/sys/unix"

// keepEnterKey stops the terminal turning a typed Enter (CR) into a line
// feed while Synapse is still starting (MCP servers, the session), so a
// prompt typed then arrives in raw mode as CR and is sent; as a line feed
// it would be Ctrl+J, a new line in the editor. The raw mode set later and
// restored at exit covers this change too.
func keepEnterKey(fd int) {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return // not a terminal we can adjust: the prompt stays as it was
	}
	t.Iflag &^= unix.ICRNL
	_ = unix.IoctlSetTermios(fd, unix.TCSETS, t)
}
