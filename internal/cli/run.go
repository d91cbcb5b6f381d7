package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/headless"
	"github.com/synapse-agent/synapse/internal/mcp"
	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/skills"
	"github.com/synapse-agent/synapse/internal/textutil"
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
	inputFormat, permissionMode     string
	partial                         bool
	cont, allowClone, allowImport   bool
	fork                            bool
	allowPaths                      []string
	claude                          claudeFlags // Claude Code's headless flags
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
			"--output-format text streams the answer; json prints the result object\n" +
			"(result, session_id, usage, num_turns, total_cost_usd, …); stream-json prints\n" +
			"one JSON event per line in the usual agent-CLI shape: system/init first, then\n" +
			"assistant and user messages with content blocks, Synapse's own system events,\n" +
			"and a result event (docs/headless.md). --input-format stream-json reads user\n" +
			"messages from stdin, one JSON object a line, and runs one turn for each; it\n" +
			"also speaks the Claude Agent SDK's control protocol there.\n" +
			"Claude Code's headless flags are accepted too (synapse -p …, docs/headless.md).\n" +
			"Exit status: 0 done, 1 failed (provider error or a limit), 2 bad usage,\n" +
			"130 interrupted (Ctrl+C or SIGTERM).",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runTask(cmd, stdio, f, args) },
	}
	addRunFlags(cmd.Flags(), &f)
	return badUsageExits2(cmd)
}

