package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/session"
)

// contextState is the runner's share of context management. Guarded by
// Runner.mu except where noted.
type contextState struct {
	settings     contextmgr.Settings // as configured; zero fields follow the model
	compactModel string
	compactVia   llm.Provider // nil: the conversation's provider
	maxSessions  int

	tracker contextmgr.Tracker // one estimate per history message
	// requests counts model requests; lastCompact is the count at the last
	// automatic compaction attempt (the cooldown runs from there).
	requests, lastCompact int
	attempted             bool
	compactions           int
	// toolTokens is the estimate of the tool specs (they never change).
	toolTokens int
	warned     bool // the settings' warning was shown
	// offloadTold, shrinkTold: this run already said that results are
	// being offloaded, or cut.
	offloadTold, shrinkTold bool
	// prompt is the index in the history of the running turn's prompt,
	// which compaction never summarises; -1 when no turn runs.
	prompt int
	// offloadFrom: the history before it was offered to offload already.
	offloadFrom int
}

func (c *contextState) reset(h []llm.Message) {
	c.tracker.Reset(h)
	c.offloadFrom = 0
	c.attempted = false
	c.prompt = -1
}

// settingsLocked resolves the thresholds for the current model (r.mu held).
func (r *Runner) settingsLocked() (contextmgr.Settings, string) {
	return r.cw.settings.Resolve(llm.ContextWindow(r.model))
}

// estimateLocked is the estimated size of the next request (r.mu held).
func (r *Runner) estimateLocked() int { return r.cw.tracker.Total() + r.baseLocked() }

// baseLocked is the estimate of what every request carries besides the
// history: the system prompt and the tool specs (r.mu held).
func (r *Runner) baseLocked() int {
	if r.cw.toolTokens == 0 {
		for _, t := range r.tools {
			r.cw.toolTokens += contextmgr.EstimateText(t.Description) + contextmgr.EstimateText(string(t.InputSchema)) + 8
		}
	}
	return contextmgr.EstimateText(r.system) + r.cw.toolTokens
}

func (r *Runner) estimate() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.estimateLocked()
}

// ContextStats is what /context shows.
type ContextStats struct {
	Used, Window, OffloadAt, CompactAt int // tokens (Used is estimated)
	Messages, ToolCalls, Offloaded     int
	Compactions                        int
	OffloadDir                         string // "" without a session
	// Compactable: there is older history for /compact to summarise.
	Compactable bool
}

// ContextStats reports the context's size against the window and thresholds.
func (r *Runner) ContextStats() ContextStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	st, _ := r.settingsLocked()
	s := ContextStats{Used: r.estimateLocked(), Window: st.Window, OffloadAt: st.OffloadAt, CompactAt: st.CompactAt,
		Messages: len(r.history), Offloaded: contextmgr.Count(r.history), Compactions: r.cw.compactions}
	for _, m := range r.history {
		s.ToolCalls += len(m.ToolCalls)
	}
	if r.sess != nil {
		s.OffloadDir = r.sess.OffloadDir()
	}
	cut := contextmgr.Cut(r.history, st.KeepRecent)
	s.Compactable = cut > 0 && len(contextmgr.Summarised(r.history, cut, r.cw.prompt)) > 0
	return s
}

// ContextFullError is a request that would not fit the context window
// even after offloading, cutting and compacting: it is not sent (a real
// server refuses it, and a local one may cut the prompt silently).
type ContextFullError struct {
	Used, Limit, Window int // tokens (Used is estimated)
}

func (e *ContextFullError) Error() string {
	return fmt.Sprintf("the next request would be about %d tokens, more than the %d that fit the context window of %d tokens "+
		"even after offloading and compacting, so it was not sent: use /compact (with instructions on what to keep) or /clear to start over, "+
		"or use a model with a larger window and set SYNAPSE_MAX_CONTEXT_WINDOW to it", e.Used, e.Limit, e.Window)
}

