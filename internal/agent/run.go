package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Run sends input as a user message and loops until the model is done, a
// limit is hit, the provider fails or ctx is cancelled (ErrInterrupted).
// The history only ever gains whole steps: an assistant message is kept (and
// persisted) together with one result per tool call, or not at all.
// Result.Usage counts the run's own requests and the usage its sub-agents
// reported through RecordUsage while it ran.
func (r *Runner) Run(ctx context.Context, input string) (Result, error) {
	return r.RunImages(ctx, input, nil)
}

// RunImages is Run with pictures attached to the prompt (an editor's pasted
// screenshot): they go with the user message, as image blocks where the
// provider takes images; input should name them for those that do not.
func (r *Runner) RunImages(ctx context.Context, input string, images []llm.Image) (Result, error) {
	r.mu.Lock()
	r.runSub = llm.Usage{}
	r.saveWarned = false
	r.cw.offloadTold = false
	r.running = true
	r.hookHalt = ""
	r.mu.Unlock()
	res, err := r.run(ctx, input, images)
	r.mu.Lock()
	res.Usage = res.Usage.Add(r.runSub)
	r.running = false
	r.cw.prompt = -1
	if err != nil && historyUnfinished(r.history) {
		// Only when the run left its prompt unanswered: one refused before
		// it was added (a hook, a cancel before the start) left nothing.
		r.unfinished = unfinishedNote(err)
	}
	r.mu.Unlock()
	return res, err
}

