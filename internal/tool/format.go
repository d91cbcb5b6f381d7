package tool

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// NoOutput is the output of a successful command that printed nothing.
const NoOutput = "(Command executed successfully with no output)"

// hintTag starts every self-repair hint; execution errors carry none.
const hintTag = "[Self-description]"

// shape turns what a layer returned into what the model sees.
func (b *Bash) shape(ctx context.Context, route router.Route, cmd string, res command.Result, err error) Result {
	facts := Facts{Layer: route.Layer.String()}
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(facts, "")
		}
		msg := "Error: " + err.Error() + "\nIf the shell session is broken, call Bash with \"restart\": true."
		facts.FailureCategory = FailureExecution
		return Result{Output: msg, IsError: true, Message: err.Error(), Facts: facts}
	}
	if res.Blocked {
		return b.blocked(cmd, res, facts)
	}
	out := combine(res.Stdout, res.Stderr)
	out = b.capOutput(out, &facts)
	facts.ExitCode = exitCode(res.ExitCode)
	if res.ExitCode == 0 {
		if out == "" {
			out = NoOutput
		}
		return Result{Output: out, Facts: facts, Images: res.Images, Change: res.Change}
	}
	if res.ExitCode == command.Interrupted && ctx.Err() != nil {
		return interrupted(facts, out)
	}
	category, hint := classify(route, cmd, res)
	facts.FailureCategory = category
	if suggestsItself(hint, cmd) {
		// Running the same line again would fail the same way.
		hint = ""
	}
	var o strings.Builder
	if out != "" {
		o.WriteString(out)
		o.WriteString("\n")
	}
	fmt.Fprintf(&o, "[exit code: %d]", res.ExitCode)
	if hint != "" {
		o.WriteString("\n" + hint)
	}
	if note := terminalNote(res); note != "" {
		o.WriteString("\n" + note)
	}
	if res.TimedOut {
		msg := fmt.Sprintf("`%s` timed out and was stopped (exit code %d)", textutil.OneLine(cmd, 60), res.ExitCode)
		return Result{Output: o.String(), IsError: true, Message: msg, Facts: facts}
	}
	what := "Command"
	if name := failedName(route, cmd, res); name != "" {
		what = "`" + name + "`"
	}
	return Result{Output: o.String(), IsError: true, Message: fmt.Sprintf("%s failed with exit code %d (%s)", what, res.ExitCode, category), Facts: facts}
}

// suggestsItself reports whether hint tells the model to run cmd itself
// (`task:general --help` failing must not suggest `task:general --help`).
func suggestsItself(hint, cmd string) bool {
	line := strings.Join(strings.Fields(cmd), " ")
	return hint != "" && line != "" && strings.Contains(hint, `Bash(command="`+line+`")`)
}

// ttyRe matches what programs print when they need a terminal: the shell
// runs in a session of its own with no controlling terminal, so opening
// /dev/tty fails at once (ENXIO) and a prompt cannot be answered.
var ttyRe = regexp.MustCompile(`(?i)/dev/tty\b|not a terminal|not a tty|a terminal is required|no tty present|inappropriate ioctl for device`)

// terminalNote explains a failure of a command that wanted a terminal and
// names the non-interactive way; it is not a self-description of a command.
func terminalNote(res command.Result) string {
	if !ttyRe.MatchString(res.Stderr) {
		return ""
	}
	return "[no terminal] Commands here run without a terminal, so nothing can be typed into them: an editor, a pager, " +
		"a password or confirmation prompt (or anything reading /dev/tty) fails or waits until the timeout. " +
		"Use the non-interactive way: give the text as arguments or flags (git commit -m \"…\", --yes, --no-pager), " +
		"feed answers on stdin (printf 'y\\n' | cmd), and change files with edit or write. " +
		"EDITOR, VISUAL and GIT_EDITOR are `true` (an editor accepts the file unchanged, so `git rebase -i` runs its plan as is) and PAGER is cat."
}

