package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/proc"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/textutil"
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
	// Call, set instead of Command on a hook registered in code (the
	// Agent SDK host's callbacks, type "callback"), is called with the
	// payload and answers Claude Code's hook JSON output; an error is a
	// problem reported and ignored, like a failing command.
	Call func(ctx context.Context, p Payload) (json.RawMessage, error) `json:"-"`
}

// Matcher is one entry of an event's list: the hooks to run for the
// commands its matcher fits.
type Matcher struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []Command `json:"hooks"`
	// re is Matcher compiled as a whole-word expression (nil when it is
	// not one), once in ParseConfig rather than on every call.
	re *regexp.Regexp
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
		return nil, []string{fmt.Sprintf(`settings.json "hooks" is not valid (%s); no hooks run. Expected {"PreToolUse": [{"matcher": "rm", "hooks": [{"type": "command", "command": "…", "timeout": 10}]}]}`, configProblem(err))}
	}
	var warns []string
	out := Config{}
	for ev, list := range in {
		if !slices.Contains(events, ev) {
			warns = append(warns, fmt.Sprintf(`settings.json "hooks": unknown event %q is ignored; events are %s`, ev, strings.Join(events, ", ")))
			continue
		}
		for i, m := range list {
			if err := checkMatcher(m.Matcher); err != nil {
				warns = append(warns, fmt.Sprintf(`settings.json "hooks".%s[%d].matcher: %v; skipped`, ev, i, err))
				continue
			}
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
				out[ev] = append(out[ev], Matcher{Matcher: m.Matcher, Hooks: kept, re: wordRegexp(m.Matcher)})
			}
		}
	}
	return out, warns
}

// configProblem says what is wrong with the "hooks" JSON in its own terms
// (the decoder's text names Go types: "[]hooks.Matcher").
func configProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	got := textutil.JSONValue(te.Value)
	switch {
	case te.Field != "":
		return fmt.Sprintf("%q must be %s, not %s", te.Field, textutil.JSONKind(te.Type), got)
	case te.Type.Kind() == reflect.Map:
		return fmt.Sprintf(`"hooks" must be an object, not %s`, got)
	}
	return fmt.Sprintf("each event must be an array of matchers, not %s", got)
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
	// Transcript, when set, gives a session's history file, sent to hooks
	// as transcript_path (a JSON Lines file of Synapse's own messages).
	Transcript func(sessionID string) string
	// Settle, when set, runs before each hook command: hooks run on the
	// host, often git in the project, and app passes the sandbox's checks
	// so that a repository a background job planted there is disabled
	// first (sandbox.Manager.Settle).
	Settle func()
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
	TranscriptPath string        `json:"transcript_path,omitempty"`
	Cwd            string        `json:"cwd"`
	Event          string        `json:"hook_event_name"`
	ToolUseID      string        `json:"tool_use_id,omitempty"`
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

// wordRegexp compiles matcher as an expression over the whole word; nil
// when it is not one (a glob such as `*.sh` matches as globs only).
func wordRegexp(matcher string) *regexp.Regexp {
	re, err := regexp.Compile(`^(?:` + strings.TrimSpace(matcher) + `)$`)
	if err != nil {
		return nil
	}
	return re
}

func matches(matcher string, re *regexp.Regexp, command string) bool {
	matcher = strings.TrimSpace(matcher)
	if matcher == "" || matcher == "*" || matcher == "Bash" {
		return true
	}
	words := router.Commands(command)
	for _, w := range words {
		if re != nil && re.MatchString(w) {
			return true
		}
		for _, pat := range strings.Split(matcher, "|") {
			pat = strings.TrimSpace(pat)
			if ok, err := path.Match(pat, w); (err == nil && ok) || pat == w {
				return true
			}
		}
	}
	return false
}

// checkMatcher refuses a matcher that is neither a regular expression nor
// valid globs, so that a typo does not silently match nothing.
func checkMatcher(matcher string) error {
	matcher = strings.TrimSpace(matcher)
	if matcher == "" || matcher == "*" {
		return nil
	}
	_, reErr := regexp.Compile(`^(?:` + matcher + `)$`)
	if reErr == nil {
		return nil
	}
	for _, pat := range strings.Split(matcher, "|") {
		if _, err := path.Match(strings.TrimSpace(pat), ""); err != nil {
			return fmt.Errorf("%q is neither a regular expression (%v) nor \"|\"-separated globs (%v)", matcher, reErr, err)
		}
	}
	return nil
}

// result of one hook command.
type result struct {
	stdout, stderr string
	exit           int
	err            error // could not run, or timed out
}

// jsonOutput is the part of Claude Code's hook JSON output Synapse honours,
// read from a hook's stdout when it exits 0 with a JSON object.
type jsonOutput struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	HookSpecificOutput *struct {
		PermissionDecision       string        `json:"permissionDecision"`
		PermissionDecisionReason string        `json:"permissionDecisionReason"`
		AdditionalContext        string        `json:"additionalContext"`
		UpdatedInput             *updatedInput `json:"updatedInput"`
	} `json:"hookSpecificOutput"`
}

// updatedInput is a PreToolUse hook's changed tool input: for Bash, the
// command.
type updatedInput struct {
	Command *string `json:"command"`
}

// parseOutput reads stdout as hook JSON output; ok is false for plain text.
func parseOutput(stdout string) (jsonOutput, bool) {
	var out jsonOutput
	t := strings.TrimSpace(stdout)
	if !strings.HasPrefix(t, "{") || json.Unmarshal([]byte(t), &out) != nil {
		return jsonOutput{}, false
	}
	return out, true
}