// manageContext runs before each model request and keeps the request
// within the window, the cheapest and least lossy step first:
//
//  1. past the offload threshold, large older tool results go to files;
//  2. when the newest messages alone are past it (a few large outputs in a
//     row), their largest results are cut to start and end, the whole text
//     in a file, the newest step's last;
//  3. past the compaction threshold (after the cooldown, or at once when
//     the request would not fit), the older history is summarised, never
//     the running turn's prompt, and only when that saves MinSaving;
//  4. a request still over the limit has any large result cut, and one
//     that cannot fit is not sent: a *ContextFullError says what to do.
//
// A failed offload or compaction is a warning: the request goes out if it
// fits.
func (r *Runner) manageContext(ctx context.Context, sess *session.Session) error {
	r.mu.Lock()
	st, warn := r.settingsLocked()
	if warn != "" && !r.cw.warned {
		r.cw.warned = true
		r.mu.Unlock()
		r.Emit(Event{Kind: Warning, Err: errors.New("context settings: " + warn)})
		r.mu.Lock()
	}
	r.cw.requests++
	cooled := !r.cw.attempted || r.cw.requests-r.cw.lastCompact > st.CooldownSteps
	used := r.estimateLocked()
	r.mu.Unlock()
	if used > st.OffloadAt && sess != nil {
		r.offload(sess, st)
		used = r.estimate()
	}
	r.mu.Lock()
	from := len(r.history) - st.KeepRecent
	recent := r.cw.tracker.Since(from)
	r.mu.Unlock()
	if recent > st.OffloadAt {
		used = r.shrink(sess, st, from, recent-st.OffloadAt)
	}
	if used > st.CompactAt && (cooled || used > st.Limit) && r.worthCompacting(st) {
		r.mu.Lock()
		r.cw.attempted, r.cw.lastCompact = true, r.cw.requests
		r.mu.Unlock()
		if res, err := r.compact(ctx, sess, "", st); err == nil {
			r.compactedNotice(res)
		} else if ctx.Err() == nil {
			r.Emit(Event{Kind: Warning, Err: fmt.Errorf("the context is %d of %d tokens and compacting it failed, so the history is unchanged: %w; "+
				"it is tried again in a few steps, or use /compact, or /clear to start over", used, st.Window, err)})
		}
		used = r.estimate()
	}
	if used > st.Limit {
		used = r.shrink(sess, st, 0, used-st.Limit)
	}
	if used > st.Limit {
		return &ContextFullError{Used: used, Limit: st.Limit, Window: st.Window}
	}
	return nil
}

// worthCompacting reports whether summarising the older history would save
// at least st.MinSaving tokens even with the longest summary allowed.
func (r *Runner) worthCompacting(st contextmgr.Settings) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	cut := contextmgr.Cut(r.history, st.KeepRecent)
	older := r.cw.tracker.Total() - r.cw.tracker.Since(cut)
	if p := r.cw.prompt; p >= 0 && p < cut {
		older -= r.cw.tracker.Size(p)
	}
	return older-contextmgr.SummaryMaxTokens(st.Window) >= st.MinSaving
}

