package tool

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
)

// Seed 001 "返回 promise 的 cancel 能力应向下透传", through Call (the path the
// agent loop uses): cancelling the restricted call's context reaches the
// delegate's running call, and the real tool's command is interrupted.
func TestSeedRestrictedCallCancelReachesDelegate(t *testing.T) {
	d := &countingTool{wait: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	raw, err := json.Marshal(Input{Command: "sleep 100"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- NewRestricted(d, []string{"rm"}).Call(ctx, raw) }()
	for d.calls.Load() == 0 {
		runtime.Gosched() // wait until the delegate is running
	}
	cancel()
	r := <-done
	if !d.sawAbort.Load() || r.Output != "aborted" || d.calls.Load() != 1 {
		t.Errorf("delegate did not see the cancellation through Call: %+v (calls %d)", r, d.calls.Load())
	}

	b, _ := newTool(t, nil)
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	raw, err = json.Marshal(Input{Command: "sleep 30"})
	if err != nil {
		t.Fatal(err)
	}
	if r := NewRestricted(b, []string{"rm"}).Call(ctx2, raw); !r.Facts.Interrupted {
		t.Errorf("real delegate through Call: %+v", r)
	}
}
