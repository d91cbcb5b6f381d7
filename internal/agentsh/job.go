package agentsh

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/jobs"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Bounds of job:wait --timeout.
const (
	defaultJobWait = 30 * time.Second
	maxJobWait     = 10 * time.Minute
)

// jobsOf is the agent's job table, or a result saying there is none.
func (s *Shell) jobsOf(cmd string) (*jobs.Table, command.Result, bool) {
	if s.opts.Jobs == nil {
		return nil, failf(cmd, "background jobs are not available here (sub-agents have none; the main agent starts them)"), false
	}
	return s.opts.Jobs, command.Result{}, true
}

// jobStart runs `job:start <command>`: the command, in a sandboxed bash of
// its own, in the background.
func (s *Shell) jobStart(ctx context.Context, rest string) command.Result {
	t, res, ok := s.jobsOf("job:start")
	if !ok {
		return res
	}
	cmdline := strings.TrimSpace(rest)
	if cmdline == "" {
		return usageError("job:start", "missing command")
	}
	// job:start 'a && b' is the quoted command a && b, not a program of
	// that name.
	if toks, err := tokenize(cmdline); err == nil && len(toks) == 1 && toks[0].Quoted && strings.ContainsAny(cmdline[:1], `'"`) {
		cmdline = toks[0].Value
	}
	info, err := t.Start(ctx, cmdline)
	if err != nil {
		return failf("job:start", err.Error())
	}
	return command.OK(fmt.Sprintf("job %d started: %s\nlog: %s\nNew output: job:read %d; wait for a line: job:wait %d --for REGEX; stop it: job:stop %d\n",
		info.ID, textutil.OneLine(cmdline, 80), info.Log, info.ID, info.ID, info.ID))
}

// jobID reads the one job id argument.
func jobID(cmd string, toks []token) (int, command.Result, bool) {
	if len(toks) == 0 {
		return 0, usageError(cmd, "missing job id (job:list shows them)"), false
	}
	id, err := strconv.Atoi(strings.TrimPrefix(toks[0].Value, "%"))
	if err != nil || id <= 0 {
		return 0, usageError(cmd, fmt.Sprintf("%q is not a job id (a number, as job:list shows)", toks[0].Value)), false
	}
	return id, command.Result{}, true
}

func (s *Shell) jobRead(_ context.Context, rest string) command.Result {
	t, res, ok := s.jobsOf("job:read")
	if !ok {
		return res
	}
	toks, err := tokenize(rest)
	if err != nil {
		return usageError("job:read", err.Error())
	}
	id, res, ok := jobID("job:read", toks)
	if !ok {
		return res
	}
	if len(toks) > 1 {
		return usageError("job:read", "unexpected argument "+strconv.Quote(toks[1].Value))
	}
	out, err := t.Read(id)
	if err != nil {
		return failf("job:read", err.Error())
	}
	return command.OK(outputText(out, ""))
}

func (s *Shell) jobWait(ctx context.Context, rest string) command.Result {
	t, res, ok := s.jobsOf("job:wait")
	if !ok {
		return res
	}
	toks, err := tokenize(rest)
	if err != nil {
		return usageError("job:wait", err.Error())
	}
	var (
		args    []token
		pattern *regexp.Regexp
		timeout = defaultJobWait
	)
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		name, val, hasVal := strings.Cut(tk.Value, "=")
		if tk.Quoted || (name != "--for" && name != "--timeout") {
			args = append(args, tk)
			continue
		}
		if !hasVal {
			if i+1 >= len(toks) {
				return usageError("job:wait", name+" needs a value")
			}
			i++
			val = toks[i].Value
		}
		switch name {
		case "--for":
			// Line by line, as grep: ^ and $ match at each line's ends.
			if pattern, err = regexp.Compile("(?m)" + val); err != nil {
				return usageError("job:wait", fmt.Sprintf("--for %q is not a valid regular expression: %v", val, err))
			}
		case "--timeout":
			d, err := parseWait(val)
			if err != nil {
				return usageError("job:wait", err.Error())
			}
			timeout = d
		}
	}
	id, res, ok := jobID("job:wait", args)
	if !ok {
		return res
	}
	if len(args) > 1 {
		return usageError("job:wait", "unexpected argument "+strconv.Quote(args[1].Value))
	}
	out, why, err := t.Wait(ctx, id, pattern, timeout)
	switch {
	case ctx.Err() != nil:
		return interrupted("job:wait")
	case err != nil:
		return failf("job:wait", err.Error())
	}
	note := ""
	switch why {
	case jobs.WaitMatched:
		note = "pattern found"
	case jobs.WaitTimedOut:
		what := "its end"
		if pattern != nil {
			what = "the pattern"
		}
		note = fmt.Sprintf("waited %s without seeing %s", timeout, what)
	}
	r := command.OK(outputText(out, note))
	if why == jobs.WaitTimedOut {
		r.ExitCode = 1 // what was waited for did not happen
	}
	return r
}

