//go:build !linux

package sandbox

import "errors"

// Landlock is Linux's: elsewhere the launcher (`synapse __landlock-exec`)
// refuses to run anything, and the Landlock backend is never chosen (macOS
// sandboxes commands with sandbox-exec, see seatbelt.go).

var errLandlockLinuxOnly = errors.New("the Landlock launcher runs on Linux only")

// launch refuses: there is no Landlock to restrict the command with.
func launch([]string) error { return errLandlockLinuxOnly }

// landlockABI reports that this system has no Landlock.
func landlockABI() (int, error) { return 0, errLandlockLinuxOnly }

// idlePriority does nothing: the background sweep runs on Linux only.
func idlePriority(int) {}
