package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/todo"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/view"
)

// Output formats of `synapse run`.
const (
	formatText       = "text"
	formatJSON       = "json"
	formatStreamJSON = "stream-json"
)

type runFlags struct {
	model, provider, format, resume string
	cont, allowClone                bool
	allowPaths                      []string
}

func newRunCmd(stdio IO) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   `run [flags] ["<prompt>" | -]`,
		Short: "Run one task to completion without a REPL (no prompt: reads stdin)",
		Long: "Run one task to completion without a REPL and exit.\n\n" +
			"The prompt is the arguments joined by spaces. With no argument (or \"-\")\n" +
			"and stdin not a terminal, stdin is the prompt (echo \"fix the test\" | synapse run).\n" +
			"With a prompt argument and piped stdin, stdin is appended to the prompt as\n" +
			"context (git diff | synapse run \"review this\").\n" +
			"--output-format text streams the answer; json prints one result object\n" +
			"(text, sessionId, usage, turns, stopReason); stream-json prints one JSON\n" +
			"event per line. Exit status: 0 done, 1 failed (provider error or a limit),\n" +
			"2 bad usage, 130 interrupted (Ctrl+C or SIGTERM).",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runTask(cmd, stdio, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model to use (default: settings.json or SYNAPSE_MODEL)")
	fl.StringVar(&f.provider, "provider", "", "provider: anthropic or openai (default: settings.json)")
	fl.StringVar(&f.format, "output-format", formatText, "output format: text, json or stream-json")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recently updated session")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id (or unique id prefix)")
	fl.StringArrayVar(&f.allowPaths, "allow-path", nil, "also allow the sandbox to write this path (repeatable)")
	fl.BoolVar(&f.allowClone, "allow-clone", false, "let skill:import clone git repositories on the host (without your SSH agent, keys or credential helpers)")
	return badUsageExits2(cmd)
}

// badUsageExits2 makes cmd's flag and argument errors exit with status 2
// (bad usage, as the run contract says), naming the help to read.
func badUsageExits2(cmd *cobra.Command) *cobra.Command {
	usage := func(c *cobra.Command, err error) error {
		return exitCode(2, fmt.Errorf("%w; see %s --help", err, c.CommandPath()))
	}
	cmd.SetFlagErrorFunc(usage)
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return usage(c, err)
			}
			return nil
		}
	}
	return cmd
}

func runTask(cmd *cobra.Command, stdio IO, f runFlags, args []string) error {
	switch f.format {
	case formatText, formatJSON, formatStreamJSON:
	default:
		return exitCode(2, fmt.Errorf("unknown --output-format %q: use text, json or stream-json", f.format))
	}
	resume, err := resumeID(f.cont, f.resume)
	if err != nil {
		return err
	}
	prompt, err := readPrompt(pipedStdin(stdio.In), args)
	if err != nil {
		return exitCode(2, err)
	}
	a, cwd, err := newApp(stdio)
	if err != nil {
		return err
	}

	out := newRunOutput(stdio, f.format, getenvOr(stdio.Getenv))
	g, err := a.NewAgent(cmd.Context(), app.AgentSetup{
		Provider:   f.provider,
		Model:      f.model,
		Cwd:        cwd,
		Persist:    true,
		ResumeID:   resume,
		AllowPaths: f.allowPaths,
		OnEvent:    out.event,
		Warn:       out.warn,
		Extensions: app.ExtensionOptions{ClientVersion: Version, Clone: runClonePolicy(f.allowClone)},
	})
	if err != nil {
		return exitCode(1, err)
	}
	for _, w := range slices.Concat(g.SettingsWarnings(), g.Sandbox.Warnings()) {
		out.warn(errors.New(w))
	}
	// The extensions' report (MCP tool count, broken servers or skills) is
	// progress, not the answer: stderr in every format.
	for _, n := range append(g.SettingsNotices(), g.Extensions.Notices()...) {
		fmt.Fprintln(stdio.Err, "synapse:", textutil.Sanitize(n))
	}
	runner := g.Runner
	start := time.Now()
	out.startTurn()
	res, runErr := runner.Run(cmd.Context(), prompt)
	if cerr := g.Close(); cerr != nil && runErr == nil {
		out.warn(cerr)
	}
	out.finish(runner, res, runErr, time.Since(start))
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, agent.ErrInterrupted):
		return exitCode(130, errors.New("interrupted"))
	default:
		return exitCode(1, runErr)
	}
}