// run runs event's hooks that fit command ("" for events without one), in
// order, and decides. The first block (exit 2, or JSON output deciding
// "block" or "deny") or stop ({"continue": false}) wins and ends the rest;
// PostToolUse blocks add up instead, as each is feedback on a call that ran.
func (r *Runner) run(ctx context.Context, p Payload, command string) Verdict {
	var v Verdict
	if r == nil {
		return v
	}
	if p.SessionID != "" && r.Transcript != nil {
		p.TranscriptPath = r.Transcript(p.SessionID)
	}
	addContext := func(t string) {
		if t = strings.TrimSpace(t); t != "" {
			v.Context = strings.TrimSpace(v.Context + "\n" + t)
		}
	}
	for _, m := range r.Config[p.Event] {
		if command != "" && !matches(m.Matcher, m.re, command) {
			continue
		}
		for _, c := range m.Hooks {
			res := r.exec(ctx, c, p)
			reason := ""
			switch {
			case res.err != nil:
				v.Problems = append(v.Problems, res.err)
				continue
			case res.exit == BlockExit:
				reason = strings.TrimSpace(res.stderr)
				if reason == "" {
					reason = fmt.Sprintf("the %s hook `%s` refused without a reason (exit 2, empty stderr)", p.Event, c.Command)
				}
			case res.exit != 0:
				v.Problems = append(v.Problems, failure(p.Event, c, res))
				if p.Event == EventStop {
					addContext(res.stdout) // shown with its failure
				}
				continue
			default:
				out, ok := parseOutput(res.stdout)
				if !ok && c.Call != nil {
					continue // a callback's empty or non-object answer decides nothing
				}
				if !ok {
					addContext(res.stdout)
					continue
				}
				if out.Continue != nil && !*out.Continue {
					v.Halt = true
					v.HaltReason = strings.TrimSpace(out.StopReason)
					if v.HaltReason == "" {
						v.HaltReason = fmt.Sprintf("the %s hook `%s` answered {\"continue\": false}", p.Event, c.Command)
					}
					return v
				}
				deny := false
				if h := out.HookSpecificOutput; h != nil {
					addContext(h.AdditionalContext)
					if t := strings.TrimSpace(h.AdditionalContext); t != "" {
						v.AdditionalContext = strings.TrimSpace(v.AdditionalContext + "\n" + t)
					}
					if h.PermissionDecision == "deny" {
						deny, reason = true, h.PermissionDecisionReason
					}
					if p.Event == EventPreToolUse {
						preDecision(&v, h.PermissionDecision, h.PermissionDecisionReason, c.Command, h.UpdatedInput)
					}
				}
				if out.Decision == "block" {
					deny = true
					if strings.TrimSpace(reason) == "" {
						reason = out.Reason
					}
				}
				if !deny {
					continue
				}
				if reason = strings.TrimSpace(reason); reason == "" {
					reason = fmt.Sprintf("the %s hook `%s` decided to block without a reason", p.Event, c.Command)
				}
			}
			if p.Event == EventPostToolUse {
				v.Block = strings.TrimSpace(v.Block + "\n" + reason)
				continue
			}
			v.Block = reason
			return v
		}
	}
	return v
}

// preDecision records a PreToolUse hook's "ask" and its updatedInput's
// command (the first of each wins; a deny decides over both).
func preDecision(v *Verdict, decision, reason, hook string, in *updatedInput) {
	if decision == "ask" && v.Ask == "" {
		v.Ask = strings.TrimSpace(reason)
		if v.Ask == "" {
			v.Ask = fmt.Sprintf("the PreToolUse hook `%s` asks for the user's approval", hook)
		}
	}
	if in != nil && in.Command != nil && strings.TrimSpace(*in.Command) != "" && v.UpdatedCommand == "" {
		v.UpdatedCommand = *in.Command
	}
}

// stopVerdict runs the Stop command hooks: their plain stdout is shown
// after the answer, a block asks the agent to go on.
func (r *Runner) stopVerdict(ctx context.Context, in StopInput) Verdict {
	active := in.StopHookActive
	p := Payload{Event: EventStop, SessionID: in.SessionID, Cwd: in.Cwd, FinalAnswer: in.FinalAnswer, StopHookActive: &active}
	return r.run(ctx, p, "")
}

func failure(event string, c Command, res result) error {
	msg := fmt.Sprintf("%s hook `%s` exited with status %d", event, c.Command, res.exit)
	if s := strings.TrimSpace(res.stderr); s != "" {
		msg += ": " + textutil.FirstLines(s, 5)
	}
	return errors.New(msg + " (ignored)")
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
	if c.Call != nil {
		return callHook(ctx, c, p, timeout)
	}
	input, err := json.Marshal(p)
	if err != nil {
		return result{err: fmt.Errorf("%s hook: encode its input: %w", p.Event, err)}
	}
	shell := r.Shell
	if shell == "" {
		shell = "bash"
	}
	if r.Settle != nil {
		r.Settle()
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

// callHook calls a hook registered in code within its timeout; an answer
// that does not come in time is a problem, and the hook decides nothing.
func callHook(ctx context.Context, c Command, p Payload, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := c.Call(ctx, p)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return result{err: fmt.Errorf("the host's %s hook callback did not answer within %s (ignored)", p.Event, timeout)}
	case ctx.Err() != nil:
		return result{err: fmt.Errorf("the host's %s hook callback was interrupted", p.Event)}
	case err != nil:
		return result{err: fmt.Errorf("the host's %s hook callback failed: %w (ignored)", p.Event, err)}
	}
	return result{stdout: string(out)}
}