// addRunFlags declares run's flags (also the root command's, which runs
// headless when given them) and Claude Code's headless flags.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringVar(&f.model, "model", "", "model to use (default: settings.json or SYNAPSE_MODEL)")
	fl.StringVar(&f.provider, "provider", "", "provider: anthropic, openai, gemini, bedrock or vertex (default: settings.json)")
	fl.StringVar(&f.format, "output-format", formatText, "output format: text, json or stream-json")
	fl.StringVar(&f.inputFormat, "input-format", formatText, "input format: text, or stream-json (user messages and the control protocol on stdin; needs --output-format stream-json)")
	fl.BoolVar(&f.partial, "include-partial-messages", false, "stream-json: also stream the model's response as stream_event lines")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of this project (the git repository you are in, else this directory)")
	fl.StringVarP(&f.resume, "resume", "r", "", "resume the session with this id (or unique id prefix)")
	fl.BoolVar(&f.fork, "fork-session", false, forkSessionHelp)
	fl.StringArrayVar(&f.allowPaths, "allow-path", nil, "also allow the sandbox to write this path (repeatable)")
	fl.StringVar(&f.permissionMode, "permission-mode", string(tool.ModeDefault), permissionModeHelp+"; the Agent SDK's acceptEdits, bypassPermissions, dontAsk and auto are read too")
	fl.BoolVar(&f.allowClone, "allow-clone", false, "let skill:import clone git repositories on the host (without your SSH agent, keys or credential helpers)")
	fl.BoolVar(&f.allowImport, "allow-skill-import", false, "let the model's skill:import install or replace skills in your skill store ($SYNAPSE_HOME/skills), which every project uses")
	f.claude.add(fl)
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
	streamIn := false
	switch f.inputFormat {
	case formatText:
	case formatStreamJSON:
		if f.format != formatStreamJSON {
			return exitCode(2, errors.New("--input-format stream-json needs --output-format stream-json"))
		}
		if len(args) > 0 {
			return exitCode(2, errors.New("--input-format stream-json reads the prompts from stdin: give no prompt argument"))
		}
		streamIn = true
	default:
		return exitCode(2, fmt.Errorf("unknown --input-format %q: use text or stream-json", f.inputFormat))
	}
	if f.partial && f.format != formatStreamJSON {
		return exitCode(2, errors.New("--include-partial-messages needs --output-format stream-json"))
	}
	cf := f.claude
	hostAsks := false
	switch cf.promptTool {
	case "":
	case "stdio":
		if !streamIn {
			return exitCode(2, errors.New("--permission-prompt-tool stdio needs --input-format stream-json (the questions travel on the control protocol)"))
		}
		hostAsks = true
	default:
		return exitCode(2, errPromptTool)
	}
	if cf.maxTurns < 0 {
		return exitCode(2, fmt.Errorf("--max-turns %d: give a positive number", cf.maxTurns))
	}
	resume, err := resumeID(f.cont, f.resume, f.fork)
	if err != nil {
		return err
	}
	modeName := f.permissionMode
	if cf.dangerouslySkip {
		modeName = "bypassPermissions"
	}
	hm, err := headless.ParseMode(modeName, hostAsks)
	if err != nil {
		return exitCode(2, err)
	}
	if hm.Note != "" {
		fmt.Fprintln(stdio.Err, "synapse: note: --permission-mode", hm.Note)
	}
	mode := hm.Mode
	allow, ignoredAllow := tool.ParseRules(cf.allowed)
	deny, ignoredDeny := tool.ParseRules(cf.disallowed)
	for _, n := range ignoredAllow {
		fmt.Fprintln(stdio.Err, "synapse: note: --allowedTools", textutil.Sanitize(n)+"; ignored")
	}
	for _, n := range ignoredDeny {
		fmt.Fprintln(stdio.Err, "synapse: note: --disallowedTools", textutil.Sanitize(n)+"; ignored")
	}
	extraMCP, sdkServers, err := mcpConfigs(cf.mcpConfig)
	if err != nil {
		return exitCode(2, err)
	}
	var prompt string
	if !streamIn {
		if prompt, err = readPrompt(pipedStdin(stdio.In), args); err != nil {
			return exitCode(2, err)
		}
	}
	a, cwd, err := newApp(stdio)
	if err != nil {
		return err
	}
	if resume, err = inProject(a, cwd, resume, nil); err != nil {
		return err
	}
	busy := forkBusy(a, resume, f.cont && !f.fork)

	// stdout carries the events and, with stream-json input, the control
	// protocol: whole lines, never interleaved.
	stdout := headless.NewSyncWriter(stdio.Out)
	if f.format != formatText {
		stdio.Out = stdout // the text view must still see the terminal it writes to
	}
	out := newRunOutput(stdio, f.format, f.partial, getenvOr(stdio.Getenv))
	var ctl *headless.Control
	turns := &turnCancel{}
	var asker tool.Asker // nil: no one to ask; the gate refuses what it would ask
	if streamIn {
		ctl = headless.NewControl(stdout, stdio.Err, headless.Handlers{Interrupt: turns.interrupt, CallFor: out.callFor, Denied: out.denied})
		ctl.SetAsking(hm.Ask)
		// The host's in-process MCP servers talk through the control
		// protocol (mcp_message): they are MCP servers like the others.
		for _, n := range sdkServers {
			extraMCP = append(extraMCP, mcp.ServerConfig{Name: n, Type: mcp.KindHost, File: "--mcp-config", Host: ctl})
		}
		if hostAsks {
			asker = ctl
		}
	}
	perm := tool.NewPermissions(asker, tool.ModeDefault, tool.ProjectRoot(cwd))
	perm.SetRules(allow, deny)
	g, err := a.NewAgent(cmd.Context(), app.AgentSetup{
		Provider:           f.provider,
		Model:              f.model,
		Cwd:                cwd,
		Persist:            true,
		ResumeID:           resume,
		Fork:               f.fork || busy != nil,
		AllowPaths:         append(slices.Clone(f.allowPaths), cf.addDirs...),
		OnEvent:            out.event,
		Warn:               out.warn,
		Extensions:         app.ExtensionOptions{ClientVersion: Version, Import: runImportPolicy(f.allowClone, f.allowImport), ExtraMCP: extraMCP},
		Approver:           perm,
		MaxTurns:           cf.maxTurns,
		SystemPrompt:       cf.systemPrompt,
		AppendSystemPrompt: cf.appendPrompt,
	})
	if err != nil {
		return exitCode(1, lockedHint(err))
	}
	if busy != nil {
		forkNotice(stdio.Err, busy, g.Runner.SessionID())
	}
	perm.SetSwitch(g.ModeSwitch())
	if err := perm.SetMode(mode); err != nil {
		_ = g.Close()
		return exitCode(1, fmt.Errorf("--permission-mode %s: %w", mode, err))
	}
	runner := g.Runner
	host := &sdkHost{g: g, perm: perm, out: out, ctl: ctl, hostAsks: hostAsks, sdkServers: sdkServers,
		startModel: runner.Model(), basePrompt: runner.SystemPromptText(), errw: stdio.Err}
	sessionID := runner.BeginSession()
	// system/init, then the start-up warnings. With stream-json input it
	// waits for the host's first line (host.begin): the host's initialize
	// may define sub-agents, which init lists.
	host.initEvent = func() {
		out.init(headless.InitEvent{SessionID: sessionID, Model: runner.Model(), Cwd: cwd, Tools: []string{headless.ToolName},
			MCPServers: host.mcpStatus(), PermissionMode: string(mode), SDKPermissionMode: headless.SDKName(mode),
			APIKeySource: apiKeySource(getenvOr(stdio.Getenv)), Skills: skillNames(g), Agents: taskTypes(g),
			ClaudeCodeVersion: Version, Sandbox: g.Sandbox.Enabled(), SynapseVersion: Version})
		for _, w := range slices.Concat(g.SettingsWarnings(), g.Sandbox.Warnings()) {
			out.warn(errors.New(w))
		}
	}
	if !streamIn {
		host.begin()
	}
	// The extensions' report (MCP tool count, broken servers or skills) is
	// progress, not the answer: stderr in every format.
	for _, n := range append(g.SettingsNotices(), g.Extensions.Notices()...) {
		fmt.Fprintln(stdio.Err, "synapse:", textutil.Sanitize(n))
	}
	var runErr error
	if streamIn {
		ctl.SetHandlers(host.handlers(turns))
		runErr = runControlled(cmd.Context(), stdio.In, ctl, turns, perm, runner, out)
	} else {
		_, prompt = perm.Prompt(prompt)
		runErr = runOnce(cmd.Context(), runner, out, prompt)
	}
	if cerr := g.Close(); cerr != nil && runErr == nil {
		fmt.Fprintln(stdio.Err, "synapse: warning:", textutil.Sanitize(cerr.Error()))
	}
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, agent.ErrInterrupted):
		return exitCode(130, errors.New("interrupted"))
	default:
		return exitCode(1, runErr)
	}
}