// UserOutput is a result's output as a person reads it: nothing for a
// success that printed nothing, a failure without
// the exit-code line and self-repair hint added for the model (the short
// error line already says how it failed) and without the [stderr] label, so
// a folded view keeps the command's own last lines, where its error is.
func UserOutput(r Result) string {
	out := r.Output
	if !r.IsError {
		if out == NoOutput { // the model's reassurance; a person sees the ✓
			return ""
		}
		return out
	}
	if code, ok := r.Facts.Exit(); ok {
		mark := fmt.Sprintf("[exit code: %d]", code)
		if i := strings.LastIndex(out, mark); i >= 0 && (i == 0 || out[i-1] == '\n') {
			rest := out[i+len(mark):]
			if rest == "" || strings.HasPrefix(rest, "\n"+hintTag) {
				out = strings.TrimSuffix(out[:i], "\n")
			}
		}
	}
	if i := strings.LastIndex(out, "[stderr]\n"); i >= 0 && (i == 0 || out[i-1] == '\n') {
		out = out[:i] + out[i+len("[stderr]\n"):]
	}
	return out
}

// failedName is the command the short error line names: the Agent Shell or
// extension command, or the native command whose name starts a line of its
// error output ("cat: x: No such file"); "" when that is not clear.
func failedName(route router.Route, cmd string, res command.Result) string {
	if route.Layer != router.Native {
		return route.Name
	}
	for _, n := range router.Commands(cmd) {
		base := path.Base(n)
		if base != "" && regexp.MustCompile(`(?m)^(?:\S+: )?(?:line \d+: )?`+regexp.QuoteMeta(base)+`: `).MatchString(res.Stderr) {
			return base
		}
	}
	return ""
}

func interrupted(facts Facts, out string) Result {
	facts.FailureCategory = FailureExecution
	facts.ExitCode = exitCode(command.Interrupted)
	facts.Interrupted = true
	if out != "" {
		out += "\n"
	}
	return Result{Output: out + "[interrupted: the command was cancelled]", IsError: true, Message: "Command interrupted", Facts: facts}
}

// combine is stdout followed by a [stderr] block, trailing newlines trimmed.
func combine(stdout, stderr string) string {
	stdout = strings.TrimRight(stdout, "\n")
	stderr = strings.TrimRight(stderr, "\n")
	switch {
	case stderr == "":
		return stdout
	case stdout == "":
		return "[stderr]\n" + stderr
	}
	return stdout + "\n[stderr]\n" + stderr
}

// blocked is the marker the model gets for a command the sandbox refused:
// not an error of the model's command, but information to act on.
func (b *Bash) blocked(cmd string, res command.Result, facts Facts) Result {
	facts.Type = ExtrasTypeSandboxBlocked
	facts.Reason = res.BlockedReason
	facts.Resource = res.BlockedResource
	facts.Command = cmd
	code := res.ExitCode
	if code == 0 {
		code = 1 // it did not do what was asked
	}
	facts.ExitCode = exitCode(code)
	var o strings.Builder
	o.WriteString("[sandbox blocked] The sandbox policy did not allow this command")
	if res.BlockedResource != "" {
		o.WriteString(" to access " + res.BlockedResource)
	}
	o.WriteString(".\n")
	if res.BlockedReason != "" {
		o.WriteString("Reason: " + res.BlockedReason + "\n")
	}
	if b.readOnly() {
		o.WriteString("This agent works read-only: it cannot create or change files anywhere (only /tmp inside its sandbox is private scratch space). " +
			"Keep exploring with read, cat, grep and find, and put what should change in your answer.")
	} else {
		o.WriteString("Work inside the allowed directories (the project and the temp directory), or ask the user to allow this path.")
	}
	if out := combine(res.Stdout, res.Stderr); out != "" {
		o.WriteString("\n\nCommand output:\n" + b.capOutput(out, &facts))
	}
	return Result{Output: o.String(), Facts: facts}
}

// readOnlyExecutor is an Executor that can say its sandbox allows no writes
// (the sandbox manager of an explore sub-agent).
type readOnlyExecutor interface{ ReadOnly() bool }

func (b *Bash) readOnly() bool {
	ro, ok := b.opts.Exec.(readOnlyExecutor)
	return ok && ro.ReadOnly()
}

var (
	usageRe = regexp.MustCompile(`(?i)(\busage:|unrecognized option|invalid option|unknown option|unknown flag|illegal option|missing operand|requires an argument|unknown command|unknown shorthand flag)`)
	// The name may hold colons (skill:a:b met by the shell inside a compound
	// line), so the shell's own prefix ("bash: line 1: ", "sh: 1: ") is
	// skipped explicitly instead.
	notFoundRe = regexp.MustCompile(`(?m)^(?:\S+: )?(?:line \d+: |\d+: )?([^\s'"]+?): (?:command )?not found`)
)

