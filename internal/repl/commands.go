package repl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

type slashCommand struct {
	name, args, help string
	run              func(r *REPL, ctx context.Context, args string) error
	aliases          []string
}

var slashCommands []slashCommand

func init() {
	slashCommands = []slashCommand{
		{"help", "", "show this list (also /h, /?)", (*REPL).cmdHelp, []string{"h", "?"}},
		{"exit", "", "leave Synapse (also /quit, /q, Ctrl+D)", func(*REPL, context.Context, string) error { return errExit }, nil},
		{"quit", "", "leave Synapse", func(*REPL, context.Context, string) error { return errExit }, []string{"q"}},
		{"clear", "", "start a new conversation (the todo list is cleared)", (*REPL).cmdClear, nil},
		{"cost", "", "tokens in/out, cache reads/writes and hit rate, cost when priced", (*REPL).cmdCost, nil},
		{"context", "", "context used against the model's window, thresholds, messages, tool calls, offloaded results", (*REPL).cmdContext, nil},
		{"compact", "[instructions]", "summarise the older conversation now to free context (instructions steer the summary)", (*REPL).cmdCompact, nil},
		{"model", "[name]", "show the model, or switch to another for this session", (*REPL).cmdModel, nil},
		{"tools", "", "what the agent can call, by layer", (*REPL).cmdTools, nil},
		{"resume", "[--latest | --all | id]", "continue a saved session of this project (pick by number or id prefix)", (*REPL).cmdResume, nil},
		{"sandbox", "", "what the sandbox enforces, and this session's grants", (*REPL).cmdSandbox, nil},
		{"mode", "[default|accept-edits|plan|ask]", "show or switch the permission mode (Shift+Tab cycles)", (*REPL).cmdMode, nil},
		{"approve", "", "in plan mode: approve the plan, switch to default mode and carry it out", (*REPL).cmdApprove, nil},
		{"skills", "", "list the installed skills", (*REPL).cmdSkills, nil},
		{"jobs", "", "list the background jobs (job:start, or Ctrl+B on a running command)", (*REPL).cmdJobs, nil},
		{"skill", "enhance [--on|--off]", "skill auto-enhance after worthwhile turns: status, or switch it (saved)", (*REPL).cmdSkill, nil},
		{"skill:<command>", "…", "run a skill command yourself: /skill:info <name>, /skill:rollback <name> [n], /skill:import <dir>, …", nil, nil},
	}
}

// findCommand is the command called name or one of its aliases, in any
// case (/HELP is /help).
func findCommand(name string) (slashCommand, bool) {
	name = strings.ToLower(name)
	for _, c := range slashCommands {
		if c.run != nil && (c.name == name || slices.Contains(c.aliases, name)) {
			return c, true
		}
	}
	return slashCommand{}, false
}

// commandNames are the names /help lists, for suggestions and completion.
func commandNames() []string {
	var names []string
	for _, c := range slashCommands {
		if c.run != nil {
			names = append(names, c.name)
		}
	}
	return names
}

func (r *REPL) slash(ctx context.Context, line string) error {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	args = strings.TrimSpace(args)
	if strings.HasPrefix(strings.ToLower(name), "skill:") {
		return r.runSkillCommand(ctx, "skill:"+strings.TrimPrefix(line, "/")[len("skill:"):])
	}
	if c, ok := findCommand(name); ok {
		return c.run(r, ctx, args)
	}
	msg := fmt.Sprintf("unknown command /%s: type /help for the list of commands", textutil.Sanitize(name))
	if near := closest(name, commandNames()); near != "" {
		msg = fmt.Sprintf("unknown command /%s: did you mean /%s? Type /help for the list of commands", textutil.Sanitize(name), near)
	}
	r.r.Error(msg)
	return nil
}

func (r *REPL) cmdJobs(context.Context, string) error {
	if r.o.Jobs == nil {
		r.println("No background jobs in this session.")
		return nil
	}
	r.println(strings.Split(strings.TrimRight(textutil.Sanitize(r.o.Jobs.Text()), "\n"), "\n")...)
	return nil
}