func (r *Runner) run(ctx context.Context, input string, images []llm.Image) (Result, error) {
	var res Result
	if ctx.Err() != nil {
		res.StopReason = StopInterrupted
		return res, fmt.Errorf("run cancelled before the first request: %w", ErrInterrupted)
	}
	sess := r.ensureSession()
	if sess != nil {
		sess.SetTitle(input)
		// Appends write history lines at once; usage and the index are
		// rewritten at most once a second during the run, and here at its end.
		defer func() { r.saveFailed(sess, sess.Flush()) }()
	}
	hookContext := ""
	if r.hooks != nil {
		v := r.hooks.UserPromptSubmit(ctx, r.SessionID(), r.cwd, input)
		r.reportProblems(v)
		if v.Halt && v.Block == "" {
			v.Block = v.HaltReason
		}
		if v.Block != "" {
			res.StopReason = StopBlocked
			err := fmt.Errorf("the UserPromptSubmit hook refused the prompt: %s", v.Block)
			r.Emit(Event{Kind: Error, Err: err})
			return res, err
		}
		hookContext = v.Context
	}
	text := input
	if r.skill {
		text = WrapSkillSearch(input)
	}
	text = AddHookContext(text, hookContext)
	r.mu.Lock()
	note := r.unfinished
	r.unfinished = ""
	notes := r.notes
	r.notes = nil
	r.mu.Unlock()
	if note != "" {
		// The model reads why the previous request has no answer, so it does
		// not take the new prompt as a reason to redo the dropped work.
		r.commit(sess, llm.Message{Role: llm.RoleUser, Text: note})
	}
	for _, n := range notes { // what the user did meanwhile (a `!` command)
		r.commit(sess, llm.Message{Role: llm.RoleUser, Text: n})
	}
	r.commit(sess, llm.Message{Role: llm.RoleUser, Text: text, Images: images})
	r.mu.Lock()
	r.cw.prompt = len(r.history) - 1 // compaction keeps it verbatim
	r.mu.Unlock()

	failures, reminders := 0, 0
	tooLong := false // a "prompt too long" was answered with a compaction
	// deniedPerm: the user refused a permission during this run; the turn
	// did not go as the model planned, so stop hooks do not learn from it.
	deniedPerm := false
	stopContinued := 0 // how often the user's Stop hooks made this turn go on
	for res.Turns < r.limits.maxTurns {
		res.Turns++
		if err := r.manageContext(ctx, sess); err != nil {
			res.StopReason = StopContextFull
			r.Emit(Event{Kind: Error, Err: err})
			return res, err
		}
		t0 := time.Now()
		resp, err := r.stream(ctx)
		if err != nil && ctx.Err() == nil && llm.IsPromptTooLong(err) && !tooLong {
			// The estimate missed: one compaction, then one retry.
			tooLong = true
			r.mu.Lock()
			st, _ := r.settingsLocked()
			r.mu.Unlock()
			if cres, cerr := r.compact(ctx, sess, "", st); cerr == nil {
				r.compactedNotice(cres)
				resp, err = r.stream(ctx)
			} else if ctx.Err() == nil {
				err = fmt.Errorf("%w (compacting the history to fit failed too: %v)", err, cerr)
			}
		}
		res.APIDuration += time.Since(t0)
		if err != nil {
			if ctx.Err() != nil {
				res.StopReason = StopInterrupted
				return res, fmt.Errorf("model request: %w", ErrInterrupted)
			}
			res.StopReason = StopError
			r.Emit(Event{Kind: Error, Err: err})
			return res, err
		}
		model := resp.Model
		if model == "" {
			model = r.Model()
		}
		res.Usage = res.Usage.Add(resp.Usage)
		r.mu.Lock()
		r.total = r.total.Add(resp.Usage)
		r.mu.Unlock()
		msg := resp.Message
		msg.Role = llm.RoleAssistant
		uniqueCallIDs(msg.ToolCalls)
		u := resp.Usage
		r.Emit(Event{Kind: Usage, Usage: &u, StopReason: resp.StopReason, Calls: slices.Clone(msg.ToolCalls)})
		if sess != nil {
			sess.AddUsage(resp.Usage, model)
		}
		res.StopReason = resp.StopReason

		if len(msg.ToolCalls) == 0 {
			r.commit(sess, msg)
			res.Text = msg.Text
			if w := r.answerWarning(resp.StopReason, msg.Text); w != nil {
				r.Emit(Event{Kind: Warning, Err: w})
			}
			unfinished := r.todos.Unfinished()
			if len(unfinished) == 0 || reminders >= r.limits.maxReminders || ctx.Err() != nil {
				r.Emit(Event{Kind: TurnEnd})
				if !deniedPerm {
					if reason := r.runStopHooks(ctx, &res, stopContinued); reason != "" {
						stopContinued++
						r.commit(sess, llm.Message{Role: llm.RoleUser, Text: stopHookNote(reason)})
						continue
					}
				}
				return res, nil
			}
			reminders++
			note := reminderText(unfinished)
			r.commit(sess, llm.Message{Role: llm.RoleUser, Text: note})
			r.Emit(Event{Kind: Reminder, Text: note})
			r.Emit(Event{Kind: TurnEnd})
			continue
		}

		results, states, streamed, complete := r.runTools(ctx, msg.ToolCalls)
		if !complete || ctx.Err() != nil {
			// The step is dropped whole: no dangling tool calls, in memory or
			// on disk. The note before the next prompt says what of it happened.
			res.StopReason = StopInterrupted
			if sess != nil {
				r.saveFailed(sess, sess.AppendShown(session.Shown{Dropped: droppedStep(msg, results, states, streamed)}))
			}
			return res, &droppedStepError{note: droppedStepNote(msg.ToolCalls, results, states)}
		}
		deniedPerm = deniedPerm || denied(results)
		step := make([]llm.Message, 0, 1+len(results))
		step = append(step, msg)
		allUsageFailures := true
		for i, c := range msg.ToolCalls {
			step = append(step, toolMessage(c.ID, results[i]))
			if !usageFailure(results[i]) {
				allUsageFailures = false
			}
		}
		r.commit(sess, step...)
		if sess != nil {
			r.saveFailed(sess, sess.AppendShown(session.Shown{Changes: shownChanges(msg.ToolCalls, results)}))
		}
		r.Emit(Event{Kind: TurnEnd})

		r.mu.Lock()
		halt := r.hookHalt
		r.mu.Unlock()
		if halt != "" {
			res.StopReason = StopBlocked
			res.Text = "Stopped: " + halt
			err := errors.New(halt)
			r.Emit(Event{Kind: Error, Err: err})
			return res, err
		}

		if allUsageFailures {
			failures++
		} else {
			failures = 0
		}
		if failures >= r.limits.maxFailures {
			res.StopReason = StopConsecutiveFailures
			res.Text = fmt.Sprintf("Stopped: the last %d turns' tool calls all failed (invalid usage or command not found). "+
				"Check the commands the model is trying, or raise SYNAPSE_MAX_CONSECUTIVE_TOOL_FAILURES.", failures)
			err := &LimitError{Reason: StopConsecutiveFailures, Message: res.Text}
			r.Emit(Event{Kind: Error, Err: err})
			return res, err
		}
	}
	res.StopReason = StopMaxTurns
	res.Text = fmt.Sprintf("Stopped: reached the limit of %d model turns for one run before the task finished. "+
		"Continue with a new prompt, or raise SYNAPSE_MAX_TOOL_ITERATIONS.", r.limits.maxTurns)
	err := &LimitError{Reason: StopMaxTurns, Message: res.Text}
	r.Emit(Event{Kind: Error, Err: err})
	return res, err
}

