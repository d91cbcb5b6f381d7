// Package agent is the loop that talks to the model: it streams one turn,
// runs the turn's tool calls (consecutive task:* calls as one bounded parallel
// batch, everything else alone and in order), appends and persists the
// results, and continues until the model answers without tool calls and the
// todo list has nothing unfinished. It emits typed events and prints nothing.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Tool is what the loop needs of the Bash tool (or its restricted variant).
type Tool interface {
	Spec() llm.ToolSpec
	Call(ctx context.Context, input json.RawMessage) tool.Result
}

// Options configure a Runner. Zero values mean the documented defaults.
type Options struct {
	Provider llm.Provider
	Model    string
	// SystemPrompt replaces the built-in prompt when non-empty.
	SystemPrompt string
	Cwd          string
	Tool         Tool
	// Todos is the list TodoWrite updates; nil gives the runner its own.
	Todos *todo.Store
	// SessionsDir enables persistence; "" keeps everything in memory.
	SessionsDir string
	// ResumeID resumes a session by id, unique prefix or "latest".
	ResumeID string
	// Fork continues ResumeID in a new session with a copy of its history
	// (that one may be open in another process).
	Fork bool

	MaxTurns               int // model turns per run; 0 → config.DefaultMaxToolIterations
	MaxConsecutiveFailures int // 0 → config.DefaultMaxConsecutiveFailures
	MaxParallelTasks       int // 0 → config.DefaultMaxParallelTasks
	// MaxReminders bounds todo reminders per run; 0 → DefaultMaxReminders.
	MaxReminders int

	DisableSkillSearchInstruction bool
	// MaxTokens caps each reply; 0 lets the provider pick the model's limit.
	MaxTokens int
	// ThinkingBudget > 0 enables extended thinking where the provider supports it.
	ThinkingBudget int

	// OnEvent receives every event, never concurrently.
	OnEvent func(Event)
	// Hooks, when set, run at the hook points: the user's prompt, around
	// each tool call, and after a turn that ended with a final answer.
	Hooks   Hooks
	Pricing session.Pricing

	// Context sets the context window and the offload and compaction
	// thresholds (tokens); zero fields follow the model's window.
	Context contextmgr.Settings
	// CompactModel, when set, writes compaction summaries (a cheaper
	// model of the same provider); "" uses the conversation's model.
	CompactModel string
	// CompactProvider serves CompactModel when it is another provider's.
	CompactProvider llm.Provider
	// MaxSessions keeps that many sessions in SessionsDir (the newest; never
	// the current one), deleting older ones when a session starts; 0 keeps all.
	MaxSessions int
}

// DefaultMaxReminders bounds the todo reminders of one run, so a model that
// keeps stopping with unfinished items cannot loop forever.
const DefaultMaxReminders = 3

// Stop reasons beyond the provider's (llm.Stop*).
const (
	StopMaxTurns            = "max_turns"
	StopConsecutiveFailures = "consecutive_failures"
	StopInterrupted         = "interrupted"
	StopError               = "error"
	StopBlocked             = "blocked"      // a UserPromptSubmit hook refused the prompt
	StopContextFull         = "context_full" // the next request would not fit the window (*ContextFullError)
)

// ErrInterrupted is returned (wrapped) when the run's context was cancelled.
var ErrInterrupted = errors.New("interrupted")

// LimitError reports a run stopped by one of its limits.
type LimitError struct {
	Reason  string // StopMaxTurns or StopConsecutiveFailures
	Message string
}

func (e *LimitError) Error() string { return e.Message }

// Result is the outcome of one Run.
type Result struct {
	Text       string    `json:"text"`
	Turns      int       `json:"turns"`
	StopReason string    `json:"stopReason"`
	Usage      llm.Usage `json:"usage"`
	// APIDuration is the time spent in model requests (streaming included).
	APIDuration time.Duration `json:"-"`
	// Hooks are the stop hooks' outputs, shown after the answer (never in the history).
	Hooks []hooks.Output `json:"hooks,omitempty"`
}