// readPrompt builds the prompt: the arguments joined by spaces, or stdin
// when the only argument is "-" or there is none; with arguments, piped
// stdin (when there is any) is appended to them as context. in is nil when
// stdin is a terminal or nothing (see pipedStdin).
func readPrompt(in io.Reader, args []string) (string, error) {
	dash := len(args) == 1 && args[0] == "-"
	p := strings.TrimSpace(strings.Join(args, " "))
	if dash || p == "" {
		if in == nil {
			if dash {
				return "", errors.New(`no stdin to read the prompt from: pipe the prompt in (echo "<prompt>" | synapse run) or give it as an argument`)
			}
			return "", errors.New(`no prompt: use synapse run "<prompt>", or pipe it in (echo "<prompt>" | synapse run)`)
		}
		data, err := io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("read the prompt from stdin: %w", err)
		}
		if strings.TrimSpace(string(data)) == "" {
			return "", errors.New(`no prompt: stdin was empty; pipe the prompt in (echo "<prompt>" | synapse run) or give it as an argument`)
		}
		return strings.TrimSpace(string(data)), nil
	}
	if in == nil {
		return p, nil
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return "", fmt.Errorf("read the context from stdin: %w", err)
	}
	if ctx := strings.TrimSpace(string(data)); ctx != "" {
		p += "\n\n" + ctx
	}
	return p, nil
}

