package tool

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
)

// countingTool counts calls and reports whether the context it got was
// cancelled while it waited (seed 001: "delegate.call 调用次数").
type countingTool struct {
	calls    atomic.Int32
	result   Result
	wait     bool // block until ctx is done
	sawAbort atomic.Bool
}

func (c *countingTool) Spec() llm.ToolSpec { return llm.ToolSpec{Name: "Bash", Description: "base"} }

func (c *countingTool) Call(ctx context.Context, raw json.RawMessage) Result {
	in, err := DecodeInput(raw)
	if err != nil {
		return inputError(err)
	}
	return c.Run(ctx, in)
}

func (c *countingTool) Run(ctx context.Context, in Input) Result {
	c.calls.Add(1)
	if c.wait {
		<-ctx.Done()
		c.sawAbort.Store(true)
		return Result{Output: "aborted", IsError: true}
	}
	return c.result
}

func restrictedCall(r *Restricted, cmd string) Result {
	raw, _ := json.Marshal(Input{Command: cmd})
	return r.Call(context.Background(), raw)
}

// Seed 001 "RestrictedBashTool 权限阻断".
func TestRestrictedBlocks(t *testing.T) {
	tests := []struct {
		exclude []string
		cmd     string
		blocked bool
	}{
		{[]string{"task:"}, "task:skill:search --prompt x", true},
		{[]string{"task:"}, "task:explore --prompt x --description y", true},
		{[]string{"task:"}, "echo task:explore", false},
		{[]string{"edit"}, "edit ./a.txt old new", true},
		{[]string{"edit"}, "editor ./a.txt", false},
		{[]string{"rm"}, "rm -rf /tmp/x", true},
		{[]string{"rm"}, "/bin/rm -rf /tmp/x", true},
		{[]string{"rm"}, "echo rm", false},
		{[]string{"rm"}, "rmdir x", false},
		// Every command of a compound line counts, not only the first word.
		{[]string{"task:"}, "echo x && task:general --prompt y", true},
		{[]string{"task:"}, "ls | task:explore", true},
		{[]string{"rm"}, "cd /tmp; rm x", true},
		{[]string{"rm"}, "echo $(rm x)", true},
		{[]string{"rm"}, "bash -c 'rm x'", true},
		{[]string{"rm"}, "bash rm x", true},
		{[]string{"rm"}, "find . -name y | xargs rm", true},
		{[]string{"task:"}, "bash task:explore --prompt x", true},
		{[]string{"write", "edit"}, "cat a.txt && write b.txt 'x'", true},
		{[]string{"task:"}, `task:explore --prompt "unclosed`, true}, // unparsable: first word still checked
		{nil, "rm -rf x", false},
	}
	for _, tt := range tests {
		d := &countingTool{result: Result{Output: "delegated"}}
		r := restrictedCall(NewRestricted(d, tt.exclude), tt.cmd)
		if tt.blocked {
			if !r.IsError || !strings.HasPrefix(r.Output, "Command blocked") || r.Message != "Command blocked" ||
				!strings.Contains(r.Output, "not allowed") || r.Facts.Type != ExtrasTypeCommandBlocked {
				t.Errorf("%v %q = %+v, want Command blocked", tt.exclude, tt.cmd, r)
			}
			if n := d.calls.Load(); n != 0 {
				t.Errorf("%v %q: delegate called %d times", tt.exclude, tt.cmd, n)
			}
			continue
		}
		if r.Output != "delegated" || d.calls.Load() != 1 {
			t.Errorf("%v %q = %+v (delegate calls %d), want passed through", tt.exclude, tt.cmd, r, d.calls.Load())
		}
	}
}

// Allowed commands keep the delegate's extras (a sandbox_blocked marker included).
func TestRestrictedPassesExtras(t *testing.T) {
	fx := &fakeExec{cwd: "/w", answer: func(string) command.Result {
		return command.Result{Blocked: true, BlockedReason: "blacklisted", BlockedResource: "/etc/passwd", ExitCode: 1}
	}}
	r := restrictedCall(NewRestricted(New(Options{Exec: fx}), []string{"rm"}), "cat /etc/passwd")
	if len(fx.Calls()) != 1 || r.Facts.Type != ExtrasTypeSandboxBlocked || r.Facts.Resource != "/etc/passwd" {
		t.Errorf("got %+v", r)
	}
	// Run passes through too.
	r = NewRestricted(New(Options{Exec: fx}), []string{"rm"}).Run(context.Background(), Input{Command: "cat /etc/passwd"})
	if r.Facts.Type != ExtrasTypeSandboxBlocked {
		t.Errorf("Run: %+v", r)
	}
}

// Cancelling the restricted call's context cancels the delegate's work.
func TestRestrictedCancelReachesDelegate(t *testing.T) {
	d := &countingTool{wait: true}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() { done <- NewRestricted(d, []string{"rm"}).Run(ctx, Input{Command: "sleep 100"}) }()
	for d.calls.Load() == 0 {
		runtime.Gosched() // wait until the delegate is running
	}
	cancel()
	r := <-done
	if !d.sawAbort.Load() || r.Output != "aborted" {
		t.Errorf("delegate did not see the cancellation: %+v", r)
	}

	// With the real tool and shell: the command is interrupted.
	b, _ := newTool(t, nil)
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	r = NewRestricted(b, []string{"rm"}).Run(ctx, Input{Command: "sleep 30"})
	if !r.Facts.Interrupted {
		t.Errorf("real delegate: %+v", r)
	}
}

func TestRestrictedSpecNamesExclusions(t *testing.T) {
	s := NewRestricted(New(Options{}), []string{"task:", "rm", " "}).Spec()
	if s.Name != "Bash" || !strings.Contains(s.Description, "refused in this context: task:, rm (") {
		t.Errorf("spec = %+v", s.Description[len(s.Description)-200:])
	}
	r := NewRestricted(New(Options{}), []string{"rm"}).Call(context.Background(), json.RawMessage(`{`))
	if !r.IsError || category(r) != FailureInvalidUsage {
		t.Errorf("malformed input: %+v", r)
	}
}

// preparingExec is a fakeExec that counts Prepare calls (the sandbox
// manager starts its shell there).
type preparingExec struct {
	fakeExec
	prepares int
}

func (p *preparingExec) Prepare() { p.prepares++ }

// Prepare reaches the executor through the Bash tool and its restricted
// variant (a sub-agent's), and is nothing for an executor without one.
func TestPrepareReachesTheExecutor(t *testing.T) {
	ex := &preparingExec{}
	b := New(Options{Exec: ex})
	b.Prepare()
	NewRestricted(b, []string{"task:"}).Prepare()
	if ex.prepares != 2 {
		t.Fatalf("prepares = %d, want 2", ex.prepares)
	}
	New(Options{Exec: &fakeExec{}}).Prepare() // no Prepare: nothing happens
}