// ensureSession creates the session on the first run when persistence is
// on, then applies retention (SYNAPSE_MAX_SESSIONS) to the sessions directory.
func (r *Runner) ensureSession() *session.Session {
	r.mu.Lock()
	created := false
	if r.sess == nil && r.store != nil {
		r.sess, created = r.store.Create(r.cwd), true
	}
	sess := r.sess
	r.mu.Unlock()
	if created && r.cw.maxSessions > 0 {
		// The new session counts, and is never the one removed.
		if _, err := r.store.Prune(r.cw.maxSessions-1, sess.ID()); err != nil {
			r.Emit(Event{Kind: Warning, Err: fmt.Errorf("removing old sessions (SYNAPSE_MAX_SESSIONS): %w", err)})
		}
	}
	return sess
}

// commit appends msgs to the history and, with a session, to its file. A
// failed write (a full disk) costs the persistence, not the conversation:
// the history in memory is whole and the run goes on, with a warning.
func (r *Runner) commit(sess *session.Session, msgs ...llm.Message) {
	r.mu.Lock()
	r.history = append(r.history, msgs...)
	r.cw.tracker.Add(msgs...)
	r.mu.Unlock()
	if sess != nil {
		r.saveFailed(sess, sess.Append(msgs...))
	}
}

// saveFailed reports a failed session write as a warning, once per run: a
// disk that is full stays full for every later step.
func (r *Runner) saveFailed(sess *session.Session, err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	shown := r.saveWarned
	r.saveWarned = true
	r.mu.Unlock()
	if shown {
		return
	}
	r.Emit(Event{Kind: Warning, Err: fmt.Errorf("save session %s: %w; the conversation goes on in memory, "+
		"but a resume may miss what follows: free disk space or fix the sessions directory", sess.ID(), err)})
}

// stream makes one model request, forwarding deltas as events.
func (r *Runner) stream(ctx context.Context) (llm.Response, error) {
	r.mu.Lock()
	// The request shares the history's backing array: the loop only appends,
	// and nothing mutates earlier entries, so no copy is needed per step.
	req := llm.Request{
		Model:     r.model,
		System:    r.system,
		Messages:  r.history[:len(r.history):len(r.history)],
		Tools:     r.tools,
		MaxTokens: r.limits.maxTokens,
		// Thinking budget as configured; 0 leaves thinking off.
		ThinkingBudget: r.limits.thinking,
	}
	provider := r.provider
	r.mu.Unlock()
	return provider.Stream(ctx, req, func(ev llm.Event) {
		switch ev.Type {
		case llm.EventTextDelta:
			r.Emit(Event{Kind: TextDelta, Text: ev.Text})
		case llm.EventThinkingDelta:
			r.Emit(Event{Kind: ThinkingDelta, Text: ev.Text})
		case llm.EventRetry:
			n := *ev.Retry
			r.Emit(Event{Kind: Retry, Text: RetryText(n), RetryNotice: &n})
		case llm.EventToolCallStart:
			if p, ok := r.tool.(preparer); ok {
				p.Prepare()
			}
		}
	})
}

// preparer is a tool that gets ready for a call while the model is still
// writing it: the Bash tool starts the sandbox's shell, so the first
// command does not wait for it. Prepare must not block.
type preparer interface{ Prepare() }

// RetryText is how a retry is told to the user: attempt, wait and reason.
func RetryText(n llm.RetryNotice) string {
	return fmt.Sprintf("model request failed, retry %d of %d in %s: %s", n.Attempt, n.Max, n.Wait.Round(100*time.Millisecond), n.Reason)
}

// answerWarning says what is wrong with a final answer that was cut at the
// output limit or has no text at all, and what to do; nil when it is whole.
func (r *Runner) answerWarning(stop, text string) error {
	switch {
	case stop == llm.StopMaxTokens:
		limit := "the model's output limit"
		if r.limits.maxTokens > 0 {
			limit = fmt.Sprintf("the output limit (maxTokens %d)", r.limits.maxTokens)
		}
		return fmt.Errorf(`the answer was cut off at %s: ask the model to continue, or raise "maxTokens" in settings.json`, limit)
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("the model ended its turn without an answer (stop reason %q): ask again or rephrase the request", stop)
	}
	return nil
}