// offload moves large tool results of the older history to files in the
// session's directory and records each move in the session file. Only the
// messages that became older since the last offload are looked at, and
// they change in place (Compact cannot run during Run, and every reader of
// the history copies it under r.mu), so a step costs the same however long
// the history is.
func (r *Runner) offload(sess *session.Session, st contextmgr.Settings) {
	r.mu.Lock()
	from, to := r.cw.offloadFrom, len(r.history)-st.KeepRecent
	if to <= from {
		r.mu.Unlock()
		return
	}
	part := slices.Clone(r.history[from:to])
	r.mu.Unlock()
	before := r.estimate()
	moved, err := contextmgr.Offload(part, from, sess.OffloadDir(), st.OffloadMinChars)
	if len(moved) > 0 {
		rs := make([]session.Replaced, len(moved))
		for k, o := range moved {
			m := part[o.Index-from]
			rs[k] = session.Replaced{Index: o.Index, ToolCallID: m.ToolCallID, Text: m.Text}
		}
		r.mu.Lock()
		for _, o := range moved {
			r.history[o.Index].Text = part[o.Index-from].Text
			r.cw.tracker.Set(o.Index, r.history[o.Index])
		}
		first := !r.cw.offloadTold
		r.cw.offloadTold = true
		n := len(r.history)
		r.mu.Unlock()
		rerr := sess.Replace(n, rs)
		if errors.Is(rerr, session.ErrOutOfStep) {
			// Once: the rewritten file holds the history as it is.
			_, rerr = sess.Rewrite(r.History(), nil, nil)
		}
		if rerr != nil {
			err = errors.Join(err, rerr)
		}
		if first {
			// Once per run: later steps usually move one result each.
			r.Emit(Event{Kind: ContextNotice, Text: fmt.Sprintf("context past %d tokens: large older tool results are moved to %s (the model can read them back)",
				st.OffloadAt, sess.OffloadDir()), Context: &ContextChange{Action: "offload", Before: before, After: r.estimate()}})
		}
	}
	if err != nil {
		r.saveFailed(sess, err)
		return
	}
	r.mu.Lock()
	r.cw.offloadFrom = to
	r.mu.Unlock()
}

