// Package subagent runs the task:<type> commands: each starts a fresh agent
// (its own history, shell, sandbox and todo list) on a focused job and returns
// its final answer as the command's output.
//
// Permissions hold structurally. Every sub-agent's Bash tool is the
// restricted variant refusing task:* anywhere in a command line (no nesting),
// and the host builds its tool without a task:* handler at all. An explore
// agent also loses write/edit and gets a shell under a read-only sandbox, so
// redirections, `sed -i` and scripts cannot write either.
package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/config"
	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
)

// DefaultMaxTurns bounds a sub-agent's model turns when --max-turns is not given.
const DefaultMaxTurns = 50

// Messages on stderr that are contract (seed 001) or that callers match.
const (
	MsgInterrupted = "Task execution interrupted"
)

// noticeRoom is the room kept for the notice that follows a cut answer.
const noticeRoom = 400

// TimedOut is the exit status of a task stopped by its timeout (as coreutils timeout).
const TimedOut = 124

// Workspace is what one sub-agent works with, built fresh for each task.
type Workspace struct {
	// Tool is the sub-agent's own Bash tool (own shell session and sandbox
	// manager). The handler wraps it in tool.NewRestricted with the kind's
	// exclusions; the host must build it without a task:* handler.
	Tool tool.Tool
	// Todos is the list its TodoWrite updates (nil: a new one).
	Todos *todo.Store
	// Close stops the shell and releases the sandbox; nil when nothing to do.
	Close func() error
}

// WorkspaceFunc builds a workspace for a sub-agent of kind k: a read-only
// sandbox when k.ReadOnly, the skills directory writable when k.WritesSkills.
type WorkspaceFunc func(ctx context.Context, k Kind) (Workspace, error)

// Options configure a Handler.
type Options struct {
	// Provider answers every sub-agent's requests (safe for concurrent use).
	Provider llm.Provider
	// Model is the default model when neither --model nor the calling
	// agent (its CallTrace) gives one.
	Model string
	// ProviderFor, when set, picks the provider of the task's model (from
	// --model or the parent's current model, which may belong to the other
	// provider than Provider's). It returns nil to keep Provider, or an
	// error saying what to configure, which fails the task.
	ProviderFor func(model string) (llm.Provider, error)
	// Workspace builds each tool-using sub-agent's tool and todo list.
	Workspace WorkspaceFunc
	// SkillIndex returns the installed skills' index text for skill:search
	// (nil or empty: no skills, and no request is made).
	SkillIndex func() string
	// SkillExists, when set, drops skill:search matches that are not installed.
	SkillExists func(name string) bool
	// SkillsDir is named in skill:enhance's prompt.
	SkillsDir string
	// Cwd is the directory the sub-agents start in (named in their prompt).
	Cwd string
	// Timeout bounds one task (0: config.DefaultTaskTimeout).
	Timeout time.Duration
	// MaxTurns is the default --max-turns (0: DefaultMaxTurns).
	MaxTurns int
	// MaxTokens bounds each response (0: the agent's default).
	MaxTokens int
	// Context is the sub-agents' context window and thresholds (zero
	// fields follow the model): their long runs are offload-free (no
	// session) but compacted like the parent's.
	Context contextmgr.Settings
	// OutputCap is the most characters of an answer returned inline
	// (0: config.DefaultOutputCap); a longer answer is saved to a file.
	OutputCap int
	// OutputDir receives answers longer than OutputCap (default: the temp dir).
	OutputDir string
	// Hooks, when set, run around each sub-agent tool call (the user's
	// PreToolUse/PostToolUse hooks; app gives the tool-only view, so no stop
	// hook ever runs in a sub-agent).
	Hooks agent.Hooks
	// IDPrefix starts this handler's task ids, so that handlers made for one
	// task (skill enhancement) never reuse the ids of the parent's own.
	IDPrefix string
	// Custom, when set, holds the session's custom types (the Agent SDK
	// host's agents), which task:<name> runs beside the built-in ones.
	Custom *Custom
}

// Handler runs task:<type> command lines (a command.Handler). It is safe
// for concurrent use: the parent runs a batch of tasks in parallel. Each
// task reports its events and usage to the agent that called it, through
// the call context's agent.CallTrace.
type Handler struct {
	opts Options
	seq  atomic.Int64
}

// New returns a task handler.
func New(opts Options) *Handler {
	if opts.Timeout <= 0 {
		opts.Timeout = config.DefaultTaskTimeout
	}
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = DefaultMaxTurns
	}
	if opts.OutputCap <= 0 {
		opts.OutputCap = config.DefaultOutputCap
	}
	return &Handler{opts: opts}
}

// outcome is how one task ended, before it becomes a command.Result.
type outcome struct {
	text      string // the answer (or partial findings)
	err       error  // why it failed; nil on success
	exit      int
	toolCount int
	usage     llm.Usage
}