func (r *REPL) cmdHelp(context.Context, string) error {
	lines := []string{"Commands:"}
	for _, c := range slashCommands {
		lines = append(lines, fmt.Sprintf("  %-24s %s", "/"+strings.TrimSpace(c.name+" "+c.args), c.help))
	}
	lines = append(lines,
		fmt.Sprintf("  %-24s %s", "!<command>", "bash mode: run a command yourself on the terminal; it and its output go into the next turn's context"),
		"Input: Shift+Enter, Alt+Enter or Ctrl+J (or \\ at the end) starts a new line; a paste is one prompt,",
		"  a long one shown as [Pasted text +N lines]; Up brings whole prompts back; Tab completes /commands and paths;",
		"  Ctrl+R finds an earlier prompt containing what you typed (again: older); @path names a file for the model to read.",
		"  Under tmux, Shift+Enter needs `set -g extended-keys on` in ~/.tmux.conf; Alt+Enter and Ctrl+J always work.",
		"Shift+Tab (or /mode) cycles the permission mode: default, accept-edits, plan, ask.",
		"Keys: Ctrl+C or Esc cancels a running turn (Ctrl+C clears the line; twice, or Ctrl+D, exits).",
		"Ctrl+B during a running shell command moves it to the background as a job; the model is told its id (/jobs).",
		"Ctrl+O at the prompt shows what the last turn folded, whole (thinking, long tool output, diffs); during a turn it",
		"  switches verbose output: thinking streams whole and tool output is shown whole, until pressed again.",
		"While a turn runs, what you type is queued and sent when it ends (Esc clears the queue); /exit leaves at once.")
	r.println(lines...)
	return nil
}

func (r *REPL) cmdClear(context.Context, string) error {
	r.o.Agent.Reset()
	r.resumedTurn = nil
	if r.o.View != nil {
		r.o.View.Reset()
	}
	r.r.ClearScreen() // a TTY only
	r.println("Started a new conversation.")
	return nil
}

func (r *REPL) cmdCost(context.Context, string) error {
	u := r.o.Agent.SessionUsage()
	if u == nil {
		// Nothing sent yet: the same figures, all zero, not a different shape.
		u = &session.Usage{Priced: true}
	}
	// Input counts every prompt token the model read, cached or not (the
	// providers report the cache apart); the cache line says how many.
	in := u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens
	lines := []string{
		fmt.Sprintf("Tokens: %s in, %s out", count(in), count(u.OutputTokens)),
		fmt.Sprintf("Cache: %s read, %s written, hit rate %s", count(u.CacheReadTokens), count(u.CacheCreationTokens),
			hitRate(u.CacheReadTokens, u.InputTokens+u.CacheReadTokens+u.CacheCreationTokens)),
		fmt.Sprintf("Requests: %d", u.RoundCount),
	}
	switch {
	case u.Priced && u.UnpricedRounds > 0:
		lines = append(lines, fmt.Sprintf("Cost: $%.4f (%d requests had no price; add the model to pricing.json)", u.CostUSD, u.UnpricedRounds))
	case u.Priced && u.CostUSD == 0:
		lines = append(lines, "Cost: $0.00")
	case u.Priced:
		lines = append(lines, fmt.Sprintf("Cost: $%.4f", u.CostUSD))
	default:
		lines = append(lines, "Cost: not priced (add the model to $SYNAPSE_HOME/pricing.json)")
	}
	r.println(lines...)
	return nil
}

func hitRate(read, total int64) string {
	if total == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", float64(read)*100/float64(total))
}

// count writes a token count with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