// pipedStdin is in when it may carry a prompt: a pipe or a file, not a
// terminal (a person, who would be left waiting) and not a character
// device such as /dev/null. Readers that are not files (tests) count as piped.
func pipedStdin(in io.Reader) io.Reader {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	if f == nil || term.IsTerminal(int(f.Fd())) {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return f
}

func getenvOr(g func(string) string) func(string) string {
	if g == nil {
		return os.Getenv
	}
	return g
}

// runOutput renders events in one of the three formats. Events arrive
// serialised from the runner; the mutex also orders the final result after them.
type runOutput struct {
	mu     sync.Mutex
	format string
	errw   io.Writer
	enc    *json.Encoder
	view   *view.View // text format: the same view of events as the REPL's
}

func newRunOutput(stdio IO, format string, getenv func(string) string) *runOutput {
	o := &runOutput{format: format, errw: stdio.Err}
	switch format {
	case formatJSON, formatStreamJSON:
		o.enc = json.NewEncoder(stdio.Out)
		o.enc.SetEscapeHTML(false)
	default:
		color := getenv("NO_COLOR") == ""
		if isTTY(stdio.Out) {
			// One terminal: the renderer owns it, text included.
			w, h := termSize(stdio.Out)
			o.view = view.New(render.New(render.Options{Out: stdio.Out, TTY: true, Color: color, Width: w, Height: h, Animate: liveInterval(true)}))
		} else {
			// Piped: stdout carries only the answer; progress goes to stderr.
			tty := isTTY(stdio.Err)
			w, h := termSize(stdio.Err)
			o.view = view.NewSplit(render.New(render.Options{Out: stdio.Err, TTY: tty, Color: color && tty, Width: w, Height: h, Animate: liveInterval(tty)}), stdio.Out)
		}
	}
	return o
}

func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func termSize(w io.Writer) (int, int) {
	if f, ok := w.(*os.File); ok {
		if cw, ch, err := term.GetSize(int(f.Fd())); err == nil {
			return cw, ch
		}
	}
	return 0, 0
}

func (o *runOutput) warn(err error) { o.event(agent.Event{Kind: agent.Warning, Err: err}) }

func (o *runOutput) event(e agent.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.format {
	case formatStreamJSON:
		if e.Kind == agent.ToolOutput {
			return // live output is for a person watching; tool_end has it all
		}
		_ = o.enc.Encode(eventJSON(e))
	case formatJSON:
		if e.Kind == agent.Warning {
			fmt.Fprintln(o.errw, "synapse: warning:", textutil.Sanitize(e.Err.Error()))
		}
	default:
		// The run's error is printed once, by Main, after the output.
		if e.Kind != agent.Error {
			o.view.Handle(e)
		}
	}
}

// finish writes the run's outcome. Errors themselves are printed by Main.
func (o *runOutput) finish(runner *agent.Runner, res agent.Result, runErr error, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.format {
	case formatJSON, formatStreamJSON:
		_ = o.enc.Encode(resultJSON(runner, res, runErr, took))
	default:
		o.view.Renderer().EndTurn()
		o.view.Finish(errors.Is(runErr, agent.ErrInterrupted))
	}
}

// startTurn shows the working indicator (text format on a terminal).
func (o *runOutput) startTurn() {
	if o.view != nil {
		o.view.Renderer().StartTurn()
	}
}

type resultOut struct {
	Type       string    `json:"type"`
	Text       string    `json:"text"`
	SessionID  string    `json:"sessionId,omitempty"`
	Usage      llm.Usage `json:"usage"`
	Turns      int       `json:"turns"`
	StopReason string    `json:"stopReason"`
	IsError    bool      `json:"isError"`
	Error      string    `json:"error,omitempty"`
	DurationMs int64     `json:"durationMs"`
	CostUSD    *float64  `json:"sessionCostUSD,omitempty"`
	// Hooks are the stop hooks' outputs (also streamed as a hook_output event).
	Hooks []hooks.Output `json:"hooks,omitempty"`
}

func resultJSON(runner *agent.Runner, res agent.Result, runErr error, took time.Duration) resultOut {
	r := resultOut{Type: "result", Text: res.Text, SessionID: runner.SessionID(), Usage: res.Usage, Turns: res.Turns,
		StopReason: res.StopReason, DurationMs: took.Milliseconds(), Hooks: res.Hooks}
	if runErr != nil {
		r.IsError, r.Error = true, runErr.Error()
	}
	if u := runner.SessionUsage(); u != nil && u.Priced {
		c := u.CostUSD
		r.CostUSD = &c
	}
	return r
}

type eventOut struct {
	Type            string         `json:"type"`
	Text            string         `json:"text,omitempty"`
	CallID          string         `json:"callId,omitempty"`
	Command         string         `json:"command,omitempty"`
	Output          *string        `json:"output,omitempty"`
	IsError         *bool          `json:"isError,omitempty"`
	Message         string         `json:"message,omitempty"`
	Extras          tool.Facts     `json:"extras,omitzero"`
	DurationMs      *int64         `json:"durationMs,omitempty"`
	Usage           *llm.Usage     `json:"usage,omitempty"`
	Todos           *[]todo.Item   `json:"todos,omitempty"`
	TaskID          string         `json:"taskId,omitempty"`
	TaskType        string         `json:"taskType,omitempty"`
	TaskDescription string         `json:"taskDescription,omitempty"`
	ToolCount       int            `json:"toolCount,omitempty"`
	Error           string         `json:"error,omitempty"`
	Hooks           []hooks.Output `json:"hooks,omitempty"`
}

func eventJSON(e agent.Event) eventOut {
	o := eventOut{Type: e.Kind.String(), Text: e.Text, CallID: e.CallID, Command: e.Command, Usage: e.Usage,
		TaskID: e.TaskID, TaskType: e.TaskType, TaskDescription: e.TaskDescription, ToolCount: e.ToolCount, Hooks: e.Hooks}
	if e.Result != nil {
		out, isErr := e.Result.Output, e.Result.IsError
		o.Output, o.IsError, o.Message, o.Extras = &out, &isErr, e.Result.Message, e.Result.Facts
	}
	if e.Kind == agent.ToolEnd || e.Kind == agent.TaskToolEnd || e.Kind == agent.TaskEnd {
		ms := e.Duration.Milliseconds()
		o.DurationMs = &ms
	}
	if e.Kind == agent.TodoChange {
		items := append([]todo.Item{}, e.Todos...)
		o.Todos = &items
	}
	if e.Err != nil {
		o.Error = e.Err.Error()
	}
	return o
}

// runClonePolicy: with no one to ask, a clone the model asks for happens
// only when the user passed --allow-clone.
func runClonePolicy(allow bool) skills.ClonePolicy {
	if !allow {
		return skills.ClonePolicy{}
	}
	return skills.ClonePolicy{Approve: func(context.Context, string) bool { return true }}
}
