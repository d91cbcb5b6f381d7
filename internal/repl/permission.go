package repl

import (
	"context"
	"fmt"
	"sync"

	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Permissions is the REPL's permission prompt for sandbox-blocked commands:
// a tool.Approver. It is made before the agent, which takes it as its
// approver at construction, and handed to the REPL, whose running turn
// gives it the keys to read the answer from. The tool grants exactly the
// blocked resource as answered.
type Permissions struct {
	r *render.Renderer

	askMu  sync.Mutex // one question at a time
	mu     sync.Mutex
	watch  *turnWatch // the running turn's key watcher, nil between turns
	grants []string   // session and permanent grants made here, for /sandbox

	mode    tool.Mode       // the permission mode (default when "")
	always  map[string]bool // ask mode: command words allowed for the session
	project string          // the project directory accept-edits grants within
}

// SetMode sets the permission mode the answers follow; project is the
// directory accept-edits grants within without asking.
func (p *Permissions) SetMode(m tool.Mode, project string) {
	p.mu.Lock()
	p.mode, p.project = m, project
	p.mu.Unlock()
}

// Mode is the permission mode.
func (p *Permissions) Mode() tool.Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode == "" {
		return tool.ModeDefault
	}
	return p.mode
}

// DenyNote tells the model why plan mode refused (tool.DenyNoter).
func (p *Permissions) DenyNote(tool.ApprovalRequest) string {
	if p.Mode() == tool.ModePlan {
		return tool.PlanModeNote
	}
	return ""
}

// NewPermissions returns a prompt that asks on r.
func NewPermissions(r *render.Renderer) *Permissions { return &Permissions{r: r} }

func (p *Permissions) setWatch(w *turnWatch) {
	p.mu.Lock()
	p.watch = w
	p.mu.Unlock()
}

// Grants are the lasting grants the user made here ("path (answer)").
func (p *Permissions) Grants() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.grants...)
}

// answerText is how an answer reads on screen.
func answerText(d tool.Decision) string {
	switch d {
	case tool.Once:
		return "allow once"
	case tool.Session:
		return "allow for this session"
	case tool.Permanent:
		return "allow permanently"
	}
	return "deny"
}

// Approve asks the user what to do about a blocked command (tool.Approver).
// It may be called from any goroutine during a turn; questions are asked one
// at a time. Without a terminal, or when ctx ends, the answer is Deny.
func (p *Permissions) Approve(ctx context.Context, req tool.ApprovalRequest) tool.Decision {
	p.askMu.Lock()
	defer p.askMu.Unlock()
	p.mu.Lock()
	w, mode, project := p.watch, p.mode, p.project
	p.mu.Unlock()
	switch {
	case mode == tool.ModePlan:
		p.r.Notice(fmt.Sprintf("plan mode: refused %s (read-only until the plan is approved)", orCommand(req)))
		return tool.Deny
	case mode == tool.ModeAcceptEdits && req.Refusal == "" && tool.InProject(req.Resource, project):
		p.r.Notice("accept-edits: allowed once: " + req.Resource)
		return tool.Once
	}
	if w == nil || req.Resource == "" {
		p.r.Notice(fmt.Sprintf("sandbox blocked %s (%s): denied, no one to ask", orCommand(req), req.Reason))
		return tool.Deny
	}
	if req.Refusal != "" {
		// Only one answer is possible: say why, and do not make the user
		// press a key for it.
		p.r.Notice(fmt.Sprintf("The sandbox blocked: %s\n  resource: %s\n  reason: %s\n"+
			"This cannot be allowed: %s\n→ deny: %s", req.Command, req.Resource, req.Reason, req.Refusal, req.Resource))
		return tool.Deny
	}
	answers := w.ask()
	defer w.endAsk()
	p.r.Notice(fmt.Sprintf("The sandbox blocked: %s\n  resource: %s\n  reason: %s\n"+
		"Allow? [1] once  [2] for this session  [3] permanently (sandbox.json)  [4] deny",
		req.Command, req.Resource, req.Reason))
	for {
		select {
		case <-ctx.Done():
			return tool.Deny
		case c := <-answers:
			var d tool.Decision
			switch c {
			case '1', 'o', 'y':
				d = tool.Once
			case '2', 's':
				d = tool.Session
			case '3', 'p':
				d = tool.Permanent
			case '4', 'd', 'n', 0x1b:
				d = tool.Deny
			default:
				continue
			}
			p.r.Notice("→ " + answerText(d) + ": " + req.Resource)
			if d == tool.Session || d == tool.Permanent {
				p.mu.Lock()
				p.grants = append(p.grants, req.Resource+" ("+answerText(d)+")")
				p.mu.Unlock()
			}
			return d
		}
	}
}