// Runner holds one conversation. Run must not be called concurrently with
// itself; the accessors may be called from any goroutine.
type Runner struct {
	provider llm.Provider
	tool     Tool
	tools    []llm.ToolSpec
	system   string
	cwd      string
	todos    *todo.Store
	store    *session.Store
	limits   limits
	skill    bool
	onEvent  func(Event)
	hooks    Hooks

	emitMu sync.Mutex

	mu      sync.Mutex
	model   string
	history []llm.Message
	sess    *session.Session
	// total is every request's usage over the runner's life, its own and
	// its sub-agents'; runSub is the sub-agents' share since the current
	// run started. Both are kept with or without a session.
	total  llm.Usage
	runSub llm.Usage
	// saveWarned: a failed session write was reported during this run.
	saveWarned bool
	// running: a Run is in progress (it flushes the session when done).
	running bool
	// cw manages the context window: size estimate, offload, compaction.
	cw contextState
	// unfinished is the note the next run puts before its prompt when the
	// previous one ended without an answer ("" when it finished).
	unfinished string
	// notes are user-side notes the next run puts before its prompt (AddNote).
	notes []string
	// hookHalt: a tool hook answered {"continue": false} during this run;
	// the turn ends after the step (reset by each Run).
	hookHalt string
}

type limits struct {
	maxTurns, maxFailures, maxParallel, maxReminders, maxTokens, thinking int
}

// New builds a runner (and resumes opts.ResumeID when set).
func New(opts Options) (*Runner, error) {
	if opts.Provider == nil {
		return nil, errors.New("agent: no model provider configured")
	}
	if opts.Tool == nil {
		return nil, errors.New("agent: no tool configured")
	}
	cwd := opts.Cwd
	if cwd == "" {
		if wd, err := os.Getwd(); err == nil {
			cwd = wd
		}
	}
	r := &Runner{
		provider: opts.Provider,
		tool:     opts.Tool,
		tools:    []llm.ToolSpec{opts.Tool.Spec()},
		cwd:      cwd,
		todos:    opts.Todos,
		model:    opts.Model,
		skill:    !opts.DisableSkillSearchInstruction,
		onEvent:  opts.OnEvent,
		hooks:    opts.Hooks,
		cw: contextState{settings: opts.Context, compactModel: opts.CompactModel, compactVia: opts.CompactProvider,
			maxSessions: opts.MaxSessions, prompt: -1},
		limits: limits{
			maxTurns:     orDefault(opts.MaxTurns, config.DefaultMaxToolIterations),
			maxFailures:  orDefault(opts.MaxConsecutiveFailures, config.DefaultMaxConsecutiveFailures),
			maxParallel:  orDefault(opts.MaxParallelTasks, config.DefaultMaxParallelTasks),
			maxReminders: orDefault(opts.MaxReminders, DefaultMaxReminders),
			maxTokens:    max(opts.MaxTokens, 0),
			thinking:     max(opts.ThinkingBudget, 0),
		},
	}
	if r.todos == nil {
		r.todos = &todo.Store{}
	}
	r.system = opts.SystemPrompt
	if r.system == "" {
		r.system = SystemPrompt(cwd)
	}
	r.todos.OnChange(func(items []todo.Item) { r.Emit(Event{Kind: TodoChange, Todos: items}) })
	if opts.SessionsDir != "" {
		r.store = session.NewStore(opts.SessionsDir, opts.Pricing, func(err error) {
			r.Emit(Event{Kind: Warning, Err: err})
		})
	}
	if opts.ResumeID != "" {
		resume := r.Resume
		if opts.Fork {
			resume = r.Fork
		}
		if err := resume(opts.ResumeID); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// Emit delivers e to OnEvent, serialised with every other event. Sub-agents
// report their Task* events through it (by the CallTrace of their call).
func (r *Runner) Emit(e Event) {
	if r.onEvent == nil {
		return
	}
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.onEvent(e)
}

// SessionID is the current session's id, "" without persistence (or before
// the first run of a new session).
func (r *Runner) SessionID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return ""
	}
	return r.sess.ID()
}

// BeginSession creates the session now (when persistence is on) so that
// its id is known before the first run: headless output announces it first
// and an editor (ACP) names the session by it. "" without persistence.
func (r *Runner) BeginSession() string {
	if sess := r.ensureSession(); sess != nil {
		return sess.ID()
	}
	return ""
}

// TitleSession names the session from text unless it has a title: the
// prompt's own words, when the prompt carries more than them (an editor's
// attached files) that would otherwise make the title.
func (r *Runner) TitleSession(text string) {
	if sess := r.ensureSession(); sess != nil {
		sess.SetTitle(text)
	}
}

// SessionUsage is a copy of the session's usage, nil without a session.
func (r *Runner) SessionUsage() *session.Usage {
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.Usage()
}