// shrink cuts large tool results of history[from:] to their start and end
// until need tokens are saved (contextmgr.Shrink), the whole texts in the
// session's offload directory and each cut recorded in the session file
// (one appended line, as offload's). It returns the new estimate.
func (r *Runner) shrink(sess *session.Session, st contextmgr.Settings, from, need int) int {
	r.mu.Lock()
	h := slices.Clone(r.history)
	r.mu.Unlock()
	dir, where := "", "the rest is not kept: there is no session to keep it in"
	if sess != nil {
		dir = sess.OffloadDir()
		where = "the whole texts are in " + dir
	}
	before := r.estimate()
	moved, _, err := contextmgr.Shrink(h, from, dir, st.OffloadMinChars, need)
	if len(moved) > 0 {
		if sess != nil {
			rs := make([]session.Replaced, len(moved))
			for k, o := range moved {
				rs[k] = session.Replaced{Index: o.Index, ToolCallID: h[o.Index].ToolCallID, Text: h[o.Index].Text}
			}
			rerr := sess.Replace(len(h), rs)
			if errors.Is(rerr, session.ErrOutOfStep) {
				_, rerr = sess.Rewrite(h, nil, nil)
			}
			if rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		if r.replaced(h, moved, &r.cw.shrinkTold) {
			r.Emit(Event{Kind: ContextNotice, Text: fmt.Sprintf("context: the newest tool results are too large for the window of %d tokens, "+
				"so the largest are cut to their start and end (%s; the model can read them back)", st.Window, where),
				Context: &ContextChange{Action: "shrink", Before: before, After: r.estimate()}})
		}
	}
	if err != nil && sess != nil {
		r.saveFailed(sess, err)
	}
	return r.estimate()
}

// replaced makes h, in which the moved messages changed, the history, and
// reports whether *told was false (the run has not said so yet), setting it.
func (r *Runner) replaced(h []llm.Message, moved []contextmgr.Offloaded, told *bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = h
	for _, o := range moved {
		r.cw.tracker.Set(o.Index, h[o.Index])
	}
	first := !*told
	*told = true
	return first
}

// CompactResult is what a compaction did.
type CompactResult struct {
	Before, After  int    // estimated tokens
	Summarised     int    // messages replaced by the summary
	OffloadRemoved int    // offload files no longer referenced, deleted
	Archive        string // the pre-compaction history ("" without a session)
}

// ErrNothingToCompact: the history is no longer than what is kept verbatim.
var ErrNothingToCompact = errors.New("nothing to compact yet: the conversation is no longer than the recent messages kept verbatim")

// Compact summarises the older history now (the REPL's /compact), steered
// by instructions (may be empty). It must not run during Run.
func (r *Runner) Compact(ctx context.Context, instructions string) (CompactResult, error) {
	r.mu.Lock()
	sess := r.sess
	st, _ := r.settingsLocked()
	r.mu.Unlock()
	return r.compact(ctx, sess, instructions, st)
}

// compact replaces the older history with a summary written by one model
// request; the running turn's prompt stays verbatim. On any failure the
// history, in memory and on disk, is unchanged.
func (r *Runner) compact(ctx context.Context, sess *session.Session, instructions string, st contextmgr.Settings) (CompactResult, error) {
	r.mu.Lock()
	h := r.history[:len(r.history):len(r.history)]
	before, base := r.estimateLocked(), r.baseLocked()
	model, provider := r.model, r.provider
	prompt := r.cw.prompt
	r.mu.Unlock()
	cut := contextmgr.Cut(h, st.KeepRecent)
	older := contextmgr.Summarised(h, cut, prompt)
	if cut <= 0 || len(older) == 0 {
		return CompactResult{}, ErrNothingToCompact
	}
	if r.cw.compactModel != "" {
		model = r.cw.compactModel
		if r.cw.compactVia != nil {
			provider = r.cw.compactVia
		}
	}
	window := min(st.Window, llm.ContextWindow(model))
	sum := contextmgr.Summary{Model: model, Older: h[:cut], Prompt: -1, Instructions: instructions,
		Budget: window * 70 / 100, MaxTokens: contextmgr.SummaryMaxTokens(window)}
	if prompt < cut {
		sum.Prompt = prompt
	}
	if sess != nil {
		sum.Expand = contextmgr.Expand(sess.OffloadDir())
	}
	resp, err := provider.Stream(ctx, sum.Request(), nil)
	if err != nil {
		return CompactResult{}, fmt.Errorf("summary request: %w", err)
	}
	r.mu.Lock()
	r.total = r.total.Add(resp.Usage)
	r.mu.Unlock()
	if sess != nil {
		sess.AddUsage(resp.Usage, cmpOr(resp.Model, model))
	}
	newH, newPrompt, err := contextmgr.Compacted(resp.Message.Text, h, cut, prompt)
	if err != nil {
		return CompactResult{}, err
	}
	if !contextmgr.ValidPairs(newH) {
		return CompactResult{}, errors.New("the compacted history would break a tool call's pairing with its result")
	}
	var tr contextmgr.Tracker
	tr.Reset(newH)
	if after := tr.Total() + base; after >= before {
		return CompactResult{}, fmt.Errorf("the summary would not make the history shorter (%d → %d tokens)", before, after)
	}
	res := CompactResult{Before: before, Summarised: len(older)}
	var dir string
	if sess != nil {
		dir = sess.OffloadDir()
		// The archive holds the offloaded results' full text, so the files
		// the new history no longer needs can go without losing anything.
		if res.Archive, err = sess.Rewrite(newH, h, contextmgr.Expand(dir)); err != nil {
			return CompactResult{}, err
		}
	}
	r.mu.Lock()
	r.history = newH
	r.cw.tracker = tr
	r.cw.offloadFrom = 0
	r.cw.prompt = newPrompt
	r.cw.compactions++
	res.After = r.estimateLocked()
	r.mu.Unlock()
	if dir != "" {
		for _, p := range contextmgr.Unreferenced(newH, dir) {
			if os.Remove(p) == nil {
				res.OffloadRemoved++
			}
		}
	}
	return res, nil
}

// compactedNotice tells the user about a compaction they did not ask for.
func (r *Runner) compactedNotice(res CompactResult) {
	r.Emit(Event{Kind: ContextNotice, Text: fmt.Sprintf("context compacted: %d → %d tokens (%d messages summarised)", res.Before, res.After, res.Summarised),
		Context: &ContextChange{Action: "compact", Before: res.Before, After: res.After}})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
