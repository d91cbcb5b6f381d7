package repl

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/render"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// Asker is the REPL's permission prompt: the tool.Asker of the agent's
// permission gate (tool.Permissions), which decides and asks it one
// question at a time. It only renders the question on the renderer and
// reads the answer, a digit (or Esc), from the running turn's keys. It is
// made before the agent, whose gate asks it, and handed to the REPL, whose
// running turn gives it the keys.
type Asker struct {
	r *render.Renderer

	mu    sync.Mutex
	watch *turnWatch // the running turn's key watcher, nil between turns
}

var (
	_ tool.Asker  = (*Asker)(nil)
	_ tool.Teller = (*Asker)(nil)
)

// NewAsker returns a prompt that asks on r.
func NewAsker(r *render.Renderer) *Asker { return &Asker{r: r} }

func (p *Asker) setWatch(w *turnWatch) {
	p.mu.Lock()
	p.watch = w
	p.mu.Unlock()
}

// answerText is how an answer reads on screen.
func answerText(q tool.Question, a tool.Answer) string {
	switch a {
	case tool.AnswerOnce:
		switch q.Kind {
		case tool.AskRun:
			return "once"
		case tool.AskClone, tool.AskInstall:
			return "yes"
		}
		return "allow once"
	case tool.AnswerSession:
		return "allow for this session"
	case tool.AnswerPermanent:
		return "allow permanently"
	case tool.AnswerAlways:
		return "always for " + quoteWords(q.Words)
	}
	if q.Kind == tool.AskClone || q.Kind == tool.AskInstall {
		return "no"
	}
	return "deny"
}

// Tell shows what the mode decided without asking (tool.Teller).
func (p *Asker) Tell(q tool.Question, a tool.Answer, by tool.Decider) {
	switch by {
	case tool.ByPlan:
		if q.Kind == tool.AskRun {
			p.r.Notice("plan mode: refused " + textutil.OneLine(q.Command, 100))
			return
		}
		p.r.Notice(fmt.Sprintf("plan mode: refused %s (read-only until the plan is approved)", orCommand(q)))
	case tool.ByAcceptEdits:
		p.r.Notice("accept-edits: allowed once: " + q.Resource)
	case tool.ByRefusal:
		// Only one answer is possible: say why, and do not make the user
		// press a key for it.
		p.r.Notice(fmt.Sprintf("The sandbox blocked: %s\n  resource: %s\n  reason: %s\n"+
			"This cannot be allowed: %s\n→ deny: %s", q.Command, q.Resource, q.Reason, q.Refusal, q.Resource))
	}
}

// Ask puts q to the user (tool.Asker) and waits for a digit naming one of
// its options, Esc for deny. Between turns (no one at the keys), or when
// ctx ends, the answer is deny.
func (p *Asker) Ask(ctx context.Context, q tool.Question) tool.Answer {
	p.mu.Lock()
	w := p.watch
	p.mu.Unlock()
	if w == nil || (q.Kind == tool.AskGrant && q.Resource == "") {
		p.r.Notice(nobodyText(q))
		return tool.AnswerDeny
	}
	answers := w.ask()
	defer w.endAsk()
	// The user's thinking time is no one's running time.
	p.r.PauseClock()
	defer p.r.ResumeClock()
	opts := q.Options()
	p.r.Question(questionFrame(q, opts))
	for {
		select {
		case <-ctx.Done():
			return tool.AnswerDeny
		case c := <-answers:
			a := tool.AnswerDeny
			switch {
			case c == 0x1b:
			case c == '\r' && len(opts) > 0: // Enter: the default, the first option
				a = opts[0]
			case c >= '1' && int(c-'1') < len(opts):
				a = opts[c-'1']
			default:
				continue
			}
			switch q.Kind {
			case tool.AskGrant:
				p.r.Notice("→ " + answerText(q, a) + ": " + q.Resource)
			default:
				p.r.Notice("→ " + answerText(q, a))
			}
			return a
		}
	}
}

// nobodyText is what is said when a question finds no one at the keys.
func nobodyText(q tool.Question) string {
	switch q.Kind {
	case tool.AskGrant:
		return fmt.Sprintf("sandbox blocked %s (%s): denied, no one to ask", orCommand(q), q.Reason)
	case tool.AskRun:
		return "ask mode: refused " + textutil.Sanitize(textutil.OneLine(q.Command, 200)) + " (no one to ask)"
	}
	return confirmText(q) + ": no (no one to ask)"
}

// questionFrame is the question's title and lines, its command whole,
// then one row per option: the default (Enter) marked, the denial's key named.
func questionFrame(q tool.Question, opts []tool.Answer) (string, []string) {
	var title string
	var lines []string
	switch q.Kind {
	case tool.AskGrant:
		title = "The sandbox blocked a command"
		lines = []string{textutil.Sanitize(q.Command),
			"resource: " + textutil.Sanitize(q.Resource),
			"reason: " + textutil.Sanitize(q.Reason), "Allow?"}
	case tool.AskRun:
		title = "Run this command? (permission mode ask)"
		lines = []string{textutil.Sanitize(q.Command)}
		for i, r := range q.Reasons {
			if i == maxAskReasons {
				lines = append(lines, fmt.Sprintf("… and %d more", len(q.Reasons)-i))
				break
			}
			lines = append(lines, "why: "+textutil.Sanitize(textutil.OneLine("`"+r.Word+"` "+r.Why, 160)))
		}
	default:
		title = "Allow?"
		lines = []string{confirmText(q)}
	}
	for i, a := range opts {
		row := fmt.Sprintf("  [%d] %s", i+1, optionText(q, a))
		switch {
		case i == 0:
			row = "❯" + row[1:] + "  (Enter)"
		case a == tool.AnswerDeny:
			row += "  (Esc)"
		}
		lines = append(lines, row)
	}
	return title, lines
}

// optionText is an option as the question lists it.
func optionText(q tool.Question, a tool.Answer) string {
	switch {
	case q.Kind == tool.AskGrant && a == tool.AnswerOnce:
		return "once"
	case a == tool.AnswerSession:
		return "for this session"
	case a == tool.AnswerPermanent:
		return "permanently (sandbox.json)"
	case a == tool.AnswerAlways:
		return "always for " + quoteWords(q.Words) + " this session"
	}
	return answerText(q, a)
}

// confirmText is the yes/no question about a clone or an install.
func confirmText(q tool.Question) string {
	if q.Kind == tool.AskClone {
		return "The agent asks to clone " + textutil.Sanitize(q.URL) +
			" on this machine (skill:import; without your SSH agent, keys or git credentials). Allow?"
	}
	return "The agent asks to " + q.Text + " (skill:import). Allow?"
}

func orCommand(q tool.Question) string {
	if q.Resource != "" {
		return q.Resource
	}
	return q.Command
}

// maxAskReasons bounds the reasons listed in one question.
const maxAskReasons = 5

func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "`" + textutil.Sanitize(w) + "`"
	}
	return strings.Join(q, ", ")
}