// runOnce runs one prompt and writes its outcome; the run's cost is what the
// session's priced cost grew by.
func runOnce(ctx context.Context, runner *agent.Runner, out *runOutput, prompt string) error {
	before := runner.SessionUsage()
	start := time.Now()
	out.startTurn()
	res, runErr := runner.Run(ctx, prompt)
	sum := headless.Summary{Result: res, Err: runErr, Took: time.Since(start)}
	if u := runner.SessionUsage(); u != nil && u.Priced {
		sum.Priced, sum.Cost = true, u.CostUSD
		if before != nil {
			sum.Cost -= before.CostUSD
		}
	}
	out.finish(sum)
	return runErr
}

// turnCancel holds the running turn's cancel, for the host's interrupt.
type turnCancel struct {
	mu          sync.Mutex
	cancel      context.CancelFunc
	interrupted bool
}

func (t *turnCancel) start(ctx context.Context) context.Context {
	tctx, cancel := context.WithCancel(ctx)
	t.mu.Lock()
	t.cancel, t.interrupted = cancel, false
	t.mu.Unlock()
	return tctx
}

// end forgets the turn and says whether the host interrupted it.
func (t *turnCancel) end() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil {
		t.cancel()
	}
	t.cancel = nil
	return t.interrupted
}

func (t *turnCancel) interrupt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cancel != nil {
		t.interrupted = true
		t.cancel()
	}
}

// runControlled runs one turn per user message read from stdin, answering
// the control protocol as it goes (Control reads stdin on its own
// goroutine, so an interrupt or a permission answer arrives while a turn
// runs), until stdin ends or the process is interrupted. A turn the host
// interrupted is not a failure of the run; otherwise the last turn's error
// decides the exit status, unless the host spoke the control protocol.
func runControlled(ctx context.Context, in io.Reader, ctl *headless.Control, turns *turnCancel, perm *tool.Permissions, runner *agent.Runner, out *runOutput) error {
	if in == nil {
		return exitCode(2, errors.New("--input-format stream-json needs stdin"))
	}
	go ctl.Serve(in)
	var last error
	for {
		text, ok, err := ctl.Next(ctx)
		if err != nil {
			return err
		}
		if !ok {
			if ctl.Initialized() && ctx.Err() == nil {
				// A host of the control protocol (the Agent SDK) has each
				// turn's outcome in its result; a failed turn is not a
				// failure of the process, which it would report as a crash.
				return nil
			}
			return last
		}
		_, prompt := perm.Prompt(text)
		last = runOnce(turns.start(ctx), runner, out, prompt)
		if turns.end() && ctx.Err() == nil {
			last = nil // the host stopped this turn; the session goes on
		}
		if ctx.Err() != nil {
			return last
		}
	}
}

