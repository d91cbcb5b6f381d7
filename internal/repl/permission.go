package repl

import (
	"context"
	"fmt"
)

// Decision is the user's answer to a sandbox-blocked command.
type Decision int

// Decisions.
const (
	Deny Decision = iota
	AllowOnce
	AllowSession
	AllowPermanent
)

func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowSession:
		return "allow for this session"
	case AllowPermanent:
		return "allow permanently"
	}
	return "deny"
}

// PermissionRequest describes what the sandbox blocked.
type PermissionRequest struct {
	Command  string
	Resource string // the exact path (or host) that was blocked
	Reason   string
}

// Granter applies grants (*sandbox.Manager).
type Granter interface {
	AddRuntimeWhitelist(path string) error
	RemoveRuntimeWhitelist(path string) error
	AddPermanentWhitelist(path string) error
}

// AskPermission asks the user what to do about a blocked command. It may be
// called from any goroutine during a turn; questions are asked one at a
// time. Without a terminal, or when ctx ends, the answer is Deny.
func (r *REPL) AskPermission(ctx context.Context, req PermissionRequest) Decision {
	r.askMu.Lock()
	defer r.askMu.Unlock()
	r.mu.Lock()
	w := r.watch
	r.mu.Unlock()
	if w == nil || req.Resource == "" {
		r.r.Notice(fmt.Sprintf("sandbox blocked %s (%s): denied, no one to ask", orCommand(req), req.Reason))
		return Deny
	}
	answers := w.ask()
	defer w.endAsk()
	r.r.Notice(fmt.Sprintf("The sandbox blocked: %s\n  resource: %s\n  reason: %s\n"+
		"Allow? [1] once  [2] for this session  [3] permanently (sandbox.json)  [4] deny",
		req.Command, req.Resource, req.Reason))
	for {
		select {
		case <-ctx.Done():
			return Deny
		case c := <-answers:
			var d Decision
			switch c {
			case '1', 'o', 'y':
				d = AllowOnce
			case '2', 's':
				d = AllowSession
			case '3', 'p':
				d = AllowPermanent
			case '4', 'd', 'n', 0x1b:
				d = Deny
			default:
				continue
			}
			r.r.Notice("→ " + d.String() + ": " + req.Resource)
			if d == AllowSession || d == AllowPermanent {
				r.mu.Lock()
				r.grants = append(r.grants, req.Resource+" ("+d.String()+")")
				r.mu.Unlock()
			}
			return d
		}
	}
}

func orCommand(req PermissionRequest) string {
	if req.Resource != "" {
		return req.Resource
	}
	return req.Command
}

// Grant applies d for exactly resource (never a parent directory). For
// AllowOnce the returned undo removes the temporary grant after the retry;
// it is a no-op otherwise. retry reports whether the command should run again.
func Grant(g Granter, d Decision, resource string) (retry bool, undo func(), err error) {
	undo = func() {}
	switch d {
	case AllowOnce:
		if err := g.AddRuntimeWhitelist(resource); err != nil {
			return false, undo, fmt.Errorf("allow %s once: %w", resource, err)
		}
		return true, func() { _ = g.RemoveRuntimeWhitelist(resource) }, nil
	case AllowSession:
		if err := g.AddRuntimeWhitelist(resource); err != nil {
			return false, undo, fmt.Errorf("allow %s for this session: %w", resource, err)
		}
		return true, undo, nil
	case AllowPermanent:
		if err := g.AddPermanentWhitelist(resource); err != nil {
			return false, undo, fmt.Errorf("allow %s permanently (sandbox.json): %w", resource, err)
		}
		return true, undo, nil
	}
	return false, undo, nil
}