// uniqueCallIDs gives every call a non-empty id unique within its message,
// in place. Some servers repeat an id or send none; providers refuse such a
// history, and results are paired with calls (and shown) by id. A repeated
// id gets a suffix; the first call keeps it.
func uniqueCallIDs(calls []llm.ToolCall) {
	if len(calls) < 2 && (len(calls) == 0 || calls[0].ID != "") {
		return
	}
	seen := make(map[string]bool, len(calls))
	for _, c := range calls {
		seen[c.ID] = true
	}
	used := make(map[string]bool, len(calls))
	for i := range calls {
		id := calls[i].ID
		if id != "" && !used[id] {
			used[id] = true
			continue
		}
		base := id
		if base == "" {
			base = "call"
		}
		for n := i + 1; ; n++ {
			cand := base + "_" + strconv.Itoa(n)
			if !used[cand] && !seen[cand] {
				id = cand
				break
			}
		}
		calls[i].ID = id
		used[id] = true
	}
}

// toolMessage turns a tool result into the history's tool message.
func toolMessage(callID string, res tool.Result) llm.Message {
	text := res.Output
	if text == "" {
		text = res.Message
	}
	if text == "" {
		text = "(no output)"
	}
	m := llm.Message{Role: llm.RoleTool, ToolCallID: callID, Text: text, IsError: res.IsError}
	for _, img := range res.Images {
		m.Images = append(m.Images, llm.Image{MediaType: img.MediaType, Data: img.Data})
	}
	return m
}

// usageFailure is a failure the model caused by calling wrongly.
func usageFailure(res tool.Result) bool {
	if !res.IsError {
		return false
	}
	cat := res.Facts.FailureCategory
	return cat == tool.FailureInvalidUsage || cat == tool.FailureCommandNotFound
}

func reminderText(items []todo.Item) string {
	var b strings.Builder
	b.WriteString(todoReminderLead + " Your todo list still has unfinished items. Continue working on them now; ")
	b.WriteString("if an item is done or no longer needed, update the list with TodoWrite before you finish.\n")
	for _, it := range items {
		fmt.Fprintf(&b, "- [%s] %s\n", it.Status, it.Content)
	}
	return strings.TrimRight(b.String(), "\n")
}

// InterruptedNote is the user-side note put before the next prompt after a
// run the user interrupted: its unfinished step was dropped (never kept
// half-done in the history), and the model should know that rather than
// see an unanswered request.
const InterruptedNote = interruptedLead + " Its unfinished step was dropped: " +
	"tool calls that were running did not complete. Do not resume that work unless the next message asks for it.]"

// stoppedLead starts the note about a request a limit or a failure stopped.
const stoppedLead = "[The previous request stopped before it finished: "

// todoReminderLead starts the todo reminder.
const todoReminderLead = "[System Reminder]"

// interruptedLead starts every note about an interrupted request.
const interruptedLead = "[The user interrupted the previous request before it finished."

// resumedUnfinishedNote is the note after a resumed history that ends
// without an answer: whether it was interrupted or failed is not recorded.
const resumedUnfinishedNote = "[The previous request ended before it finished (it was interrupted or failed). Its unfinished step was dropped. " +
	"Do not resume that work unless the next message asks for it.]"

// droppedStepError is the interrupt of a run whose step was dropped while
// its tool calls ran; note tells the model what of the step happened.
type droppedStepError struct{ note string }

func (e *droppedStepError) Error() string { return "tool execution: " + ErrInterrupted.Error() }
func (e *droppedStepError) Unwrap() error { return ErrInterrupted }

// droppedStepNote is the interruption note for a step dropped while its
// calls ran: calls that finished did what they did (a file written stays
// written) though their results are gone, so the model is told each one,
// with its exit status and the files it changed, and which were cancelled
// or never started, rather than left to redo or to assume.
func droppedStepNote(calls []llm.ToolCall, results []tool.Result, states []callState) string {
	var done, cancelled, skipped []string
	for i, c := range calls {
		line := "- " + briefCommand(shownCommand(c, commandOf(c.Input)))
		switch states[i] {
		case callFinished:
			done = append(done, line+": "+callOutcomeText(results[i]))
		case callCancelled:
			cancelled = append(cancelled, line)
		default:
			skipped = append(skipped, line)
		}
	}
	var b strings.Builder
	b.WriteString(interruptedLead + " Its unfinished step was dropped from the history, with the results of all its tool calls.")
	if len(done) > 0 {
		b.WriteString("\nThese calls of that step had finished, and what they did stands:\n")
		b.WriteString(strings.Join(done, "\n"))
	}
	if len(cancelled) > 0 {
		b.WriteString("\nThese were running and were cancelled; they may have done part of their work:\n")
		b.WriteString(strings.Join(cancelled, "\n"))
	}
	if len(skipped) > 0 {
		b.WriteString("\nThese never started:\n")
		b.WriteString(strings.Join(skipped, "\n"))
	}
	b.WriteString("\nDo not resume that work unless the next message asks for it.]")
	return b.String()
}

