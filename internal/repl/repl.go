// Package repl is the interactive loop: line editing with persistent
// history, multi-line input, slash commands, `!` shell commands, turns that
// Ctrl+C cancels, and the permission prompt for sandbox-blocked commands.
// It drives an agent and draws through internal/render; it holds no agent
// logic of its own.
package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

// Agent is what the REPL needs of the conversation (*agent.Runner).
type Agent interface {
	Run(ctx context.Context, input string) (agent.Result, error)
	Reset()
	Resume(idOrPrefix string) error
	Model() string
	SetModel(model string)
	SessionID() string
	SessionUsage() *session.Usage
	History() []llm.Message
}

// Sessions lists saved sessions for /resume (*session.Store).
type Sessions interface {
	List() ([]session.Entry, error)
}

// Options configure a REPL.
type Options struct {
	In  io.Reader
	Out io.Writer
	// TTY is set when In and Out are a terminal already in raw mode (the
	// caller owns raw mode and restores it). Otherwise input is read line by
	// line with no editing, as from a pipe.
	TTY bool
	// Color allows styling (dim hints); false under NO_COLOR.
	Color bool
	// Width and Height are the terminal's size (0: unknown); SetSize
	// follows changes.
	Width  int
	Height int
	// InTmux: the terminal is a tmux pane. tmux passes Shift+Enter apart
	// from Enter only with its extended-keys option on and only to a
	// program that asks with modifyOtherKeys (it ignores the kitty request),
	// so the REPL asks that way too and the banner names the keys that
	// work either way.
	InTmux   bool
	Renderer *render.Renderer
	// View draws the agent's events (the REPL passes its Handle as the
	// agent's OnEvent); /context reads the last request's size from it.
	View *view.View
	// Gate is the agent's permission gate (the agent's approver), which owns
	// the mode, the grants and plan approval, and Asker the prompt it asks
	// through; nil: a gate and a prompt of the REPL's own, which no agent
	// asks, starting in Mode and switching through SetMode.
	Gate     *tool.Permissions
	Asker    *Asker
	Agent    Agent
	Sessions Sessions // nil: /resume says sessions are off
	// HistoryPath persists the prompt history ("" keeps it in memory).
	HistoryPath string
	// Shell runs a `!` command for the user (bash mode) without a terminal
	// (input not a terminal: piped, tests).
	Shell func(ctx context.Context, cmd string) (command.Result, error)
	// ShellTerminal runs a `!` command on a terminal of its own (the REPL's
	// keys, its output shown as it comes); used on a terminal when set.
	ShellTerminal func(ctx context.Context, cmd string, t Terminal) (command.Result, error)
	// SwitchModel, when set, carries out /model <name> (it may also switch
	// the provider, or refuse with what to configure); nil: Agent.SetModel.
	SwitchModel func(model string) error

	Version string
	Cwd     string
	// SandboxStatus describes what is enforced (/sandbox; its first line is
	// the banner's unless SandboxSummary is set).
	SandboxStatus func() string
	// SandboxSummary is the banner's one-line sandbox state (cheaper than
	// the full status).
	SandboxSummary func() string
	// Notices are shown once, after the banner (start-up warnings).
	Notices []string
	// ToolsText describes what the agent can call, by layer (/tools).
	ToolsText func() string
	// Jobs are the agent's background jobs: /jobs, the footer's count and
	// Ctrl+B during a turn (nil: none).
	Jobs Jobs
	// SkillCommand runs a skill management command line (skill:list,
	// skill:info …) for /skills and /skill:<command>; nil: unavailable.
	SkillCommand func(ctx context.Context, line string) command.Result
	// AutoEnhance reports whether skill auto-enhance is on, SetAutoEnhance
	// switches and persists it (/skill enhance); nil: unavailable.
	AutoEnhance    func() bool
	SetAutoEnhance func(on bool) error
	// Mode is the starting permission mode ("" is default); SetMode
	// carries out a switch (the sandbox read-only for plan, or back) and
	// may refuse; nil: modes other than default are unavailable.
	Mode    tool.Mode
	SetMode func(m tool.Mode) error
	// ContextWindow gives the model's window in tokens (0: unknown).
	ContextWindow func(model string) int
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// REPL is one interactive session. Create it with New and call Run once.
type REPL struct {
	o    Options
	r    *render.Renderer
	now  func() time.Time
	hist *History
	// width and height are the terminal's, for word-wrapping println's
	// lines and the editor (0: unknown).
	width, height atomic.Int64

	keys    *keys         // the terminal's keys (TTY only)
	ed      *lineEditor   // the prompt editor (TTY only)
	es      editorState   // the prompt being typed
	resized chan struct{} // SetSize tells the editor to redraw
	lines   chan lineRead // non-TTY input, read ahead by one goroutine
	done    <-chan struct{}
	stop    chan struct{} // closed when Run returns: the line reader quits

	perm  *tool.Permissions // the permission gate: mode, grants, plan approval
	asker *Asker            // its prompt, given the keys during a turn

	search    *revSearch        // the Ctrl+R search under way, nil when none
	lastQuery string            // the last search's query (Ctrl+R Ctrl+R searches it again)
	pastes    map[string]string // placeholder shown in the editor → the pasted text
	// resumedTurn is a resumed session's last turn, whole, for Ctrl+O
	// before any turn of this session has run (nil: none, or shown).
	resumedTurn []string

	keyModes [2]string // the terminal modes the editor asked for, and their undoing

	queued  []string // prompts typed during the last turn, run next
	partial string   // an unfinished line typed then, for the editor after them
	exit    bool     // /exit was typed during a turn
	qmu     sync.Mutex
	queue   Queue // the typed-ahead text the footer shows
}

// Jobs is what the REPL needs of the agent's background jobs.
type Jobs interface {
	// Background moves the native command running now to the background
	// and returns its job id; the command's result tells the model.
	Background() (int, error)
	// Text lists the jobs (/jobs).
	Text() string
	// Running counts the jobs still running (the footer).
	Running() int
}

// New prepares a REPL.
func New(o Options) (*REPL, error) {
	if o.Agent == nil || o.Renderer == nil {
		return nil, errors.New("repl: an agent and a renderer are required")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	r := &REPL{o: o, r: o.Renderer, now: o.Now, perm: o.Gate, asker: o.Asker}
	r.width.Store(int64(o.Width))
	r.height.Store(int64(o.Height))
	if r.asker == nil {
		r.asker = NewAsker(o.Renderer)
	}
	if r.perm == nil {
		r.perm = tool.NewPermissions(r.asker, o.Mode, tool.ProjectRoot(o.Cwd))
		r.perm.SetSwitch(o.SetMode)
	}
	if r.now == nil {
		r.now = time.Now
	}
	h, err := LoadHistory(o.HistoryPath, func(err error) { r.r.Notice("warning: " + err.Error()) })
	if err != nil {
		r.r.Notice("warning: " + err.Error())
	}
	r.hist = h
	if o.TTY {
		r.keys = startKeys(o.In)
		r.ed = newLineEditor(o.Out, r.prompt(), o.Width, o.Height)
		r.resized = make(chan struct{}, 1)
	} else {
		r.stop = make(chan struct{})
		r.lines = readLines(o.In, r.stop)
	}
	return r, nil
}

const promptText = "› "

// dim styles a hint, unless colours are off (NO_COLOR).
func (r *REPL) dim(s string) string {
	if !r.o.Color {
		return s
	}
	return "\x1b[2m" + s + "\x1b[0m"
}

// SetSize tells the line editor and the renderer the terminal's new size.
// It may be called from any goroutine (SIGWINCH).
func (r *REPL) SetSize(width, height int) {
	r.width.Store(int64(width))
	r.height.Store(int64(height))
	if r.resized != nil {
		select {
		case r.resized <- struct{}{}:
		default:
		}
	}
	r.r.SetSize(width, height)
}

func (r *REPL) size() (width, height int) {
	return int(r.width.Load()), int(r.height.Load())
}

// println writes lines outside the renderer (banner, command answers), with
// the line ending a raw-mode terminal needs; on a terminal a line wider than
// it is word-wrapped rather than cut mid-word by the terminal.
func (r *REPL) println(lines ...string) {
	var b strings.Builder
	width := int(r.width.Load())
	for _, l := range lines {
		if r.o.TTY && width >= 20 {
			l = render.WordWrap(l, width-1)
		}
		for _, part := range strings.Split(l, "\n") {
			b.WriteString(part)
			if r.o.TTY {
				b.WriteString("\r\n")
			} else {
				b.WriteString("\n")
			}
		}
	}
	_, _ = io.WriteString(r.o.Out, b.String())
}

// The terminal modes the editor asks for while the REPL runs, and their undoing.
const (
	enterKeyModes = "\x1b[?2004h\x1b[>1u"
	leaveKeyModes = "\x1b[<u\x1b[?2004l"
	// Under tmux: xterm's modifyOtherKeys level 2 as well, the way tmux
	// takes a request for extended keys (reset on the way out).
	enterTmuxKeyModes = enterKeyModes + "\x1b[>4;2m"
	leaveTmuxKeyModes = "\x1b[>4;0m" + leaveKeyModes
)

// newlineKeys names the keys the banner offers for a new line: under tmux
// Shift+Enter arrives as Enter unless extended-keys is on, so the keys
// that always work are named there (/help says the rest).
func newlineKeys(inTmux bool) string {
	if inTmux {
		return "Alt+Enter or Ctrl+J"
	}
	return "Shift+Enter or Ctrl+J"
}

// errExit ends the loop with status 0 (/exit, Ctrl+D, double Ctrl+C).
var errExit = errors.New("exit")

// lineRead is one line of non-TTY input.
type lineRead struct {
	s   string
	err error
}

// readLines reads in from its own goroutine, so that a wait for input can
// end when the context does (SIGTERM, or SIGINT in plain mode).
func readLines(in io.Reader, stop <-chan struct{}) chan lineRead {
	ch := make(chan lineRead)
	go func() {
		defer close(ch)
		br := bufio.NewReader(in)
		for {
			s, err := br.ReadString('\n')
			select {
			case ch <- lineRead{s, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// Run reads prompts until the user exits or ctx ends. It returns the exit
// status: 0 for /exit, Ctrl+D or end of input, 130 when ctx ended.
func (r *REPL) Run(ctx context.Context) int {
	r.done = ctx.Done()
	if r.stop != nil {
		defer close(r.stop)
	}
	if r.ed != nil {
		// Bracketed paste: a paste arrives marked, as one prompt. The
		// kitty keyboard protocol's "disambiguate" level: terminals that
		// have it (kitty, Ghostty, WezTerm, foot, iTerm2, Alacritty) then
		// send Shift+Enter apart from Enter; the others ignore the request.
		enter, leave := enterKeyModes, leaveKeyModes
		if r.o.InTmux {
			enter, leave = enterTmuxKeyModes, leaveTmuxKeyModes
		}
		r.keyModes = [2]string{enter, leave}
		_, _ = io.WriteString(r.o.Out, enter)
		defer func() { _, _ = io.WriteString(r.o.Out, leave) }()
	}
	r.banner()
	for {
		if ctx.Err() != nil {
			r.println("")
			return 130
		}
		if r.exit { // /exit typed during the last turn
			r.println("")
			return 0
		}
		var input string
		var err error
		if len(r.queued) > 0 { // typed during the last turn: it runs now
			input, r.queued = r.queued[0], r.queued[1:]
			// Echoed as the editor would have shown it: sanitized (a paste
			// may hold escape sequences), continuation lines indented.
			r.println(r.prompt() + strings.ReplaceAll(textutil.Sanitize(input), "\n", "\n"+strings.Repeat(" ", ansi.StringWidth(r.prompt()))))
			r.hist.Add(input)
		} else {
			if r.partial != "" && r.ed != nil { // left unfinished behind queued prompts
				r.prefill(r.partial)
				r.partial = ""
			}
			input, err = r.readInput()
		}
		if ctx.Err() != nil {
			r.println("")
			return 130
		}
		if errors.Is(err, errExit) || errors.Is(err, io.EOF) {
			if r.o.TTY {
				r.println("")
			}
			return 0
		}
		if err != nil {
			r.r.Error("reading input: " + err.Error())
			return 1
		}
		if strings.TrimSpace(input) == "" {
			continue
		}
		if err := r.handle(ctx, input); errors.Is(err, errExit) || r.exit {
			if r.exit {
				r.println("")
			}
			return 0
		}
	}
}

func (r *REPL) banner() {
	model := r.o.Agent.Model()
	sess := r.o.Agent.SessionID()
	if sess == "" {
		sess = "new"
	}
	sandbox := "unknown"
	switch {
	case r.o.SandboxSummary != nil:
		sandbox = r.o.SandboxSummary()
	case r.o.SandboxStatus != nil:
		sandbox = textutil.FirstLine(r.o.SandboxStatus())
	}
	r.println(
		fmt.Sprintf("Synapse %s · model %s", r.o.Version, model),
		fmt.Sprintf("cwd %s · session %s · sandbox %s", r.o.Cwd, sess, sandbox),
		"Type /help for commands, !cmd to run a shell command, "+newlineKeys(r.o.InTmux)+" for a new line, Ctrl+D to exit.",
	)
	for _, n := range r.o.Notices {
		r.r.Notice(n)
	}
	if h := r.o.Agent.History(); len(h) > 0 { // --continue, --resume: where the user left off
		r.replay(h)
	}
}

// readLine reads one line of piped input.
func (r *REPL) readLine() (string, error) {
	select {
	case l, ok := <-r.lines:
		if !ok {
			return "", io.EOF
		}
		if l.err != nil && (l.s == "" || !errors.Is(l.err, io.EOF)) {
			return "", l.err
		}
		return strings.TrimRight(l.s, "\r\n"), nil
	case <-r.done:
		return "", io.EOF
	}
}

// readAnswer reads the answer to a question (not kept in the history).
func (r *REPL) readAnswer(question string) (string, error) {
	if r.ed != nil {
		// The size now, not the last prompt's: a question judged by a
		// width from before a resize was shown as a bare prompt alone.
		r.ed.setSize(r.size())
		if ansi.StringWidth(question) > r.ed.width-1-minTypingCols {
			// A long question on a narrow terminal: on a row of its own,
			// so the answer has room.
			r.println(strings.TrimRight(question, " "))
			question = promptText
		}
		return r.readEditor(question, false)
	}
	return r.readLine()
}

// readInput reads one prompt: with the editor on a terminal, otherwise
// line by line, a line ending in a backslash continuing on the next.
func (r *REPL) readInput() (string, error) {
	if r.ed != nil {
		return r.readEditor(r.prompt(), true)
	}
	var parts []string
	for {
		line, err := r.readLine()
		if err != nil {
			if len(parts) > 0 && errors.Is(err, io.EOF) {
				return strings.Join(parts, "\n"), nil
			}
			return "", err
		}
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			parts = append(parts, strings.TrimSuffix(line, "\\"))
			continue
		}
		return strings.Join(append(parts, line), "\n"), nil
	}
}

// handle runs one prompt: a slash command, a `!` command or a turn.
func (r *REPL) handle(ctx context.Context, input string) error {
	trimmed := strings.TrimSpace(input)
	switch {
	case strings.HasPrefix(trimmed, "/"):
		return r.slash(ctx, trimmed)
	case strings.HasPrefix(trimmed, "!"):
		r.bang(ctx, strings.TrimSpace(trimmed[1:]))
		return nil
	}
	r.turn(ctx, input)
	return nil
}

// cancellable runs fn with a context that Ctrl+C cancels.
func (r *REPL) cancellable(ctx context.Context, fn func(ctx context.Context)) (interrupted bool) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if r.keys != nil {
		// Prompts still queued and an unfinished line wait in the watcher,
		// where the footer shows them and Esc clears them.
		start := Queue{Prompts: r.queued, Partial: r.partial}
		r.queued, r.partial = nil, ""
		w := r.keys.watchTurn(start, cancel, r.setQueue, func() { // Shift+Tab: the next mode, shown in the footer (the scrollback is the conversation's)
			if err := r.nextMode(); err != nil {
				r.r.Notice("mode unchanged: " + err.Error())
			}
			r.r.SetStatus(r.status())
		}, r.toggleVerbose)
		w.setCtrlB(r.background)
		r.asker.setWatch(w)
		defer func() {
			r.asker.setWatch(nil)
			w.Stop()
			r.takeQueue(w.Queue())
		}()
	}
	fn(tctx)
	return tctx.Err() != nil && ctx.Err() == nil
}

// background moves the running native command to the background (Ctrl+B).
func (r *REPL) background() {
	if r.o.Jobs == nil {
		return
	}
	id, err := r.o.Jobs.Background()
	if err != nil {
		r.r.Notice("Ctrl+B: " + err.Error())
		return
	}
	r.r.Notice(fmt.Sprintf("moved to the background as job %d (/jobs lists jobs)", id))
	r.r.SetStatus(r.status())
}

// setQueue shows the typed-ahead text in the footer.
func (r *REPL) setQueue(q Queue) {
	r.qmu.Lock()
	r.queue = q
	r.qmu.Unlock()
	r.r.SetStatus(r.status())
}

// takeQueue keeps what was typed during a turn: finished lines run next,
// an unfinished one is handed to the editor, /exit ends the REPL.
func (r *REPL) takeQueue(q Queue) {
	r.setQueue(Queue{})
	r.queued = append(r.queued, q.Prompts...)
	r.exit = r.exit || q.Exit
	switch {
	case q.Partial == "" || r.ed == nil:
	case len(r.queued) > 0: // the queued prompts run first; the line waits with them
		r.partial = q.Partial
	default:
		r.prefill(q.Partial)
	}
}

func (r *REPL) turn(ctx context.Context, input string) {
	var err error
	r.resumedTurn = nil // Ctrl+O is this turn's now
	r.r.SetStatus(r.status())
	r.r.StartTurn()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the footer's context and cost follow the turn's requests
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r.r.SetStatus(r.status())
			}
		}
	}()
	input = r.withMentions(input)
	_, input = r.perm.Prompt(input)
	interrupted := r.cancellable(ctx, func(tctx context.Context) {
		_, err = r.o.Agent.Run(tctx, input)
	})
	close(stop)
	<-done
	r.r.EndText()
	r.r.EndTurn()
	switch {
	case interrupted || agent.IsInterrupted(err):
		r.r.Abort("interrupted")
		r.r.Notice("Interrupted. The conversation keeps everything up to the last finished step.")
	case err != nil:
		var le *agent.LimitError
		if !errors.As(err, &le) && !r.shownByAgent(err) {
			r.r.Error(err.Error())
		}
	}
}

// status is the footer's content: model, context use, session cost and
// sandbox state.
func (r *REPL) status() render.Status {
	model := r.o.Agent.Model()
	st := render.Status{Model: model, ContextPercent: r.contextPercent(model)}
	if u := r.o.Agent.SessionUsage(); u != nil && u.Priced {
		st.CostUSD, st.Priced = u.CostUSD, true
	}
	if r.o.SandboxSummary != nil {
		st.Sandbox = textutil.FirstLine(r.o.SandboxSummary())
	}
	if m := r.perm.Mode(); m != tool.ModeDefault {
		st.Mode = string(m)
	}
	if r.o.Jobs != nil {
		st.Jobs = r.o.Jobs.Running()
	}
	r.qmu.Lock()
	st.Queued, st.QueuedSends = r.queue.Text(), len(r.queue.Prompts) > 0
	r.qmu.Unlock()
	return st
}

// contextPercent is how full model's context window was at the last
// request, -1 when unknown.
func (r *REPL) contextPercent(model string) int {
	used, window := r.contextUse(model)
	if used <= 0 || window <= 0 {
		return -1
	}
	return int((used*100 + window/2) / window)
}

// contextUse is how full the context is, from one source for the footers
// and /context alike: the agent's estimate for the next request when it
// manages its context (right after /compact and a resume too), else the
// last request as the provider counted it.
func (r *REPL) contextUse(model string) (used, window int64) {
	if cm, ok := r.o.Agent.(ContextManager); ok {
		st := cm.ContextStats()
		return int64(st.Used), int64(st.Window)
	}
	if r.o.View != nil && r.o.ContextWindow != nil {
		return r.o.View.ContextTokens(), int64(r.o.ContextWindow(model))
	}
	return 0, 0
}

// shownByAgent reports whether the agent already emitted err as an event.
func (r *REPL) shownByAgent(err error) bool {
	return r.o.View != nil && r.o.View.Shown(err)
}

// Terminal is what a `!` command gets on a terminal: its size, the keys
// typed while it runs (raw: Ctrl+C, Ctrl+D reach it) and where its output goes.
type Terminal struct {
	Cols, Rows int
	In         io.Reader
	Out        io.Writer
}

// noter is the agent's queue of notes for the next turn (*agent.Runner).
type noter interface{ AddNote(text string) }

// shellNoteBytes bounds the output of a `!` command the next turn is given.
const shellNoteBytes = 16 << 10

// bang runs `!cmd` for the user (bash mode): on a terminal it gets the
// terminal (`!cat` reads the keys until Ctrl+D, `ls --color=auto` colours);
// the command, its exit code and its output go into the next turn's
// context, as Claude Code's bash mode does.
func (r *REPL) bang(ctx context.Context, cmd string) {
	if cmd == "" {
		r.println("Usage: !<command>   run a shell command yourself (for example: !git status).",
			"It gets the terminal; the command and its output are added to the next turn's context.")
		return
	}
	if r.o.Shell == nil {
		r.r.Error("shell commands are not available in this session")
		return
	}
	var res command.Result
	var err error
	var interrupted bool
	if r.keys != nil && r.o.ShellTerminal != nil {
		res, err = r.bangTerminal(ctx, cmd)
		interrupted = res.ExitCode == command.Interrupted
	} else {
		interrupted = r.cancellable(ctx, func(tctx context.Context) {
			res, err = r.o.Shell(tctx, cmd)
		})
		if err == nil {
			if out := strings.TrimRight(res.Stdout, "\n"); out != "" {
				r.println(out)
			}
			if e := strings.TrimRight(res.Stderr, "\n"); e != "" {
				r.println(e)
			}
		}
	}
	if err != nil {
		r.r.Error(fmt.Sprintf("!%s: %v", cmd, err))
		return
	}
	if n, ok := r.o.Agent.(noter); ok {
		out := res.Stdout
		if res.Stderr != "" {
			out += "\n" + res.Stderr
		}
		n.AddNote(agent.ShellNote(cmd, textutil.Sanitize(out), res.ExitCode, shellNoteBytes))
	}
	switch {
	case res.Blocked:
		r.r.Error("blocked by the sandbox: " + res.BlockedReason)
	case interrupted || res.ExitCode == command.Interrupted:
		r.r.Notice("interrupted (exit code 130)")
	default:
		r.r.Notice(fmt.Sprintf("exit code %d", res.ExitCode))
	}
}

// prompt is the input prompt; a mode other than default shows its name.
func (r *REPL) prompt() string {
	if m := r.perm.Mode(); m != tool.ModeDefault {
		return string(m) + " " + promptText
	}
	return promptText
}

// setMode switches the permission mode (the gate carries it out: the
// sandbox first, plan makes it read-only, then its answers).
func (r *REPL) setMode(m tool.Mode) error { return r.perm.SetMode(m) }

// modeHelp says what a mode does, in one line.
func modeHelp(m tool.Mode) string {
	switch m {
	case tool.ModePlan:
		return "plan: read-only; the model investigates and proposes a plan, /approve carries it out"
	case tool.ModeAcceptEdits:
		return "accept-edits: sandbox grants inside the project are given without asking"
	case tool.ModeAsk:
		return "ask: every write, edit and command that may change files asks first, except writes to the scratch list (the session's /tmp, /dev/null, settings.json permissions.scratch)"
	}
	return "default: sandboxed; you are asked only about escapes"
}

// cycleMode is Shift+Tab: the next mode. It returns what to tell the user.
func (r *REPL) cycleMode() string {
	if err := r.nextMode(); err != nil {
		return "mode unchanged: " + err.Error()
	}
	return "mode " + modeHelp(r.perm.Mode()) + " (Shift+Tab: next mode)"
}

// nextMode switches to the mode after the present one.
func (r *REPL) nextMode() error { return r.setMode(r.perm.Mode().Next()) }

// bangTerminal runs a `!` command on a terminal of its own: the editor's
// key modes are undone meanwhile (the command gets plain keys: Ctrl+C as
// 0x03), the keys typed go to it raw, and its output is shown as it comes.
func (r *REPL) bangTerminal(ctx context.Context, cmd string) (command.Result, error) {
	_, _ = io.WriteString(r.o.Out, r.keyModes[1])
	defer func() { _, _ = io.WriteString(r.o.Out, r.keyModes[0]) }()
	in := r.keys.forward()
	defer in.Close()
	w, h := r.size()
	return r.o.ShellTerminal(ctx, cmd, Terminal{Cols: w, Rows: h, In: in, Out: r.o.Out})
}
