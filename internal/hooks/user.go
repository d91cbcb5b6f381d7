package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/proc"
	"github.com/synapse-agent/synapse/internal/router"
)

// Event names, as in settings.json.
const (
	EventUserPromptSubmit = "UserPromptSubmit"
	EventPreToolUse       = "PreToolUse"
	EventPostToolUse      = "PostToolUse"
	EventStop             = "Stop"
)

var events = []string{EventUserPromptSubmit, EventPreToolUse, EventPostToolUse, EventStop}

// DefaultTimeout bounds a hook command without a "timeout".
const DefaultTimeout = 60 * time.Second

// BlockExit is the exit status by which a hook refuses (PreToolUse,
// UserPromptSubmit) or talks back to the model (PostToolUse).
const BlockExit = 2

// maxCapture bounds what is kept of a hook's stdout and stderr each.
const maxCapture = 64 << 10

// Command is one hook command of settings.json.
type Command struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout,omitempty"` // seconds
}

// Matcher is one entry of an event's list: the hooks to run for the
// commands its matcher fits.
type Matcher struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []Command `json:"hooks"`
}

// Config is the "hooks" object of settings.json, by event name.
type Config map[string][]Matcher

// ParseConfig reads the "hooks" value of settings.json (the shape Claude
// Code uses). Entries that cannot run (an unknown event, a type other than
// "command", an empty command) are left out with a warning each; a value
// that is not the expected JSON is one warning and no hooks.
func ParseConfig(raw json.RawMessage) (Config, []string) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var in map[string][]Matcher
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, []string{fmt.Sprintf(`settings.json "hooks" is not valid (%v); no hooks run. Expected {"PreToolUse": [{"matcher": "rm", "hooks": [{"type": "command", "command": "…", "timeout": 10}]}]}`, err)}
	}
	var warns []string
	out := Config{}
	for ev, list := range in {
		if !slices.Contains(events, ev) {
			warns = append(warns, fmt.Sprintf(`settings.json "hooks": unknown event %q is ignored; events are %s`, ev, strings.Join(events, ", ")))
			continue
		}
		for i, m := range list {
			var kept []Command
			for j, c := range m.Hooks {
				switch {
				case c.Type != "command":
					warns = append(warns, fmt.Sprintf(`settings.json "hooks".%s[%d].hooks[%d]: type %q is not supported (only "command"); skipped`, ev, i, j, c.Type))
				case strings.TrimSpace(c.Command) == "":
					warns = append(warns, fmt.Sprintf(`settings.json "hooks".%s[%d].hooks[%d]: "command" is empty; skipped`, ev, i, j))
				default:
					kept = append(kept, c)
				}
			}
			if len(kept) > 0 {
				out[ev] = append(out[ev], Matcher{Matcher: m.Matcher, Hooks: kept})
			}
		}
	}
	return out, warns
}

// Runner runs the user's hook commands. They run on the host, not in the
// sandbox: the user wrote them in their own settings.json (which neither a
// project nor a sandboxed command can change), and hooks exist to do what
// the agent may not, such as logging outside the project or notifying.
type Runner struct {
	Config Config
	// Env is the hooks' environment (app passes the sandbox's scrubbed
	// environment, so hooks never see the agent's own API keys).
	Env []string
	// Shell runs each command as Shell -c COMMAND (default: bash).
	Shell string
}

// Has reports whether any hook is configured for event.
func (r *Runner) Has(event string) bool { return r != nil && len(r.Config[event]) > 0 }

// ToolInput is the Bash call's input, as in the payload.
type ToolInput struct {
	Command string `json:"command"`
}

// ToolResponse is the call's result, as in the PostToolUse payload.
type ToolResponse struct {
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
}

// Payload is the JSON a hook gets on stdin.
type Payload struct {
	SessionID      string        `json:"session_id"`
	Cwd            string        `json:"cwd"`
	Event          string        `json:"hook_event_name"`
	Prompt         string        `json:"prompt,omitempty"`
	ToolName       string        `json:"tool_name,omitempty"`
	ToolInput      *ToolInput    `json:"tool_input,omitempty"`
	ToolResponse   *ToolResponse `json:"tool_response,omitempty"`
	FinalAnswer    string        `json:"final_answer,omitempty"`
	StopHookActive *bool         `json:"stop_hook_active,omitempty"`
}

func toolPayload(event, sessionID, cwd, command string) Payload {
	return Payload{Event: event, SessionID: sessionID, Cwd: cwd, ToolName: "Bash", ToolInput: &ToolInput{Command: command}}
}