// Run executes one task command line. Exit status: 0 done, 1 failed (bad
// arguments included), TimedOut, or command.Interrupted when ctx was cancelled.
func (h *Handler) Run(ctx context.Context, line string) command.Result {
	req, err := h.Parse(line)
	if err != nil {
		return command.Fail(err.Error())
	}
	if req.Help {
		return command.OK(helpIn(req.Kind, h.opts.Custom.All()))
	}
	if ctx.Err() != nil {
		return command.Result{Stderr: MsgInterrupted, ExitCode: command.Interrupted}
	}
	return h.Execute(ctx, req)
}

// Parse reads a task command line against the handler's types (the
// built-in ones and the session's custom ones).
func (h *Handler) Parse(line string) (Request, error) { return h.opts.Custom.Parse(line) }

// Execute runs a parsed request (Run without the parsing).
func (h *Handler) Execute(ctx context.Context, req Request) command.Result {
	id := fmt.Sprintf("%stask-%d", h.opts.IDPrefix, h.seq.Add(1))
	trace := agent.ContextCallTrace(ctx)
	model := cmp.Or(req.Model, req.Kind.Model, trace.CurrentModel(), h.opts.Model)
	provider, providerErr := h.opts.Provider, error(nil)
	if model != "" && h.opts.ProviderFor != nil {
		if p, err := h.opts.ProviderFor(model); err != nil {
			providerErr = err
		} else if p != nil {
			provider = p
		}
	}
	trace.Report(agent.Event{Kind: agent.TaskStart, TaskID: id, TaskType: req.Kind.Name, TaskDescription: req.Description})
	start := time.Now()

	tctx, cancel := context.WithTimeout(ctx, h.opts.Timeout)
	var o outcome
	switch {
	case providerErr != nil:
		o = outcome{err: providerErr}
	case req.Kind.NoTools:
		o = h.runSkillSearch(tctx, trace, req, provider, model)
	default:
		o = h.runAgent(tctx, trace, id, req, provider, model)
	}
	cancel()
	// How the context ended decides over what the run reported: a cancelled
	// run may still have returned text.
	switch {
	case ctx.Err() != nil:
		o.exit, o.err = command.Interrupted, errors.New(MsgInterrupted)
	case o.err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded):
		o.exit = TimedOut
		o.err = fmt.Errorf("Task timed out after %s and was stopped. Narrow the task, or raise SYNAPSE_TASK_TIMEOUT (milliseconds)", h.opts.Timeout) //nolint:staticcheck // sentence shown as is
	}
	res := h.result(id, o)
	took := time.Since(start)
	tr := tool.Result{Output: res.Stdout, IsError: res.ExitCode != 0}
	if o.err != nil {
		tr.Message = o.err.Error()
	}
	u := o.usage
	trace.Report(agent.Event{Kind: agent.TaskEnd, TaskID: id, TaskType: req.Kind.Name, TaskDescription: req.Description,
		Result: &tr, Duration: took, ToolCount: o.toolCount, Usage: &u, Err: o.err})
	return res
}

// result turns an outcome into what the parent's Bash tool sees.
func (h *Handler) result(id string, o outcome) command.Result {
	if o.err == nil {
		return command.Result{Stdout: h.capText(id, o.text)}
	}
	exit := o.exit
	if exit == 0 {
		exit = 1
	}
	out := ""
	if o.text != "" {
		out = h.capText(id, o.text)
	}
	msg := o.err.Error()
	if exit != command.Interrupted && exit != TimedOut {
		msg = "Task failed: " + msg
	}
	return command.Result{Stdout: out, Stderr: msg, ExitCode: exit}
}

// capText returns text whole when it fits the output cap; otherwise the
// whole text is saved to a file and the head is returned with the path.
func (h *Handler) capText(id, text string) string {
	limit := h.opts.OutputCap
	runes := []rune(text)
	if len(runes) <= limit {
		return text
	}
	// Keep the head and the notice inside the cap, so that the parent's
	// tool does not cut the notice away.
	keep := max(limit-noticeRoom, limit/2)
	path, err := h.saveText(id, text)
	var note string
	if err != nil {
		note = fmt.Sprintf("\n\n[The sub-agent's answer is %d characters; only the first %d are shown, and saving the whole answer failed: %v]", len(runes), keep, err)
	} else {
		note = fmt.Sprintf("\n\n[The sub-agent's answer is %d characters; the first %d are shown. The whole answer was saved to %s: read the rest with `read %s`.]",
			len(runes), keep, path, path)
	}
	return string(runes[:keep]) + note
}

func (h *Handler) saveText(id, text string) (string, error) {
	return fsutil.SaveTemp(h.opts.OutputDir, "synapse-"+id+"-*.md", text)
}