func (r *REPL) cmdContext(ctx context.Context, args string) error {
	cm, ok := r.o.Agent.(ContextManager)
	if !ok {
		return r.cmdContextLastRequest(ctx, args)
	}
	st := cm.ContextStats()
	model := r.o.Agent.Model()
	pct := func(n int) float64 { return float64(n) * 100 / float64(max(st.Window, 1)) }
	lines := []string{
		fmt.Sprintf("Context: %s of %s tokens (%d%%) for %s, estimated for the next request",
			count(int64(st.Used)), count(int64(st.Window)), max(r.contextPercent(model), 0), model),
		contextBar(st.Used, st.Window, st.OffloadAt, st.CompactAt, 40),
		fmt.Sprintf("Thresholds: | offload large older results at %s (%.0f%%), ! compact at %s (%.0f%%)",
			count(int64(st.OffloadAt)), pct(st.OffloadAt), count(int64(st.CompactAt)), pct(st.CompactAt)),
		fmt.Sprintf("Messages: %d · tool calls: %d · offloaded results: %d · compactions: %d",
			st.Messages, st.ToolCalls, st.Offloaded, st.Compactions),
	}
	if r.o.View != nil {
		if used := r.o.View.ContextTokens(); used > 0 {
			lines = append(lines, fmt.Sprintf("Last request, as the provider counted it: %s tokens", count(used)))
		}
	}
	if st.Offloaded > 0 && st.OffloadDir != "" {
		lines = append(lines, "Offloaded results are in "+st.OffloadDir)
	}
	r.println(lines...)
	return nil
}

// contextBar draws used of window in width cells, with the offload (|)
// and compaction (!) thresholds marked.
func contextBar(used, window, offload, compact, width int) string {
	if window <= 0 {
		return ""
	}
	cell := func(n int) int { return min(width, max(0, n*width/window)) }
	fill := cell(used)
	b := make([]rune, width)
	for i := range b {
		b[i] = '░'
		if i < fill {
			b[i] = '█'
		}
	}
	if i := cell(offload); i < width {
		b[i] = '|'
	}
	if i := cell(compact); i < width {
		b[i] = '!'
	}
	over := ""
	if used > window {
		over = " over the window"
	}
	return "[" + string(b) + "]" + over
}

// ContextManager is the part of the agent behind /context and /compact
// (*agent.Runner).
type ContextManager interface {
	ContextStats() agent.ContextStats
	Compact(ctx context.Context, instructions string) (agent.CompactResult, error)
}

const nothingToCompact = "Nothing to compact yet: the conversation is no longer than the recent messages kept as they are."

func (r *REPL) cmdCompact(ctx context.Context, args string) error {
	cm, ok := r.o.Agent.(ContextManager)
	if !ok {
		r.r.Error("this agent cannot compact its context")
		return nil
	}
	if !cm.ContextStats().Compactable { // say so without announcing a request that is not made
		r.println(nothingToCompact)
		return nil
	}
	r.println("Compacting: one model request writes the summary… (Ctrl+C cancels)")
	var res agent.CompactResult
	var err error
	interrupted := r.cancellable(ctx, func(ctx context.Context) { res, err = cm.Compact(ctx, args) })
	if interrupted {
		r.r.Notice("Compaction cancelled; the history is unchanged.")
		return nil
	}
	if errors.Is(err, agent.ErrNothingToCompact) { // not a failure: there is nothing old enough yet
		r.println(nothingToCompact)
		return nil
	}
	if err != nil {
		r.r.Error("compaction failed, the history is unchanged: " + err.Error())
		return nil
	}
	lines := []string{fmt.Sprintf("Compacted: %s → %s tokens (%d messages summarised); offload files removed: %d",
		count(int64(res.Before)), count(int64(res.After)), res.Summarised, res.OffloadRemoved)}
	if res.Archive != "" {
		lines = append(lines, "The history before compaction is kept in "+res.Archive)
	}
	if r.o.View != nil {
		r.o.View.Reset() // the last request's size no longer describes the history
	}
	r.println(lines...)
	return nil
}