// droppedStep is the record of a step an interrupt dropped: the message
// and what became of each of its calls, as the person saw it (a cancelled
// call's output is what it streamed before the cancel).
func droppedStep(msg llm.Message, results []tool.Result, states []callState, streamed []*streamTail) *session.DroppedStep {
	d := &session.DroppedStep{Message: msg, Calls: make([]session.DroppedCall, len(msg.ToolCalls))}
	for i, c := range msg.ToolCalls {
		dc := session.DroppedCall{ID: c.ID, State: session.CallNotStarted}
		switch states[i] {
		case callFinished:
			dc.State = session.CallFinished
			dc.Output, dc.IsError = toolMessage(c.ID, results[i]).Text, results[i].IsError
			dc.Change = shownChange(c.ID, results[i])
		case callCancelled:
			dc.State, dc.Output, dc.IsError = session.CallCancelled, streamed[i].String(), true
		}
		d.Calls[i] = dc
	}
	return d
}

// shownChanges are the file changes of a step's calls (write, edit).
func shownChanges(calls []llm.ToolCall, results []tool.Result) []session.FileChange {
	var out []session.FileChange
	for i, c := range calls {
		if ch := shownChange(c.ID, results[i]); ch != nil {
			out = append(out, *ch)
		}
	}
	return out
}

func shownChange(id string, res tool.Result) *session.FileChange {
	ch := res.Change
	if ch == nil || res.IsError {
		return nil
	}
	return &session.FileChange{CallID: id, Path: ch.Path, Old: ch.Old, New: ch.New, Created: ch.Created}
}

// briefCommand is a command's first line, at most 160 characters: a
// write's whole content does not belong in the note.
func briefCommand(cmd string) string {
	first, _, more := strings.Cut(cmd, "\n")
	first = textutil.Truncate(first, 160)
	if more {
		first += " …"
	}
	return "`" + first + "`"
}

// callOutcomeText is a finished call's exit status and the files it changed.
func callOutcomeText(res tool.Result) string {
	out := "finished"
	if code, ok := res.Facts.Exit(); ok {
		out = "exit " + strconv.Itoa(code)
	} else if res.IsError {
		out = "failed"
	}
	switch {
	case res.Change != nil && res.Change.Created:
		out += ", created " + res.Change.Path
	case res.Change != nil:
		out += ", changed " + res.Change.Path
	case res.Facts.Layer == "native":
		out += " (a shell command: the files it changed are not tracked; check them if it matters)"
	}
	return out
}

// unfinishedNote is the note for a run that ended with err: interrupted,
// stopped by a limit, or failed.
func unfinishedNote(err error) string {
	if d := (*droppedStepError)(nil); errors.As(err, &d) {
		return d.note
	}
	if errors.Is(err, ErrInterrupted) {
		return InterruptedNote
	}
	return stoppedLead + err.Error() + "]"
}

// historyUnfinished reports whether a loaded history ends without an answer
// (its last run was interrupted or failed): the last message is not an
// assistant message without tool calls.
func historyUnfinished(h []llm.Message) bool {
	if len(h) == 0 {
		return false
	}
	last := h[len(h)-1]
	return last.Role != llm.RoleAssistant || len(last.ToolCalls) > 0
}

// IsUnfinishedNote reports whether a user message of a history is the
// agent's note about a previous request that did not finish (not words the
// person typed).
func IsUnfinishedNote(text string) bool {
	return strings.HasPrefix(text, interruptedLead) || strings.HasPrefix(text, resumedUnfinishedNote) ||
		strings.HasPrefix(text, stoppedLead)
}

// IsInterrupted reports whether err means the run was cancelled.
func IsInterrupted(err error) bool { return errors.Is(err, ErrInterrupted) }
