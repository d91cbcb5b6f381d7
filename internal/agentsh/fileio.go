package agentsh

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// errIsDir is returned by openRegular for a directory.
var errIsDir = errors.New("is a directory")

// notRegularError names the kind of a file that is not a regular file.
type notRegularError struct {
	path string
	mode fs.FileMode
}

func (e *notRegularError) Error() string {
	kind := "a special file"
	switch {
	case e.mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case e.mode&fs.ModeSocket != 0:
		kind = "a socket"
	case e.mode&fs.ModeCharDevice != 0:
		kind = "a character device"
	case e.mode&fs.ModeDevice != 0:
		kind = "a block device"
	}
	return fmt.Sprintf("%s is not a regular file (it is %s): read and edit handle regular files only; use a native command such as `head -c 1000` for it", e.path, kind)
}

// openRegular opens path for reading only when it is a regular file. The
// open never blocks (O_NONBLOCK: a FIFO without a writer would block it
// forever, beyond any cancellation), and devices, pipes and sockets are
// refused: /dev/stdin is the agent's own input, /dev/zero never ends.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case info.IsDir():
		f.Close()
		return nil, errIsDir
	case !info.Mode().IsRegular():
		f.Close()
		return nil, &notRegularError{path: path, mode: info.Mode()}
	}
	return f, nil
}

// readAllLimited reads f whole, or returns nil data when it holds more than
// limit bytes (the size is taken from what is read, not from a stat that a
// growing file would outrun).
func readAllLimited(f *os.File, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