// cmdContextLastRequest is /context for an agent without a context manager.
func (r *REPL) cmdContextLastRequest(context.Context, string) error {
	hist := r.o.Agent.History()
	calls := 0
	for _, m := range hist {
		calls += len(m.ToolCalls)
	}
	var used int64
	if r.o.View != nil {
		used = r.o.View.ContextTokens()
	}
	model := r.o.Agent.Model()
	window := 0
	if r.o.ContextWindow != nil {
		window = r.o.ContextWindow(model)
	}
	ctxLine := fmt.Sprintf("Context: %s tokens (last request)", count(used))
	if window > 0 {
		ctxLine = fmt.Sprintf("Context: %s of %s tokens (%d%%) for %s", count(used), count(int64(window)),
			max(r.contextPercent(model), 0), model)
	}
	switch {
	case used == 0 && len(hist) == 0:
		ctxLine += "; no request in this conversation yet"
	case used == 0:
		// A resumed conversation: its size is known once a request reports it.
		ctxLine += "; measured by the next request"
	}
	r.println(ctxLine, fmt.Sprintf("Messages: %d · tool calls: %d", len(hist), calls))
	return nil
}

func (r *REPL) cmdModel(_ context.Context, args string) error {
	if args == "" {
		r.println("Model: " + r.o.Agent.Model())
		return nil
	}
	if r.o.SwitchModel != nil {
		if err := r.o.SwitchModel(args); err != nil {
			r.println("Model unchanged (" + r.o.Agent.Model() + "): " + err.Error())
			return nil
		}
	} else {
		r.o.Agent.SetModel(args)
	}
	r.println("Model for this session: " + args)
	return nil
}

func (r *REPL) cmdTools(context.Context, string) error {
	if r.o.ToolsText == nil {
		r.println("The agent has one tool, Bash(command, restart); run `command:search <words>` through it to find commands.")
		return nil
	}
	r.println(strings.TrimRight(r.o.ToolsText(), "\n"))
	return nil
}

func (r *REPL) cmdSandbox(context.Context, string) error {
	status := "unknown"
	if r.o.SandboxStatus != nil {
		status = strings.TrimRight(r.o.SandboxStatus(), "\n")
	}
	lines := []string{"Sandbox: " + status}
	grants := r.perm.Grants()
	if len(grants) == 0 {
		lines = append(lines, "Session grants: none")
	} else {
		lines = append(lines, "Session grants:")
		for _, g := range grants {
			lines = append(lines, "  "+g)
		}
	}
	r.println(lines...)
	return nil
}

// project names the project sessions are matched on (the repository the
// REPL runs in, not its directory), cleaned: a cloned repository's name is
// outside text.
func (r *REPL) project() string { return textutil.Sanitize(tool.ProjectRoot(r.o.Cwd)) }

// maxResumeChoices is how many recent sessions /resume offers.
const maxResumeChoices = 10

