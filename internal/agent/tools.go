package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// cancelGrace is how long a cancelled run waits for running tools to notice
// the cancel before it returns anyway; a tool that ignores its context must
// not hold Ctrl+C hostage.
const cancelGrace = 3 * time.Second

// group is a run of calls that execute together: one call alone, or a maximal
// run of consecutive task:* calls as one parallel batch.
type group struct {
	start, end int // calls[start:end]
	parallel   bool
}

// groupCalls splits calls, in order, into groups.
func groupCalls(commands []string) []group {
	var out []group
	for i := 0; i < len(commands); {
		if !isTask(commands[i]) {
			out = append(out, group{start: i, end: i + 1})
			i++
			continue
		}
		j := i
		for j < len(commands) && isTask(commands[j]) {
			j++
		}
		out = append(out, group{start: i, end: j, parallel: true})
		i = j
	}
	return out
}

// isTask reports whether a command line starts a sub-agent (task:<type> …).
func isTask(command string) bool {
	return router.Classify(command).Family == router.FamilyTask
}

// commandOf extracts the command line from a Bash call's input ("" when
// the input is not the expected object; the tool reports that itself).
func commandOf(input json.RawMessage) string {
	var in tool.Input
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	return in.Command
}

// shownCommand is what a call's row shows: its command line, or, for a call
// with no command (another tool's name, other arguments, invalid JSON), the
// call as the model made it, so the row is not blank.
func shownCommand(c llm.ToolCall, command string) string {
	if command != "" {
		return command
	}
	if c.InvalidInput != "" {
		return c.Name + " (arguments are not valid JSON)"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, c.Input) != nil || buf.String() == "{}" || buf.Len() == 0 {
		return c.Name
	}
	return c.Name + " " + buf.String()
}

type callOutcome struct {
	index int
	res   tool.Result
	took  time.Duration
	// skipped: the call never started because the run was cancelled first.
	skipped bool
}

// callState is what became of one call of a step.
type callState int

const (
	callNotStarted callState = iota
	callFinished             // it returned before any cancel: its result is in results
	callCancelled            // it started and the cancel stopped it (or it returned after)
)

// runTools runs one turn's calls group by group and returns one result per
// call, in call order, and each call's state. complete is false when ctx
// was cancelled before every call returned; the results of the calls that
// finished are there all the same.
func (r *Runner) runTools(ctx context.Context, calls []llm.ToolCall) ([]tool.Result, []callState, []*streamTail, bool) {
	commands := make([]string, len(calls))
	shown := make([]string, len(calls))
	tails := make([]*streamTail, len(calls))
	for i, c := range calls {
		commands[i] = commandOf(c.Input)
		shown[i] = shownCommand(c, commands[i])
		tails[i] = &streamTail{}
	}
	results := make([]tool.Result, len(calls))
	states := make([]callState, len(calls))
	for _, g := range groupCalls(commands) {
		if ctx.Err() != nil {
			return results, states, tails, false
		}
		width := 1
		if g.parallel {
			width = r.limits.maxParallel
		}
		if !r.runGroup(ctx, calls, shown, results, states, tails, g, width) {
			return results, states, tails, false
		}
	}
	return results, states, tails, true
}