// TotalUsage is the usage of every request this runner made or rolled up
// (sub-agents included) since it was built, with or without a session.
func (r *Runner) TotalUsage() llm.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// RecordUsage adds a sub-agent's usage to the runner's totals, to the
// current run's Result.Usage, and (with a session) to the session's totals
// and rounds. It may be called from any goroutine.
func (r *Runner) RecordUsage(u llm.Usage, model string) {
	r.mu.Lock()
	r.total = r.total.Add(u)
	r.runSub = r.runSub.Add(u)
	sess, running := r.sess, r.running
	r.mu.Unlock()
	if sess == nil {
		return
	}
	sess.AddUsage(u, model)
	if running {
		// Parallel sub-agents report every request: rewriting the usage
		// file and the index each time would serialise them on the disk.
		// The run flushes at its end.
		r.saveFailed(sess, sess.FlushIfDue())
		return
	}
	r.saveFailed(sess, sess.Flush())
}

// History returns a copy of the conversation.
func (r *Runner) History() []llm.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]llm.Message(nil), r.history...)
}

// Todos is the runner's todo list.
func (r *Runner) Todos() *todo.Store { return r.todos }

// Model is the model the next request uses.
func (r *Runner) Model() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model
}

// SetModel changes the model for the next requests.
func (r *Runner) SetModel(m string) {
	r.mu.Lock()
	r.model = m
	r.mu.Unlock()
}

// SetModelProvider changes the model and the provider that serves it for
// the next requests (a model of another provider, as the REPL's /model).
func (r *Runner) SetModelProvider(m string, p llm.Provider) {
	r.mu.Lock()
	r.model = m
	if p != nil {
		r.provider = p
	}
	r.mu.Unlock()
}

// Cwd is the directory the runner was started in.
func (r *Runner) Cwd() string { return r.cwd }

// SystemPromptText is the system prompt sent with every request.
func (r *Runner) SystemPromptText() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.system
}

// SetSystemPrompt replaces the system prompt for the next requests (a
// headless host's initialize); "" restores the built-in one.
func (r *Runner) SetSystemPrompt(s string) {
	if s == "" {
		s = SystemPrompt(r.cwd)
	}
	r.mu.Lock()
	r.system = s
	r.mu.Unlock()
}

// Reset starts a new conversation: history and todo list cleared, and a new
// session on the next run.
func (r *Runner) Reset() {
	r.mu.Lock()
	r.history = nil
	r.cw.reset(nil)
	r.unfinished = ""
	old := r.sess
	r.sess = nil
	r.mu.Unlock()
	if old != nil {
		if err := old.Close(); err != nil {
			r.Emit(Event{Kind: Warning, Err: fmt.Errorf("close session: %w", err)})
		}
	}
	r.todos.Clear()
}

// Resume loads a saved session (id, unique prefix or "latest") and continues
// it. A session open in another process is refused (*session.LockedError)
// and the current one kept.
func (r *Runner) Resume(idOrPrefix string) error {
	if r.store == nil {
		return errors.New("cannot resume a session: sessions are not enabled (no sessions directory)")
	}
	id, err := r.store.Resolve(idOrPrefix)
	if err != nil {
		return err
	}
	r.mu.Lock()
	cur := r.sess
	r.mu.Unlock()
	if cur != nil && cur.ID() == id {
		// Our own writer lock would refuse us: reload from disk. Should the
		// open fail, the next append reopens (and relocks) this session.
		_ = cur.Close()
	}
	sess, msgs, err := r.store.Open(id)
	if err != nil {
		return err
	}
	r.load(sess, msgs)
	return nil
}

// Fork continues a saved session (id, unique prefix or "latest") in a new
// session with a copy of its history, leaving that one as it is.
func (r *Runner) Fork(idOrPrefix string) error {
	if r.store == nil {
		return errors.New("cannot fork a session: sessions are not enabled (no sessions directory)")
	}
	sess, msgs, err := r.store.Fork(idOrPrefix, r.cwd)
	if err != nil {
		return err
	}
	r.load(sess, msgs)
	return nil
}

// load makes sess, with history msgs, the current session.
func (r *Runner) load(sess *session.Session, msgs []llm.Message) {
	r.mu.Lock()
	old := r.sess
	r.sess = sess
	r.history = msgs
	r.cw.reset(msgs)
	r.unfinished = ""
	if historyUnfinished(msgs) {
		// Saved by a run that was interrupted (or failed) in another process.
		r.unfinished = resumedUnfinishedNote
	}
	r.mu.Unlock()
	if old != nil && old != sess {
		_ = old.Close()
	}
}

// Close flushes and closes the session files.
func (r *Runner) Close() error {
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	if sess == nil {
		return nil
	}
	return sess.Close()
}
