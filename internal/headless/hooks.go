package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/hooks"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// HookMatcher is one entry of initialize's hooks: the host's callbacks
// for the tools its matcher fits.
type HookMatcher struct {
	Matcher         string   `json:"matcher"`
	HookCallbackIDs []string `json:"hookCallbackIds"`
	Timeout         float64  `json:"timeout"` // seconds; 0: hooks.DefaultTimeout
}

// hookEvents are the events Synapse has hook points for; the host's
// callbacks for others are never called.
var hookEvents = []string{hooks.EventPreToolUse, hooks.EventPostToolUse, hooks.EventUserPromptSubmit, hooks.EventStop}

// parseHookMatchers reads initialize's hooks (event → matchers); an event
// whose value is not a list of matchers is left out.
func parseHookMatchers(raw map[string]json.RawMessage) map[string][]HookMatcher {
	if len(raw) == 0 {
		return nil
	}
	out := map[string][]HookMatcher{}
	for ev, v := range raw {
		var ms []HookMatcher
		if json.Unmarshal(v, &ms) != nil {
			out[ev] = nil
			continue
		}
		out[ev] = ms
	}
	return out
}

// matchesTool reports whether the SDK's matcher (a tool-name pattern:
// names joined by "|", or a regular expression) fits tool.
func matchesTool(matcher, tool string) bool {
	m := strings.TrimSpace(matcher)
	if m == "" || m == "*" {
		return true
	}
	if regexp.MustCompile(`^[A-Za-z0-9_|]+$`).MatchString(m) {
		return slices.Contains(strings.Split(m, "|"), tool)
	}
	re, err := regexp.Compile(m)
	return err == nil && re.MatchString(tool)
}

// HookConfig turns the host's registered callbacks into hooks that call
// them (hook_callback requests) at Synapse's hook points; notes say what
// is not run (events without a hook point here, matchers that fit no
// tool of Synapse's, whose only tool is Bash).
func (c *Control) HookConfig(ms map[string][]HookMatcher) (cfg hooks.Config, notes []string) {
	events := make([]string, 0, len(ms))
	for ev := range ms {
		events = append(events, ev)
	}
	slices.Sort(events)
	var unknown, unmatched []string
	for _, ev := range events {
		if !slices.Contains(hookEvents, ev) {
			unknown = append(unknown, ev)
			continue
		}
		for _, m := range ms[ev] {
			tool := ev == hooks.EventPreToolUse || ev == hooks.EventPostToolUse
			if tool && !matchesTool(m.Matcher, ToolName) {
				unmatched = append(unmatched, fmt.Sprintf("%s %q", ev, m.Matcher))
				continue
			}
			var cmds []hooks.Command
			for _, id := range m.HookCallbackIDs {
				cmds = append(cmds, hooks.Command{Type: "callback", Command: "host callback " + id, Timeout: m.Timeout, Call: c.hookCallback(id)})
			}
			if len(cmds) == 0 {
				continue
			}
			if cfg == nil {
				cfg = hooks.Config{}
			}
			cfg[ev] = append(cfg[ev], hooks.Matcher{Hooks: cmds})
		}
	}
	if len(unknown) > 0 {
		notes = append(notes, "the host's hook callbacks for "+strings.Join(unknown, ", ")+" are never called: synapse has hook points for "+strings.Join(hookEvents, ", "))
	}
	if len(unmatched) > 0 {
		notes = append(notes, "the host's hook matchers "+strings.Join(unmatched, ", ")+" fit no tool of synapse's (its only tool is "+ToolName+"); never called")
	}
	return cfg, notes
}

// hookCallback is the hook that asks the host to run its callback id: the
// payload is the SDK's HookInput, the answer its HookJSONOutput. An answer
// that does not come before ctx's deadline (the matcher's timeout) is a
// note on stderr, and the callback decides nothing.
func (c *Control) hookCallback(id string) func(ctx context.Context, p hooks.Payload) (json.RawMessage, error) {
	return func(ctx context.Context, p hooks.Payload) (json.RawMessage, error) {
		if p.ToolInput != nil {
			if h := c.handlers(); h.CallFor != nil {
				p.ToolUseID = h.CallFor(p.ToolInput.Command)
			}
		}
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		var input map[string]any
		if err := json.Unmarshal(b, &input); err != nil {
			return nil, err
		}
		if _, ok := input["transcript_path"]; !ok {
			input["transcript_path"] = "" // required by the SDK's BaseHookInput
		}
		req := map[string]any{"subtype": "hook_callback", "callback_id": id, "input": input}
		if p.ToolUseID != "" {
			req["tool_use_id"] = p.ToolUseID
		}
		r := c.ask(ctx, req)
		if r == nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				fmt.Fprintf(c.errw, "synapse: note: the host's %s hook callback %s did not answer in time; ignored\n", p.Event, textutil.Sanitize(id))
				return nil, ctx.Err()
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errors.New("the host did not answer")
		}
		if hso, _ := r["hookSpecificOutput"].(map[string]any); p.Event == hooks.EventPreToolUse && p.ToolUseID != "" &&
			hso["permissionDecision"] == "allow" {
			c.hookOK.Store(p.ToolUseID, true)
		}
		if async, _ := r["async"].(bool); async {
			return nil, nil // runs in the background on the host: decides nothing
		}
		return json.Marshal(r)
	}
}

// hookAllowed reports whether a PreToolUse hook callback answered
// permissionDecision "allow" for the call id: the ask mode's question
// about its command is then answered yes without asking the host. The
// gate still decides everything else (plan mode, the sandbox, rules).
func (c *Control) hookAllowed(id string) bool {
	if id == "" {
		return false
	}
	_, ok := c.hookOK.LoadAndDelete(id)
	return ok
}