// runGroup runs calls[g.start:g.end] with at most width running at once; the
// rest queue and start as running ones finish. ToolEnd events are emitted in
// completion order, so fast calls report first.
func (r *Runner) runGroup(ctx context.Context, calls []llm.ToolCall, commands []string, results []tool.Result, states []callState, tails []*streamTail, g group, width int) bool {
	n := g.end - g.start
	done := make(chan callOutcome, n) // buffered: an abandoned call never blocks
	sem := make(chan struct{}, width)
	st := &groupStarts{started: map[int]bool{}}
	go func() {
		for i := g.start; i < g.end; i++ {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
			}
			// A slot may free up at the moment of the cancel, and select
			// picks either ready case: check again, so no call starts after it.
			if ctx.Err() != nil {
				// Calls that never started still report, so drain need not wait for them.
				for j := i; j < g.end; j++ {
					done <- callOutcome{index: j, skipped: true}
				}
				return
			}
			// Announced here, not in the call's goroutine: starts are shown
			// (and streamed as tool_use blocks) in the model's order.
			if !st.start(i, func() {
				r.Emit(Event{Kind: ToolStart, CallID: calls[i].ID, Command: commands[i], Route: router.Classify(commands[i])})
			}) {
				<-sem
				for j := i; j < g.end; j++ {
					done <- callOutcome{index: j, skipped: true}
				}
				return
			}
			go func(i int) {
				defer func() { <-sem }()
				start := time.Now()
				id := calls[i].ID
				// The person sees a running command's output as it comes.
				tail := tails[i]
				octx := command.WithOutput(ctx, func(chunk string) {
					tail.add(chunk)
					r.Emit(Event{Kind: ToolOutput, CallID: id, Text: chunk})
				})
				res := r.hookedCall(octx, calls[i])
				done <- callOutcome{index: i, res: res, took: time.Since(start)}
			}(i)
		}
	}()
	ended := make(map[int]bool, n)
	cancelled := func(pending int) bool {
		r.drain(done, pending)
		// Every call that was shown starting is shown ending, as cancelled.
		for _, i := range st.close() {
			if !ended[i] {
				states[i] = callCancelled
				res := cancelledResult()
				r.Emit(Event{Kind: ToolEnd, CallID: calls[i].ID, Command: commands[i], Route: router.Classify(commands[i]), Result: &res})
			}
		}
		return false
	}
	for got := 0; got < n; got++ {
		var o callOutcome
		select {
		case o = <-done:
		case <-ctx.Done():
			return cancelled(n - got)
		}
		if o.skipped || ctx.Err() != nil {
			// A call that returned after the cancel is ended as cancelled too:
			// its step is dropped whatever it says.
			return cancelled(n - got - 1)
		}
		results[o.index] = o.res
		states[o.index] = callFinished
		res := o.res
		ended[o.index] = true
		r.Emit(Event{Kind: ToolEnd, CallID: calls[o.index].ID, Command: commands[o.index], Route: router.Classify(commands[o.index]),
			Result: &res, Duration: o.took})
	}
	return true
}

// groupStarts records which calls of a group started, so that a cancel can
// end each of them; once closed, no further call starts.
type groupStarts struct {
	mu      sync.Mutex
	started map[int]bool
	closed  bool
}

// start marks call i started and announces it (under the lock, so that a
// cancel never ends a call before its start was shown); false once closed.
func (s *groupStarts) start(i int, announce func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.started[i] = true
	announce()
	return true
}

// close stops further starts and returns the calls that started, in order.
func (s *groupStarts) close() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	out := make([]int, 0, len(s.started))
	for i := range s.started {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// CancelledStatus is Result.Facts.Status of the end event of a call the
// run's cancel stopped; the call's step is dropped from the history.
const CancelledStatus = "cancelled"

// CancelledMessage is Result.Message of the end event of a call the run's
// cancel stopped.
const CancelledMessage = "cancelled: the run was interrupted"

func cancelledResult() tool.Result {
	return tool.Result{IsError: true, Message: CancelledMessage,
		Facts: tool.Facts{Status: CancelledStatus}}
}

// drain waits (bounded) for calls still running after a cancel, so that a
// well-behaved tool has stopped before Run returns.
func (r *Runner) drain(done <-chan callOutcome, pending int) {
	timer := time.NewTimer(cancelGrace)
	defer timer.Stop()
	for ; pending > 0; pending-- {
		select {
		case <-done:
		case <-timer.C:
			return
		}
	}
}

// streamTailMax bounds what a call's streamed output keeps for the record
// of a dropped step: its end, as front ends show a running command's tail.
const streamTailMax = 8 << 10

// streamTail keeps the end of a call's output as it streams (ToolOutput):
// for a call the cancel stopped, what the person saw of it.
type streamTail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *streamTail) add(chunk string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, chunk...)
	if len(t.buf) > 2*streamTailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-streamTailMax:]...)
	}
}