// parseWait reads a --timeout: a Go duration (30s, 2m) or plain seconds.
func parseWait(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseFloat(v, 64)
		if nerr != nil {
			return 0, fmt.Errorf("--timeout %q is not a duration (e.g. 30s, 2m, or seconds)", v)
		}
		d = time.Duration(n * float64(time.Second))
	}
	if d <= 0 || d > maxJobWait {
		return 0, fmt.Errorf("--timeout must be above 0 and at most %s", maxJobWait)
	}
	return d, nil
}

func (s *Shell) jobList(_ context.Context, rest string) command.Result {
	t, res, ok := s.jobsOf("job:list")
	if !ok {
		return res
	}
	if strings.TrimSpace(rest) != "" {
		return usageError("job:list", "job:list takes no arguments")
	}
	return command.OK(JobsText(t.List()))
}

// JobsText lists jobs one a line (job:list and the REPL's /jobs).
func JobsText(list []jobs.Info) string {
	if len(list) == 0 {
		return "No background jobs. Start one with job:start <command>.\n"
	}
	var b strings.Builder
	for _, j := range list {
		fmt.Fprintf(&b, "%d  %-22s %s\n", j.ID, stateText(j), textutil.OneLine(j.Command, 80))
	}
	return b.String()
}

func (s *Shell) jobStop(_ context.Context, rest string) command.Result {
	t, res, ok := s.jobsOf("job:stop")
	if !ok {
		return res
	}
	toks, err := tokenize(rest)
	if err != nil {
		return usageError("job:stop", err.Error())
	}
	id, res, ok := jobID("job:stop", toks)
	if !ok {
		return res
	}
	if len(toks) > 1 {
		return usageError("job:stop", "unexpected argument "+strconv.Quote(toks[1].Value))
	}
	before, err := t.Read(id) // what it wrote last is the model's to see
	if err != nil {
		return failf("job:stop", err.Error())
	}
	if before.Info.State != jobs.Running {
		return command.OK(outputText(before, "it had already ended; nothing to stop"))
	}
	if _, err := t.Stop(id); err != nil {
		return failf("job:stop", err.Error())
	}
	after, err := t.Read(id)
	if err != nil {
		return failf("job:stop", err.Error())
	}
	after.Text = before.Text + after.Text
	after.Dropped += before.Dropped
	return command.OK(outputText(after, "stopped with its process tree"))
}

// outputText is new job output and a closing line about the job.
func outputText(out jobs.Output, note string) string {
	var b strings.Builder
	if out.Dropped > 0 {
		fmt.Fprintf(&b, "[... %d bytes of older output were dropped: the log keeps the newest part only ...]\n", out.Dropped)
	}
	b.WriteString(out.Text)
	if out.Text != "" && !strings.HasSuffix(out.Text, "\n") {
		b.WriteString("\n")
	}
	if out.Text == "" {
		b.WriteString("(no new output)\n")
	}
	line := fmt.Sprintf("[job %d %s", out.Info.ID, stateText(out.Info))
	if note != "" {
		line += "; " + note
	}
	b.WriteString(line + "]\n")
	return b.String()
}

func stateText(j jobs.Info) string {
	switch {
	case j.State == jobs.Exited && j.ExitCode >= 0:
		return fmt.Sprintf("exited (status %d)", j.ExitCode)
	case j.State == jobs.Running && j.Moved:
		return "running (moved)"
	}
	return string(j.State)
}