// resumeChoices are the saved sessions /resume offers, most recent first:
// this project's (all of them with all), never the current one.
func (r *REPL) resumeChoices(all bool) ([]session.Entry, error) {
	entries, err := r.o.Sessions.List()
	if err != nil {
		return nil, err
	}
	current := r.o.Agent.SessionID()
	var out []session.Entry
	for _, e := range entries {
		if e.ID == current || (!all && r.o.Cwd != "" && !e.InProject(r.o.Cwd)) {
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// resumeUsage is the answer to an argument /resume does not take.
const resumeUsage = "/resume takes --latest (this project's most recent other session), --all (every project's sessions) or a session id or id prefix"

func (r *REPL) cmdResume(_ context.Context, args string) error {
	if r.o.Sessions == nil {
		r.r.Error("sessions are not enabled, so there is nothing to resume")
		return nil
	}
	var all, latest bool
	id := ""
	for _, f := range strings.Fields(args) {
		switch {
		case f == "--all" || f == "-a":
			all = true
		case f == "--latest" || f == "latest":
			latest = true
		case strings.HasPrefix(f, "-"):
			msg := fmt.Sprintf("unknown option %s: %s", f, resumeUsage)
			if near := closest(strings.TrimLeft(f, "-"), []string{"latest", "all"}); near != "" {
				msg = fmt.Sprintf("unknown option %s: did you mean --%s? %s", f, near, resumeUsage)
			}
			r.r.Error(msg)
			return nil
		case id != "":
			r.r.Error("give one session: " + resumeUsage)
			return nil
		default:
			id = f
		}
	}
	if id == "" {
		choices, err := r.resumeChoices(all)
		if err != nil {
			r.r.Error("listing sessions: " + err.Error())
			return nil
		}
		switch {
		case len(choices) == 0 && all:
			r.println("No saved sessions to resume.")
			return nil
		case len(choices) == 0:
			r.println("No other saved session in project " + r.project() + "; /resume --all lists every project's sessions.")
			return nil
		case latest:
			// The most recent one with something to resume: a session
			// whose history file is gone would come back empty.
			for _, e := range choices {
				if !e.Empty() {
					id = e.ID
					break
				}
			}
			if id == "" {
				r.println("No other saved session has a history to resume; /resume lists them all.")
				return nil
			}
		default:
			if id = r.pickSession(choices[:min(len(choices), maxResumeChoices)], all); id == "" {
				return nil
			}
		}
	}
	if err := r.o.Agent.Resume(id); err != nil {
		var locked *session.LockedError
		if errors.As(err, &locked) {
			// Two writers would interleave one history file.
			r.r.Error("resume: " + err.Error() + "; close it there to resume it here (you stay in this session)")
			return nil
		}
		r.r.Error("resume: " + err.Error())
		return nil
	}
	if r.o.View != nil {
		r.o.View.Reset()
	}
	hist := r.o.Agent.History()
	id = r.o.Agent.SessionID()
	title := ""
	if entries, err := r.o.Sessions.List(); err == nil {
		for _, e := range entries {
			if e.ID == id {
				title = e.Title
				break
			}
		}
	}
	r.println(fmt.Sprintf("Resumed session %s: %s (%d messages).", id, orUntitled(title), len(hist)))
	r.replay(hist)
	return nil
}

// pickSession lists choices and reads the user's pick: a number from the
// list, or an id or id prefix (of a listed session first, else of any,
// which Resume resolves). "" means cancelled or not understood.
func (r *REPL) pickSession(choices []session.Entry, all bool) string {
	lines := []string{"Recent sessions:"}
	if !all && r.o.Cwd != "" {
		lines = []string{"Recent sessions in project " + r.project() + " (/resume --all for every project):"}
	}
	for i, e := range choices {
		count := fmt.Sprintf("%d messages", e.MessageCount)
		if e.MessageCount == 1 {
			count = "1 message"
		}
		// The whole id: it is what /resume <id> takes, and ids share
		// their leading characters (session-<date>-…).
		if e.HistoryMissing {
			count = "history missing"
		}
		line := fmt.Sprintf("  %2d. %s  %s  (%s, %s)", i+1, e.ID, orUntitled(e.Title), age(r.now().Sub(e.UpdatedAt)), count)
		if all && e.Cwd != "" {
			line += "  " + textutil.Sanitize(e.Cwd)
		}
		lines = append(lines, line)
	}
	r.println(lines...)
	line, err := r.readAnswer(fmt.Sprintf("Resume which (1-%d or an id prefix, Esc or Enter to cancel)? ", len(choices)))
	answer := strings.TrimSpace(line)
	if err != nil || answer == "" {
		r.println("Cancelled.")
		return ""
	}
	if n, err := strconv.Atoi(answer); err == nil {
		if n < 1 || n > len(choices) {
			r.r.Error(fmt.Sprintf("%d is not a number from 1 to %d; run /resume again", n, len(choices)))
			return ""
		}
		return choices[n-1].ID
	}
	var match []string
	for _, e := range choices {
		if strings.HasPrefix(e.ID, answer) || strings.HasPrefix(e.ID, session.IDPrefix+answer) {
			match = append(match, e.ID)
		}
	}
	if len(match) == 1 {
		return match[0]
	}
	return answer
}

// orUntitled is a title fit for the terminal (an older index may hold one
// with escape sequences), or "(untitled)".
func orUntitled(t string) string {
	if t = session.Title(t); t == "" {
		return "(untitled)"
	}
	return t
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
}

func (r *REPL) cmdSkills(ctx context.Context, args string) error {
	if args != "" {
		r.r.Error("/skills takes no arguments: /skill:info <name> shows one skill")
		return nil
	}
	return r.runSkillCommand(ctx, registry.SkillList)
}

// runSkillCommand runs a skill management command for the user; its output
// comes from skill files, so it is cleaned before it reaches the terminal.
func (r *REPL) runSkillCommand(ctx context.Context, line string) error {
	if r.o.SkillCommand == nil {
		r.r.Error("skill commands are not available in this session")
		return nil
	}
	var res command.Result
	if r.cancellable(ctx, func(ctx context.Context) { res = r.o.SkillCommand(ctx, line) }) {
		r.r.Notice(line + ": interrupted")
		return nil
	}
	out := strings.TrimRight(textutil.Sanitize(res.Stdout), "\n")
	if out != "" {
		r.println(out)
	}
	if msg := strings.TrimSpace(textutil.Sanitize(res.Stderr)); msg != "" || res.ExitCode != 0 {
		if msg == "" {
			msg = fmt.Sprintf("%s failed (exit %d)", line, res.ExitCode)
		}
		r.r.Error(msg)
	}
	return nil
}

func (r *REPL) cmdSkill(_ context.Context, args string) error {
	fields := strings.Fields(args)
	if len(fields) == 0 || fields[0] != "enhance" || len(fields) > 2 {
		r.r.Error("usage: /skill enhance [--on|--off]; /skills lists skills, /skill:<command> runs a skill command")
		return nil
	}
	if r.o.AutoEnhance == nil || r.o.SetAutoEnhance == nil {
		r.r.Error("skill auto-enhance is not available in this session")
		return nil
	}
	if len(fields) == 1 {
		state := "off"
		if r.o.AutoEnhance() {
			state = "on"
		}
		r.println("Skill auto-enhance is " + state + ". After a turn worth learning from, it runs the skill-enhance sub-agent to create or improve a skill. Switch with /skill enhance --on or --off (saved in settings.json).")
		return nil
	}
	var on bool
	switch fields[1] {
	case "--on", "on":
		on = true
	case "--off", "off":
	default:
		r.r.Error("usage: /skill enhance [--on|--off]")
		return nil
	}
	if err := r.o.SetAutoEnhance(on); err != nil {
		r.r.Error(err.Error())
		return nil
	}
	if on {
		r.println("Skill auto-enhance is on (saved in settings.json). Each turn worth learning from then costs an extra sub-agent run, in tokens and time; /skill enhance --off stops it.")
	} else {
		r.println("Skill auto-enhance is off (saved in settings.json).")
	}
	return nil
}

func (r *REPL) cmdMode(_ context.Context, args string) error {
	if args == "" {
		r.println("Mode " + modeHelp(r.perm.Mode()) + ". Switch with /mode <name> or Shift+Tab.")
		return nil
	}
	m, err := tool.ParseMode(args)
	if err == nil {
		err = r.setMode(m)
	}
	if err != nil {
		r.r.Error(err.Error())
		return nil
	}
	r.println("Mode " + modeHelp(m) + ".")
	return nil
}

// approvedPlan is the prompt /approve sends.
const approvedPlan = "The plan is approved and the workspace is writable again (default mode): carry the plan out now."

func (r *REPL) cmdApprove(ctx context.Context, _ string) error {
	if r.perm.Mode() != tool.ModePlan {
		r.r.Error("/approve approves a plan made in plan mode; the mode is " + string(r.perm.Mode()) + " (switch with /mode plan or Shift+Tab)")
		return nil
	}
	if err := r.perm.ApprovePlan(); err != nil {
		r.r.Error(err.Error())
		return nil
	}
	r.println("Plan approved: mode " + modeHelp(tool.ModeDefault) + ".")
	r.turn(ctx, approvedPlan)
	return nil
}
