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
	// offloadTold: this run already said that results are being offloaded.
	offloadTold bool
}

func (c *contextState) reset(h []llm.Message) {
	c.tracker.Reset(h)
	c.attempted = false
}

// settingsLocked resolves the thresholds for the current model (r.mu held).
func (r *Runner) settingsLocked() (contextmgr.Settings, string) {
	return r.cw.settings.Resolve(llm.ContextWindow(r.model))
}

// estimateLocked is the estimated size of the next request (r.mu held).
func (r *Runner) estimateLocked() int {
	if r.cw.toolTokens == 0 {
		for _, t := range r.tools {
			r.cw.toolTokens += contextmgr.EstimateText(t.Description) + contextmgr.EstimateText(string(t.InputSchema)) + 8
		}
	}
	return r.cw.tracker.Total() + contextmgr.EstimateText(r.system) + r.cw.toolTokens
}

// ContextStats is what /context shows.
type ContextStats struct {
	Used, Window, OffloadAt, CompactAt int // tokens (Used is estimated)
	Messages, ToolCalls, Offloaded     int
	Compactions                        int
	OffloadDir                         string // "" without a session
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
	return s
}

// manageContext runs before each model request: past the offload
// threshold, large older tool results go to files; past the compaction
// threshold (and the cooldown), the older history is summarised. Neither
// failing stops the run: the request goes out as the history stands.
func (r *Runner) manageContext(ctx context.Context, sess *session.Session) {
	r.mu.Lock()
	st, warn := r.settingsLocked()
	if warn != "" && !r.cw.warned {
		r.cw.warned = true
		r.mu.Unlock()
		r.Emit(Event{Kind: Warning, Err: errors.New("context settings: " + warn)})
		r.mu.Lock()
	}
	r.cw.requests++
	used := r.estimateLocked()
	// Nothing older than the kept messages: there is nothing to summarise.
	cooled := (!r.cw.attempted || r.cw.requests-r.cw.lastCompact > st.CooldownSteps) && contextmgr.Cut(r.history, st.KeepRecent) > 0
	r.mu.Unlock()
	if used > st.OffloadAt && sess != nil {
		r.offload(sess, st)
		r.mu.Lock()
		used = r.estimateLocked()
		r.mu.Unlock()
	}
	if used > st.CompactAt && cooled {
		r.mu.Lock()
		r.cw.attempted, r.cw.lastCompact = true, r.cw.requests
		r.mu.Unlock()
		if res, err := r.compact(ctx, sess, "", st); err == nil {
			r.compactedNotice(res)
		} else if ctx.Err() == nil {
			r.Emit(Event{Kind: Warning, Err: fmt.Errorf("the context is %d of %d tokens and compacting it failed, so the history is unchanged: %w; "+
				"it is tried again in a few steps, or use /compact, or /clear to start over", used, st.Window, err)})
		}
	}
}

// offload moves large tool results of the older history to files in the
// session's directory, rewriting the session file to match.
func (r *Runner) offload(sess *session.Session, st contextmgr.Settings) {
	r.mu.Lock()
	h := slices.Clone(r.history)
	r.mu.Unlock()
	moved, err := contextmgr.Offload(h, len(h)-st.KeepRecent, sess.OffloadDir(), st.OffloadMinChars)
	if len(moved) > 0 {
		if _, rerr := sess.Rewrite(h, nil, nil); rerr != nil {
			err = errors.Join(err, rerr)
		}
		r.mu.Lock()
		r.history = h
		for _, o := range moved {
			r.cw.tracker.Set(o.Index, h[o.Index])
		}
		told := r.cw.offloadTold
		r.cw.offloadTold = true
		r.mu.Unlock()
		if !told {
			// Once per run: later steps usually move one result each.
			r.Emit(Event{Kind: ContextNotice, Text: fmt.Sprintf("context past %d tokens: large older tool results are moved to %s (the model can read them back)",
				st.OffloadAt, sess.OffloadDir())})
		}
	}
	if err != nil {
		r.saveFailed(sess, err)
	}
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
// request. On any failure the history, in memory and on disk, is unchanged.
func (r *Runner) compact(ctx context.Context, sess *session.Session, instructions string, st contextmgr.Settings) (CompactResult, error) {
	r.mu.Lock()
	h := r.history[:len(r.history):len(r.history)]
	before := r.estimateLocked()
	model, provider := r.model, r.provider
	r.mu.Unlock()
	cut := contextmgr.Cut(h, st.KeepRecent)
	if cut <= 0 {
		return CompactResult{}, ErrNothingToCompact
	}
	if r.cw.compactModel != "" {
		model = r.cw.compactModel
		if r.cw.compactVia != nil {
			provider = r.cw.compactVia
		}
	}
	budget := min(st.Window, llm.ContextWindow(model)) * 70 / 100
	resp, err := provider.Stream(ctx, contextmgr.SummaryRequest(model, h[:cut], instructions, budget), nil)
	if err != nil {
		return CompactResult{}, fmt.Errorf("summary request: %w", err)
	}
	r.mu.Lock()
	r.total = r.total.Add(resp.Usage)
	r.mu.Unlock()
	if sess != nil {
		sess.AddUsage(resp.Usage, cmpOr(resp.Model, model))
	}
	newH, err := contextmgr.Compacted(resp.Message.Text, h[cut:])
	if err != nil {
		return CompactResult{}, err
	}
	if !contextmgr.ValidPairs(newH) {
		return CompactResult{}, errors.New("the compacted history would break a tool call's pairing with its result")
	}
	res := CompactResult{Before: before, Summarised: cut}
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
	r.cw.tracker.Reset(newH)
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
	r.Emit(Event{Kind: ContextNotice, Text: fmt.Sprintf("context compacted: %d → %d tokens (%d messages summarised)", res.Before, res.After, res.Summarised)})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
