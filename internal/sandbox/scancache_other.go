//go:build !linux

package sandbox

import "errors"

// dirStamp: the scan cache is used on Linux only (the mount plan's).
func dirStamp(string) (uint64, int64, error) {
	return 0, 0, errors.New("the scan cache runs on Linux only")
}
