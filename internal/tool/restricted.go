package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/router"
)

// Tool is the Bash tool as the restricted variant wraps it.
type Tool interface {
	Spec() llm.ToolSpec
	Call(ctx context.Context, input json.RawMessage) Result
	Run(ctx context.Context, in Input) Result
}

// ExtrasTypeCommandBlocked is Facts.Type for a command the
// restriction refused before it ran.
const ExtrasTypeCommandBlocked = "command_blocked"

// Restricted is a Bash tool for sub-agents that refuses some commands.
type Restricted struct {
	delegate Tool
	exclude  []string
}

// NewRestricted wraps delegate. A pattern ending in ":" matches command
// names by prefix ("task:" blocks task:explore and task:skill:search); any
// other pattern matches a command word exactly ("edit" blocks `edit a.txt`,
// not `editor`; "rm" also blocks `/bin/rm`).
func NewRestricted(delegate Tool, exclude []string) *Restricted {
	var ex []string
	for _, p := range exclude {
		if p = strings.TrimSpace(p); p != "" {
			ex = append(ex, p)
		}
	}
	return &Restricted{delegate: delegate, exclude: ex}
}

// Spec is the delegate's, with the refused commands named.
func (r *Restricted) Spec() llm.ToolSpec {
	s := r.delegate.Spec()
	if len(r.exclude) > 0 {
		s.Description += "\n## Not available to you\nThese commands are refused in this context: " + strings.Join(r.exclude, ", ") +
			" (a pattern ending in `:` covers every command starting with it).\n"
	}
	return s
}

// Prepare is the delegate's (Bash.Prepare).
func (r *Restricted) Prepare() {
	if p, ok := r.delegate.(interface{ Prepare() }); ok {
		p.Prepare()
	}
}

// Call checks the command, then hands the raw input to the delegate.
func (r *Restricted) Call(ctx context.Context, input json.RawMessage) Result {
	in, err := DecodeInput(input)
	if err != nil {
		return inputError(err)
	}
	if res, blocked := r.check(in.Command); blocked {
		return res
	}
	if res, blocked := r.check(hookChanged(ctx, in.Command)); blocked {
		return res // a hook's change is held to the same exclusions
	}
	return r.delegate.Call(ctx, input)
}

// Run checks the command, then runs it with the delegate.
func (r *Restricted) Run(ctx context.Context, in Input) Result {
	if res, blocked := r.check(in.Command); blocked {
		return res
	}
	if res, blocked := r.check(hookChanged(ctx, in.Command)); blocked {
		return res
	}
	return r.delegate.Run(ctx, in)
}

// check looks at every command the line would run, wrappers and
// substitutions included, not only the first word.
func (r *Restricted) check(cmd string) (Result, bool) {
	if len(r.exclude) == 0 || strings.TrimSpace(cmd) == "" {
		return Result{}, false
	}
	// The routed command word too: the router splits at any Unicode space,
	// the shell parser only at ASCII ones, so "\u00a0task:explore" is one
	// odd word to the parser but task:explore to the dispatch.
	names := append(router.Commands(cmd), router.Classify(cmd).Name)
	for _, name := range names {
		for _, p := range r.exclude {
			if matchExclude(p, name) {
				return r.refuse(name, p), true
			}
		}
	}
	return Result{}, false
}

func matchExclude(pattern, name string) bool {
	if strings.HasSuffix(pattern, ":") {
		return strings.HasPrefix(name, pattern)
	}
	return name == pattern || path.Base(name) == pattern
}

func (r *Restricted) refuse(name, pattern string) Result {
	rule := "`" + pattern + "`"
	if strings.HasSuffix(pattern, ":") {
		rule = "`" + pattern + "*`"
	}
	msg := fmt.Sprintf("Command blocked: `%s` is not allowed in this context (excluded by %s). It was not run. "+
		"Do this step with the commands you are allowed to use, or report back what is needed.", name, rule)
	return Result{Output: msg, IsError: true, Message: "Command blocked",
		Facts: Facts{Type: ExtrasTypeCommandBlocked, Command: name, Pattern: pattern}}
}
