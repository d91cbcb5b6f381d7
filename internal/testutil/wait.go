package testutil

import (
	"testing"
	"time"
)

// waitLimit bounds WaitFor: far beyond any condition's time on a loaded
// machine, well within the test binary's timeout.
const waitLimit = 30 * time.Second

// WaitFor checks cond every few milliseconds until it holds, and fails t
// when it still does not after waitLimit. It waits on a state (a file
// written, a process gone), never for a time: how soon cond holds is not
// asserted.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(waitLimit)
	for !cond() {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatalf("timed out after %s waiting for %s", waitLimit, what)
		}
	}
}
