package repl

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
	"github.com/synapse-agent/synapse/internal/writecheck"
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
			case '1':
				d = tool.Once
			case '2':
				d = tool.Session
			case '3':
				d = tool.Permanent
			case '4', 0x1b:
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
	p.r.Notice(question + "\n[1] yes  [2] no")
	for {
		select {
		case <-ctx.Done():
			return false
		case c := <-answers:
			switch c {
			case '1':
				p.r.Notice("→ yes")
				return true
			case '2', 0x1b:
				p.r.Notice("→ no")
				return false
			}
		}
	}
}

// BeforeRun refuses, in plan mode, what the read-only sandbox cannot hold
// (tool.PlanRefuses), and asks, in the ask mode, before whatever may write
// outside the scratch list (tool.Gate): once, always for its command words
// (this session), or deny. A command runs without asking when every word
// that asked has been allowed always.
func (p *Permissions) BeforeRun(ctx context.Context, req tool.RunRequest) (bool, string) {
	if p.Mode() == tool.ModePlan && tool.PlanRefuses(req.Route) {
		p.r.Notice("plan mode: refused " + textutil.OneLine(req.Command, 100))
		return false, tool.PlanModeNote
	}
	if p.Mode() != tool.ModeAsk {
		return true, ""
	}
	reasons := req.Reasons()
	if len(reasons) == 0 {
		return true, ""
	}
	words := tool.AskWords(reasons)
	p.askMu.Lock()
	defer p.askMu.Unlock()
	p.mu.Lock()
	w, allowed := p.watch, true
	for _, word := range words {
		allowed = allowed && p.always[word]
	}
	p.mu.Unlock()
	if allowed {
		return true, ""
	}
	const denied = "The user declined to run this command (permission mode ask). Ask them or do something else."
	if w == nil {
		p.r.Notice("ask mode: refused " + textutil.Sanitize(textutil.OneLine(req.Command, 200)) + " (no one to ask)")
		return false, denied
	}
	answers := w.ask()
	defer w.endAsk()
	p.r.Notice(askQuestion(req.Command, reasons, words))
	for {
		select {
		case <-ctx.Done():
			return false, denied
		case c := <-answers:
			switch c {
			case '1':
				p.r.Notice("→ once")
				return true, ""
			case '2':
				p.mu.Lock()
				if p.always == nil {
					p.always = map[string]bool{}
				}
				for _, word := range words {
					if !p.always[word] {
						p.always[word] = true
						p.grants = append(p.grants, "command "+word+" (always this session)")
					}
				}
				p.mu.Unlock()
				p.r.Notice("→ always for " + quoteWords(words))
				return true, ""
			case '3', 0x1b:
				p.r.Notice("→ deny")
				return false, denied
			}
		}
	}
}

// maxAskReasons bounds the reasons listed in one question.
const maxAskReasons = 5

// askQuestion is the ask mode's question: the command, why it asks, and
// the words "always" would remember.
func askQuestion(cmd string, reasons []writecheck.Reason, words []string) string {
	var b strings.Builder
	b.WriteString("Run this command? (permission mode ask)\n  " + textutil.Sanitize(textutil.OneLine(cmd, 200)))
	for i, r := range reasons {
		if i == maxAskReasons {
			fmt.Fprintf(&b, "\n  … and %d more", len(reasons)-i)
			break
		}
		b.WriteString("\n  why: " + textutil.Sanitize(textutil.OneLine("`"+r.Word+"` "+r.Why, 160)))
	}
	fmt.Fprintf(&b, "\n[1] once  [2] always for %s this session  [3] deny", quoteWords(words))
	return b.String()
}

func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "`" + textutil.Sanitize(w) + "`"
	}
	return strings.Join(q, ", ")
}