// String is the kept output: at most streamTailMax bytes, whole runes.
func (t *streamTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return textutil.TailBytes(string(t.buf), streamTailMax)
}

// callTool runs one call, turning a wrong tool name or a panic into an error result.
// The call's work reports to this runner through the context's CallTrace.
func (r *Runner) callTool(ctx context.Context, c llm.ToolCall) (res tool.Result) {
	trace := r.callTrace()
	trace.CallID = c.ID
	ctx = WithCallTrace(ctx, trace)
	if c.Name != r.tools[0].Name {
		name := r.tools[0].Name
		msg := fmt.Sprintf("Unknown tool %q: the only tool is %s, and every capability is a command line for it. Call it as %s(command=%q).",
			c.Name, name, name, attempted(c))
		return tool.Result{Output: msg, IsError: true, Message: fmt.Sprintf("unknown tool %q: the only tool is %s", c.Name, name),
			Facts: tool.Facts{FailureCategory: tool.FailureCommandNotFound}}
	}
	if c.InvalidInput != "" {
		perr := jsonError(c.InvalidInput)
		msg := fmt.Sprintf("The arguments of your %s call are not valid JSON, so nothing was run. The JSON parser says: %s.\nYou sent: %s\n"+
			"Send {\"command\": \"<command line>\"} (optionally with \"restart\": true), with quotes and backslashes inside the command escaped for JSON.",
			c.Name, perr, excerpt(c.InvalidInput))
		return tool.Result{Output: msg, IsError: true, Message: c.Name + " arguments are not valid JSON: " + perr,
			Facts: tool.Facts{FailureCategory: tool.FailureInvalidUsage}}
	}
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("internal error while running the command: %v", p)
			res = tool.Result{Output: msg, IsError: true, Message: msg,
				Facts: tool.Facts{FailureCategory: tool.FailureExecution}}
		}
	}()
	return r.tool.Call(ctx, c.Input)
}

// attempted is the command line a call of an unknown tool seems to have
// meant: the Synapse command for another agent's file tool (Read → read,
// Glob → find, …), its "command" argument when the others only qualify it (a shell
// tool of another agent), else the tool name followed by the values of its
// arguments in the order sent (read {"path":"a.txt"} → read a.txt).
func attempted(c llm.ToolCall) string {
	if line, ok := tool.ForeignCommand(c.Name, c.Input); ok {
		return line // Claude Code's Read, Grep, …: the Synapse command doing the same
	}
	var in map[string]any
	if json.Unmarshal(c.Input, &in) == nil {
		if cmd, ok := in["command"].(string); ok && strings.TrimSpace(cmd) != "" {
			shellOnly := true
			for k := range in {
				switch k {
				case "command", "restart", "description", "timeout", "cwd", "workdir":
				default:
					shellOnly = false
				}
			}
			if shellOnly {
				return cmd
			}
		}
	}
	parts := []string{c.Name}
	dec := json.NewDecoder(bytes.NewReader(c.Input))
	if t, err := dec.Token(); err == nil && t == json.Delim('{') {
		for dec.More() {
			if _, err := dec.Token(); err != nil { // the key
				break
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			switch x := v.(type) {
			case string:
				if strings.ContainsAny(x, " \t\n'\"$`\\;&|<>()*?") {
					x = "'" + strings.ReplaceAll(x, "'", `'\''`) + "'"
				}
				parts = append(parts, x)
			case float64, bool:
				parts = append(parts, fmt.Sprint(x))
			}
		}
	}
	return strings.Join(parts, " ")
}

// jsonError is the JSON parser's complaint about s, with where it is.
func jsonError(s string) string {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return "the value is not a JSON object"
	case errors.As(err, &se):
		return fmt.Sprintf("%q at byte %d", se.Error(), se.Offset)
	}
	return strconv.Quote(err.Error())
}

// excerpt is the start of a model's malformed arguments, enough for it to
// see its mistake.
func excerpt(s string) string { return textutil.Clip(s, 300) }
