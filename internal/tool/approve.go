package tool

import (
	"context"
	"fmt"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// Decision is the user's answer to a sandbox-blocked command.
type Decision int

// Decisions.
const (
	Deny      Decision = iota // keep it blocked
	Once                      // allow the resource for this one retry
	Session                   // allow the resource until the agent exits
	Permanent                 // allow it now and in sandbox.json
)

func (d Decision) String() string {
	switch d {
	case Once:
		return "once"
	case Session:
		return "session"
	case Permanent:
		return "permanent"
	}
	return "deny"
}

// ApprovalRequest describes a command the sandbox blocked.
type ApprovalRequest struct {
	Command  string
	Resource string // the exact path that was refused
	Reason   string
	// Refusal, when set, says why the resource can never be granted (it is
	// on the sandbox blacklist): the prompt shows it and offers only deny.
	Refusal string
	// Rewrite, when set, takes a changed command the person answered with.
	Rewrite *Rewrite
}

// grantRefuser is implemented by a Whitelister that knows paths it will
// never grant (*sandbox.Manager: blacklisted ones).
type grantRefuser interface {
	GrantRefusal(path string) error
}

// Approver asks the user (the REPL's permission prompt) what to do.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) Decision
}

// maxApprovals bounds how many distinct resources one command may ask for.
const maxApprovals = 5

// approval records what the user was asked and answered for one command.
type approval struct {
	decisions []string // one per resource asked about
	note      string   // told to the model after the output
}

// runApproved dispatches the command; when the sandbox blocks it and an
// Approver is set, it asks, grants exactly the blocked resource as decided
// and retries.
// A question answered with another command sets rw.Next and returns at
// once: the caller runs that one instead.
func (b *Bash) runApproved(ctx context.Context, route router.Route, cmd string, rw *Rewrite) (res command.Result, ap approval, err error) {
	var cwd string
	if b.opts.Exec != nil && route.Family == router.FamilyNative {
		cwd = b.opts.Exec.Cwd()
	}
	g, gated := b.opts.Approver.(Gate)
	if why := preDecision(ctx).Ask; why != "" && !gated {
		// A hook asked for approval where no gate can put the question (a
		// sub-agent's tool): refused, never run unasked.
		ap.decisions = append(ap.decisions, Deny.String())
		return command.Result{ExitCode: 1, Stderr: HookAskNote(why)}, ap, nil
	}
	if gated {
		req := RunRequest{Route: route, Command: cmd, Asks: func() []writecheck.Reason {
			shellCwd := cwd
			if shellCwd == "" && b.opts.Exec != nil {
				shellCwd = b.opts.Exec.Cwd()
			}
			return b.askReasons(ctx, route, cmd, shellCwd)
		}, Rewrite: rw}
		if allowed, note := g.BeforeRun(ctx, req); !allowed {
			ap.decisions = append(ap.decisions, Deny.String())
			return command.Result{ExitCode: 1, Stderr: note}, ap, nil
		}
	}
	res, err = b.dispatch(ctx, route, cmd, cwd)
	if b.opts.Approver == nil || b.opts.Whitelist == nil {
		return res, ap, err
	}
	var once []string
	defer func() {
		for _, p := range once {
			if rerr := b.opts.Whitelist.RemoveRuntimeWhitelist(p); rerr != nil {
				ap.note += fmt.Sprintf("\n(warning: the one-time access to %s could not be withdrawn: %v)", p, rerr)
			}
		}
	}()
	asked := map[string]bool{}
	for range maxApprovals {
		if err != nil || !res.Blocked || res.BlockedResource == "" || ctx.Err() != nil {
			return res, ap, err
		}
		resource := res.BlockedResource
		if asked[resource] {
			// Granted, yet blocked again: retrying cannot help.
			return res, ap, err
		}
		asked[resource] = true
		req := ApprovalRequest{Command: cmd, Resource: resource, Reason: res.BlockedReason, Rewrite: rw}
		if gr, ok := b.opts.Whitelist.(grantRefuser); ok {
			if rerr := gr.GrantRefusal(resource); rerr != nil {
				req.Refusal = rerr.Error()
			}
		}
		d := b.opts.Approver.Approve(ctx, req)
		if req.Refusal != "" && d != Deny {
			d = Deny // whatever the approver said: it cannot be granted
		}
		ap.decisions = append(ap.decisions, d.String())
		if rw != nil && rw.Next != nil {
			return res, ap, err
		}
		var gerr error
		switch d {
		case Once:
			if gerr = b.opts.Whitelist.AddRuntimeWhitelist(resource); gerr == nil {
				once = append(once, resource)
			}
		case Session:
			gerr = b.opts.Whitelist.AddRuntimeWhitelist(resource)
		case Permanent:
			gerr = b.opts.Whitelist.AddPermanentWhitelist(resource)
		default:
			ap.note = "The user denied access to " + resource + "."
			if rw != nil && rw.Refused != "" {
				ap.note = rw.Refused
			} else if n, ok := b.opts.Approver.(DenyNoter); ok {
				if note := n.DenyNote(req); note != "" {
					ap.note = note
				}
			}
			return res, ap, err
		}
		if gerr != nil {
			ap.note = fmt.Sprintf("The user allowed access to %s, but it could not be granted: %v", resource, gerr)
			return res, ap, err
		}
		res.DropSpill()
		res, err = b.dispatch(ctx, route, cmd, cwd)
	}
	return res, ap, err
}