// classify names the kind of failure and gives the self-repair hint for the
// model's own mistakes (invalid usage, unknown command). An execution error
// of any layer gets none (seed 003): its own message says what went wrong,
// and a pointer to --help would send the model to re-read the usage of a
// command it called correctly.
func classify(route router.Route, cmd string, res command.Result) (category, hint string) {
	if res.ExitCode == 127 || strings.Contains(res.Stderr, "command not found") {
		name := route.Name
		if m := notFoundRe.FindStringSubmatch(res.Stderr); m != nil {
			name = m[1]
		}
		if name == router.FirstWord(cmd) {
			if line, ok := foreignLine(cmd); ok {
				return FailureCommandNotFound, fmt.Sprintf("%s `%s` is another agent's tool, not a command here. The Synapse command for it: Bash(command=%s).", hintTag, name, strconv.Quote(line))
			}
		}
		return FailureCommandNotFound, notFoundHint(name)
	}
	if usageRe.MatchString(res.Stderr) || (res.Stderr == "" && usageRe.MatchString(res.Stdout)) {
		base := usageBase(route, cmd, res.Stderr+"\n"+res.Stdout)
		return FailureInvalidUsage, fmt.Sprintf("%s `%s` was called with invalid arguments. Every command describes itself: run Bash(command=\"%s --help\") to see its usage, then retry.", hintTag, base, base)
	}
	return FailureExecution, ""
}

// usageBase is the command whose usage went wrong: the Agent Shell or
// extension command, or the native command of the line that the error
// message names (the first one otherwise).
func usageBase(route router.Route, cmd, text string) string {
	if route.Layer != router.Native {
		return route.Name
	}
	names := router.Commands(cmd)
	for _, n := range names {
		base := path.Base(n)
		if strings.Contains(text, base+":") || strings.Contains(strings.ToLower(text), "usage: "+strings.ToLower(base)) {
			return base
		}
	}
	if len(names) > 0 {
		return names[0]
	}
	return route.Name
}

func notFoundHint(name string) string {
	var o strings.Builder
	if router.Classify(name).Layer != router.Native {
		// Only a whole Bash command reaches the router; inside a pipeline,
		// a list or $(…) the shell looks for a program of that name.
		fmt.Fprintf(&o, "%s `%s` is a Synapse command, not a program: the shell cannot run it inside a pipeline, a list (&&, ||, ;) or $(…). Run it as a command of its own, e.g. Bash(command=\"%s --help\"), and run the other parts in separate calls.", hintTag, name, name)
		return o.String()
	}
	fmt.Fprintf(&o, "%s `%s` is not a command here.", hintTag, name)
	for _, b := range registry.Names(registry.FamilyBuiltin) {
		if name != b && strings.EqualFold(name, b) {
			fmt.Fprintf(&o, " Did you mean `%s` (names are case-sensitive)?", b)
		}
	}
	o.WriteString(" Check the spelling, or use another tool. Agent Shell commands: " + registry.Summary() + "; extensions: mcp:<server>:<tool>, skill:<skill>:<script>. Each explains itself with --help, e.g. Bash(command=\"" + registry.Read + " --help\").")
	return o.String()
}

// capOutput keeps the head and tail of an output longer than the cap and
// saves the whole of it to a file whose path the cut notice gives.
func (b *Bash) capOutput(out string, facts *Facts) string {
	limit := b.opts.OutputCap
	n := utf8.RuneCountInString(out)
	if n <= limit {
		return out
	}
	half := limit / 2
	head := out[:runeOffset(out, half)]
	tail := out[runeOffset(out, n-half):]
	cut := n - 2*half
	where := "it could not be saved"
	if p, err := b.saveOutput(out); err == nil {
		where = "the full output (" + strconv.Itoa(n) + " characters) was saved to " + p + "; inspect it with read, grep or tail"
		facts.FullOutputPath = p
	} else {
		where += ": " + err.Error()
	}
	facts.Truncated = true
	return head + fmt.Sprintf("\n\n[... %d characters cut here; %s ...]\n\n", cut, where) + tail
}

// runeOffset is the byte offset of the i-th rune of s.
func runeOffset(s string, i int) int {
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

func (b *Bash) saveOutput(out string) (string, error) {
	return fsutil.SaveTemp(b.opts.OutputDir, "bash-output-*.txt", out)
}

// failure is a ToolError with a category.
func failure(category, output, message string) Result {
	return Result{Output: output, IsError: true, Message: message, Facts: Facts{FailureCategory: category}}
}
