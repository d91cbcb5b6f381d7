package tool

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
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
		res.DropSpill()
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
	out := b.output(res, &facts)
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
// /dev/tty fails at once (ENXIO) and a prompt cannot be answered. It and
// this file's other patterns are compiled on first use, not at every start.
var ttyRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)/dev/tty\b|not a terminal|not a tty|a terminal is required|no tty present|inappropriate ioctl for device`)
})

// terminalNote explains a failure of a command that wanted a terminal and
// names the non-interactive way; it is not a self-description of a command.
func terminalNote(res command.Result) string {
	if !ttyRe().MatchString(res.Stderr) {
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
	if out := b.output(res, &facts); out != "" {
		o.WriteString("\n\nCommand output:\n" + out)
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
	usageRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(\busage:|unrecognized option|invalid option|unknown option|unknown flag|illegal option|missing operand|requires an argument|unknown command|unknown shorthand flag)`)
	})
	// The name may hold colons (skill:a:b met by the shell inside a compound
	// line), so the shell's own prefix ("bash: line 1: ", "sh: 1: ") is
	// skipped explicitly instead.
	notFoundRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^(?:\S+: )?(?:line \d+: |\d+: )?([^\s'"]+?): (?:command )?not found`)
	})
)

// classify names the kind of failure and gives the self-repair hint for the
// model's own mistakes (invalid usage, unknown command). An execution error
// of any layer gets none (seed 003): its own message says what went wrong,
// and a pointer to --help would send the model to re-read the usage of a
// command it called correctly.
func classify(route router.Route, cmd string, res command.Result) (category, hint string) {
	if res.ExitCode == 127 || strings.Contains(res.Stderr, "command not found") {
		name := route.Name
		if m := notFoundRe().FindStringSubmatch(res.Stderr); m != nil {
			name = m[1]
		}
		if name == router.FirstWord(cmd) {
			if line, ok := foreignLine(cmd); ok {
				return FailureCommandNotFound, fmt.Sprintf("%s `%s` is another agent's tool, not a command here. The Synapse command for it: Bash(command=%s).", hintTag, name, strconv.Quote(line))
			}
		}
		return FailureCommandNotFound, notFoundHint(name)
	}
	if usageRe().MatchString(res.Stderr) || (res.Stderr == "" && usageRe().MatchString(res.Stdout)) {
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

// output is what the model sees of a command's stdout and stderr:
// combined, and cut to the cap with the whole saved to a file.
func (b *Bash) output(res command.Result, facts *Facts) string {
	if res.StdoutFile == nil {
		return b.capOutput(combine(res.Stdout, res.Stderr), facts)
	}
	out, err := capFile(res.StdoutFile, res.Stderr, b.opts.OutputCap, facts)
	if err != nil {
		// The file is unusable: what memory kept of stdout is all there is.
		res.DropSpill()
		return b.capOutput(combine(res.Stdout, res.Stderr), facts)
	}
	return out
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
	p, err := b.saveOutput(out)
	return cutOutput(out[:runeOffset(out, half)], out[runeOffset(out, n-half):], n, n-2*half, p, err, facts)
}

// cutOutput is head and tail around the notice of what was cut and where
// the whole output (n characters) was saved.
func cutOutput(head, tail string, n, cut int, path string, saveErr error, facts *Facts) string {
	where := "it could not be saved"
	if saveErr == nil {
		where = "the full output (" + strconv.Itoa(n) + " characters) was saved to " + path + "; inspect it with read, grep or tail"
		facts.FullOutputPath = path
	} else {
		where += ": " + saveErr.Error()
	}
	facts.Truncated = true
	return head + fmt.Sprintf("\n\n[... %d characters cut here; %s ...]\n\n", cut, where) + tail
}

// capFile does what capOutput does for an output whose stdout the shell
// wrote to f as it came (command.WithSpill), without holding it in memory:
// f becomes the saved full output (its trailing newlines trimmed and stderr
// appended, as combine does) and only its ends are read back. f is closed,
// and removed when the output fits the cap.
func capFile(f *os.File, stderr string, limit int, facts *Facts) (string, error) {
	defer func() { _ = f.Close() }()
	size, err := trimNewlines(f)
	if err != nil {
		return "", err
	}
	if stderr = strings.TrimRight(stderr, "\n"); stderr != "" {
		block := "\n[stderr]\n" + stderr
		if size == 0 {
			block = block[1:]
		}
		if _, err := f.WriteAt([]byte(block), size); err != nil {
			return "", err
		}
		size += int64(len(block))
	}
	half := limit / 2
	n, tailOff, err := countRunes(f, size, half)
	if err != nil {
		return "", err
	}
	if n <= limit {
		whole := make([]byte, size)
		if _, err := f.ReadAt(whole, 0); err != nil {
			return "", err
		}
		_ = os.Remove(f.Name())
		return string(whole), nil
	}
	head := make([]byte, min(size, int64(utf8.UTFMax*half)))
	if _, err := f.ReadAt(head, 0); err != nil {
		return "", err
	}
	tail := make([]byte, size-tailOff)
	if _, err := f.ReadAt(tail, tailOff); err != nil {
		return "", err
	}
	hs := string(head)
	return cutOutput(hs[:runeOffset(hs, half)], string(tail), n, n-2*half, f.Name(), nil, facts), nil
}

// trimNewlines cuts the newlines that end f and returns its new size.
func trimNewlines(f *os.File) (int64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := info.Size()
	buf := make([]byte, 4096)
	for size > 0 {
		chunk := buf[:min(int64(len(buf)), size)]
		if _, err := f.ReadAt(chunk, size-int64(len(chunk))); err != nil {
			return 0, err
		}
		kept := len(strings.TrimRight(string(chunk), "\n"))
		size -= int64(len(chunk) - kept)
		if kept > 0 {
			break
		}
	}
	return size, f.Truncate(size)
}

// countRunes counts the characters of f's first size bytes as
// utf8.RuneCountInString would, reading it in pieces, and returns the byte
// offset where the last keep of them start.
func countRunes(f *os.File, size int64, keep int) (n int, tailOff int64, err error) {
	starts := make([]int64, max(keep, 1)) // ring of the latest rune offsets
	buf := make([]byte, 0, 64<<10+utf8.UTFMax)
	var off int64 // file offset of buf[0]
	for read := int64(0); read < size || len(buf) > 0; {
		m := int(min(int64(cap(buf)-len(buf)), size-read))
		if m > 0 {
			k, err := f.ReadAt(buf[len(buf):len(buf)+m], read)
			if k < m {
				return 0, 0, fmt.Errorf("reading %s: %w", f.Name(), err)
			}
			buf, read = buf[:len(buf)+m], read+int64(m)
		}
		i := 0
		for i < len(buf) {
			if buf[i] >= utf8.RuneSelf && read < size && !utf8.FullRune(buf[i:]) {
				break // the rest of this character is in the next piece
			}
			starts[n%len(starts)] = off + int64(i)
			n++
			if buf[i] < utf8.RuneSelf {
				i++
			} else {
				_, w := utf8.DecodeRune(buf[i:])
				i += w
			}
		}
		off += int64(i)
		buf = append(buf[:0], buf[i:]...)
	}
	switch {
	case keep <= 0:
		return n, size, nil
	case n <= keep:
		return n, 0, nil
	}
	return n, starts[(n-keep)%len(starts)], nil
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
	return fsutil.SaveTemp(b.opts.OutputDir, outputPattern, out)
}

// outputPattern names the files full outputs are saved to.
const outputPattern = "bash-output-*.txt"

// spillFile creates the file the shell writes a large stdout to as it
// comes (command.WithSpill): the one the cut notice will name.
func (b *Bash) spillFile() (*os.File, error) {
	return fsutil.CreateTemp(b.opts.OutputDir, outputPattern)
}

// failure is a ToolError with a category.
func failure(category, output, message string) Result {
	return Result{Output: output, IsError: true, Message: message, Facts: Facts{FailureCategory: category}}
}
