//go:build !linux

package cli

// keepEnterKey does nothing here; see the Linux version.
func keepEnterKey(int) {}