// Matches reports whether matcher fits the Bash command line: empty, "*"
// and "Bash" (the tool name, as Claude Code matchers use it) fit every
// call; otherwise it is one or more glob patterns separated by "|", and
// fits when one of them matches the command word of any command in the
// line (`git`, `mcp:*`, `rm|mv`).
func Matches(matcher, command string) bool {
	matcher = strings.TrimSpace(matcher)
	if matcher == "" || matcher == "*" || matcher == "Bash" {
		return true
	}
	words := router.Commands(command)
	for _, pat := range strings.Split(matcher, "|") {
		pat = strings.TrimSpace(pat)
		for _, w := range words {
			if ok, err := path.Match(pat, w); (err == nil && ok) || pat == w {
				return true
			}
		}
	}
	return false
}

// result of one hook command.
type result struct {
	stdout, stderr string
	exit           int
	err            error // could not run, or timed out
}

// run runs event's hooks that fit command ("" for events without one), in
// order, and decides. The first block wins and stops the rest.
func (r *Runner) run(ctx context.Context, p Payload, command string) Verdict {
	var v Verdict
	if r == nil {
		return v
	}
	for _, m := range r.Config[p.Event] {
		if command != "" && !Matches(m.Matcher, command) {
			continue
		}
		for _, c := range m.Hooks {
			res := r.exec(ctx, c, p)
			switch {
			case res.err != nil:
				v.Problems = append(v.Problems, res.err)
			case res.exit == 0:
			case res.exit == BlockExit:
				reason := strings.TrimSpace(res.stderr)
				if reason == "" {
					reason = fmt.Sprintf("the %s hook `%s` refused without a reason (exit 2, empty stderr)", p.Event, c.Command)
				}
				if p.Event == EventPostToolUse {
					v.Block = strings.TrimSpace(v.Block + "\n" + reason)
					continue
				}
				v.Block = reason
				return v
			default:
				v.Problems = append(v.Problems, failure(p.Event, c, res))
			}
		}
	}
	return v
}

// stopHook runs the Stop command hooks as one stop hook: their stdout is
// its output, failures its error.
func (r *Runner) stopHook(ctx context.Context, in StopInput) (string, error) {
	active := false
	p := Payload{Event: EventStop, SessionID: in.SessionID, Cwd: in.Cwd, FinalAnswer: in.FinalAnswer, StopHookActive: &active}
	var texts []string
	var errs []error
	for _, m := range r.Config[EventStop] {
		for _, c := range m.Hooks {
			res := r.exec(ctx, c, p)
			if t := strings.TrimSpace(res.stdout); t != "" {
				texts = append(texts, t)
			}
			switch {
			case res.err != nil:
				errs = append(errs, res.err)
			case res.exit != 0:
				errs = append(errs, failure(EventStop, c, res))
			}
		}
	}
	return strings.Join(texts, "\n"), errors.Join(errs...)
}

func failure(event string, c Command, res result) error {
	msg := fmt.Sprintf("%s hook `%s` exited with status %d", event, c.Command, res.exit)
	if s := strings.TrimSpace(res.stderr); s != "" {
		msg += ": " + firstLines(s, 5)
	}
	return errors.New(msg + " (ignored)")
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// exec runs one hook command with the payload on stdin, in the agent's
// directory, bounded by its timeout; a timeout or cancel kills its whole
// process group.
func (r *Runner) exec(ctx context.Context, c Command, p Payload) result {
	timeout := DefaultTimeout
	if c.Timeout > 0 {
		timeout = time.Duration(c.Timeout * float64(time.Second))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	input, err := json.Marshal(p)
	if err != nil {
		return result{err: fmt.Errorf("%s hook: encode its input: %w", p.Event, err)}
	}
	shell := r.Shell
	if shell == "" {
		shell = "bash"
	}
	r2 := proc.Run(ctx, proc.Cmd{Argv: []string{shell, "-c", c.Command}, Dir: p.Cwd, Env: r.Env,
		Stdin: bytes.NewReader(input), MaxOutput: maxCapture})
	res := result{stdout: r2.Stdout, stderr: r2.Stderr}
	switch {
	case r2.Canceled && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.err = fmt.Errorf("%s hook `%s` timed out after %s and was stopped (ignored); raise its \"timeout\" (seconds) in settings.json", p.Event, c.Command, timeout)
	case r2.Canceled:
		res.err = fmt.Errorf("%s hook `%s` was interrupted", p.Event, c.Command)
	case r2.StartErr != nil:
		res.err = fmt.Errorf("%s hook `%s` could not run: %w (ignored)", p.Event, c.Command, r2.StartErr)
	default:
		res.exit = r2.ExitCode
	}
	return res
}