func orCommand(req tool.ApprovalRequest) string {
	if req.Resource != "" {
		return req.Resource
	}
	return req.Command
}

// Confirm asks the user a yes/no question about something the model asked
// the host to do outside the sandbox (cloning a repository). It may be
// called from any goroutine during a turn; questions are asked one at a
// time. Without a terminal, or when ctx ends, the answer is no.
func (p *Permissions) Confirm(ctx context.Context, question string) bool {
	p.askMu.Lock()
	defer p.askMu.Unlock()
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	if w == nil {
		p.r.Notice(question + ": no (no one to ask)")
		return false
	}
	answers := w.ask()
	defer w.endAsk()
	p.r.Notice(question + "\n[y] yes  [n] no")
	for {
		select {
		case <-ctx.Done():
			return false
		case c := <-answers:
			switch c {
			case 'y', 'Y', '1':
				p.r.Notice("→ yes")
				return true
			case 'n', 'N', '4', 'd', 0x1b:
				p.r.Notice("→ no")
				return false
			}
		}
	}
}

// BeforeRun refuses, in plan mode, what the read-only sandbox cannot hold
// (tool.PlanRefuses), and asks, in the ask mode, before a write, an edit or a native
// command that may write (tool.Gate): once, always for this command word
// (this session), or deny.
func (p *Permissions) BeforeRun(ctx context.Context, route router.Route, cmd string) (bool, string) {
	if p.Mode() == tool.ModePlan && tool.PlanRefuses(route) {
		p.r.Notice("plan mode: refused " + textutil.OneLine(cmd, 100))
		return false, tool.PlanModeNote
	}
	if p.Mode() != tool.ModeAsk || !tool.NeedsAsk(route, cmd) {
		return true, ""
	}
	word := tool.CommandWord(cmd)
	p.askMu.Lock()
	defer p.askMu.Unlock()
	p.mu.Lock()
	w, always := p.watch, p.always[word]
	p.mu.Unlock()
	if always {
		return true, ""
	}
	const denied = "The user declined to run this command (permission mode ask). Ask them or do something else."
	if w == nil {
		p.r.Notice("ask mode: refused " + cmd + " (no one to ask)")
		return false, denied
	}
	answers := w.ask()
	defer w.endAsk()
	p.r.Notice(fmt.Sprintf("Run this command? (permission mode ask)\n  %s\n[1] once  [2] always for `%s` this session  [3] deny", textutil.OneLine(cmd, 200), textutil.Sanitize(word)))
	for {
		select {
		case <-ctx.Done():
			return false, denied
		case c := <-answers:
			switch c {
			case '1', 'y', 'o':
				p.r.Notice("→ once")
				return true, ""
			case '2', 'a':
				p.mu.Lock()
				if p.always == nil {
					p.always = map[string]bool{}
				}
				p.always[word] = true
				p.grants = append(p.grants, "command "+word+" (always this session)")
				p.mu.Unlock()
				p.r.Notice("→ always for " + word)
				return true, ""
			case '3', 'n', 'd', 0x1b:
				p.r.Notice("→ deny")
				return false, denied
			}
		}
	}
}