// mcpStatuses lists the MCP servers for the init event.
func mcpStatuses(g *app.Agent) []headless.MCPStatus {
	out := []headless.MCPStatus{}
	if g.Extensions == nil || g.Extensions.MCP == nil {
		return out
	}
	tools := map[string][]headless.MCPTool{}
	for _, t := range g.Extensions.MCP.Tools() {
		mt := headless.MCPTool{Name: t.Name, Description: t.Description}
		if t.ReadOnly {
			mt.Annotations = &headless.MCPAnnotations{ReadOnly: true}
		}
		tools[t.Server] = append(tools[t.Server], mt)
	}
	for _, st := range g.Extensions.MCP.Status() {
		row := headless.MCPStatus{Name: st.Name, Status: "connected", Tools: tools[st.Name]}
		switch {
		case st.Connected:
		case st.Err != "":
			row.Status, row.Error = "failed", st.Err
		default:
			row.Status = "pending"
		}
		if st.Kind == mcp.KindHost {
			row.Source = "sdk"
		}
		out = append(out, row)
	}
	return out
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
	sj     *headless.Stream // json and stream-json
	view   *view.View       // text format: the same view of events as the REPL's
}

func newRunOutput(stdio IO, format string, partial bool, getenv func(string) string) *runOutput {
	o := &runOutput{format: format, errw: stdio.Err}
	switch format {
	case formatJSON, formatStreamJSON:
		o.sj = headless.New(stdio.Out, format == formatStreamJSON, partial)
	default:
		color := getenv("NO_COLOR") == ""
		if isTTY(stdio.Out) {
			// One terminal: the renderer owns it, text included.
			w, h := termSize(stdio.Out)
			o.view = view.New(render.New(render.Options{Out: stdio.Out, TTY: true, Color: color, Width: w, Height: h, Animate: liveInterval(true), Size: liveSize(stdio.Out, true)}))
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

// init writes the opening system/init event (stream-json only).
func (o *runOutput) init(ev headless.InitEvent) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sj != nil {
		o.sj.Init(ev)
	}
}

func (o *runOutput) event(e agent.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.format {
	case formatStreamJSON:
		o.sj.Event(e)
	case formatJSON:
		o.sj.Event(e) // tracks the run (denials); writes nothing
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
func (o *runOutput) finish(r headless.Summary) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch o.format {
	case formatJSON, formatStreamJSON:
		o.sj.Finish(r)
	default:
		o.view.Renderer().EndTurn()
		o.view.Finish(errors.Is(r.Err, agent.ErrInterrupted))
	}
}

// callFor is the running call of command (a permission question's tool_use_id).
func (o *runOutput) callFor(command string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sj == nil {
		return ""
	}
	return o.sj.CallFor(command)
}

// denied records a call the host refused.
func (o *runOutput) denied(id, command string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sj != nil {
		o.sj.Deny(id, command)
	}
}

// setModel names the model in later messages.
func (o *runOutput) setModel(m string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sj != nil {
		o.sj.SetModel(m)
	}
}

// startTurn shows the working indicator (text format on a terminal).
func (o *runOutput) startTurn() {
	if o.view != nil {
		o.view.Renderer().StartTurn()
	}
}

// runImportPolicy: with no one to ask, a clone the model asks for happens
// only when the user passed --allow-clone, an install into the skill store
// only with --allow-skill-import.
func runImportPolicy(allowClone, allowImport bool) skills.ImportPolicy {
	var p skills.ImportPolicy
	if allowClone {
		p.ApproveClone = func(context.Context, string) bool { return true }
	}
	if allowImport {
		p.ApproveInstall = func(context.Context, skills.InstallRequest) bool { return true }
	}
	return p
}
