package tool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/writecheck"
)

// Permissions is the one permission gate of an agent: it owns the
// permission mode, the ask mode's "always for this command word" memory,
// the grants made in the session and plan approval, decides what the mode
// decides alone, and puts the rest to the person through an Asker, one
// question at a time. It is the agent's Approver (and Gate, DenyNoter);
// the front ends (REPL, ACP, synapse run) implement only Asker: they render
// a Question and map the person's reply to an Answer.
type Permissions struct {
	asker   Asker  // nil: no one to ask
	project string // the project directory accept-edits grants within

	askMu    sync.Mutex // one question at a time
	switchMu sync.Mutex // a mode switch is one step: the sandbox and the mode agree

	mu     sync.Mutex
	mode   Mode
	always map[string]bool // ask mode: command words allowed for the session
	grants []string        // lasting grants made here, for /sandbox
	sw     func(Mode) error
	allow  []Rule // the host's pre-approved commands (SetRules)
	deny   []Rule // the host's refused commands
}

// NewPermissions returns the gate for an agent working in project (the
// root accept-edits grants within), starting in mode ("" is default). a
// asks the person; nil means no one is there (synapse run): what would be
// asked is refused, with a note that says so.
func NewPermissions(a Asker, mode Mode, project string) *Permissions {
	if mode == "" {
		mode = ModeDefault
	}
	return &Permissions{asker: a, mode: mode, project: project}
}

// Asker puts a question to a person and returns the answer: the REPL's
// prompt, an ACP client's session/request_permission. It need not be
// safe for concurrent questions: the gate asks one at a time.
type Asker interface {
	Ask(ctx context.Context, q Question) Answer
}

// Rewriter is an Asker whose person may allow a command only as another
// command line (the Agent SDK host's canUseTool answering with an
// updatedInput). AskRewrite returns the answer and, when the person
// changed the command (or asked for a restart), the input to run
// instead: the gate then hands it to the tool, which routes and checks it
// like any command. Only AskRun and AskGrant questions are asked so.
type Rewriter interface {
	AskRewrite(ctx context.Context, q Question) (Answer, *Input)
}

// MaxRewrites is how many times one call's command may be changed by the
// person's answers; a further change is refused (RewriteLimitNote).
const MaxRewrites = 3

// Rewrite lets a question about a command be answered with another
// command (see Rewriter): the gate sets Next, refuses the command asked
// about, and the tool runs Next through the whole pipeline again, as the
// same call. A change the gate refuses sets Refused, the model's note.
// Without a Rewrite a changed command is refused.
type Rewrite struct {
	Original string // the command line the model wrote
	Count    int    // how many times this call's command was changed already

	Next    *Input // set by the gate: what to run instead
	Refused string // set by the gate: why a change was refused
}

// RewriteLimitNote is what the model is told when the answers kept
// changing the command.
func RewriteLimitNote(n int, cmd string) string {
	return fmt.Sprintf("Refused: the user (the host's permission callback) changed the command %d times; the last change (`%s`) was not run.", n, cmd)
}

// RewriteRefusedNote is what the model is told when a changed command
// cannot be run here.
const RewriteRefusedNote = "Refused: the user allowed only a changed command, which cannot be run in place of this one."

// Teller is an Asker that is also shown what the mode decided alone (the
// REPL tells the user that plan mode refused a command).
type Teller interface {
	Tell(q Question, a Answer, by Decider)
}

// Decider is who decided a question the person was not asked.
type Decider int

// Deciders.
const (
	ByPlan        Decider = iota + 1 // plan mode refused
	ByAcceptEdits                    // accept-edits granted inside the project
	ByRefusal                        // the resource can never be granted (sandbox blacklist)
)

// QuestionKind is what a Question is about.
type QuestionKind int

// Question kinds.
const (
	// AskGrant: the sandbox blocked a resource; grant it once, for the
	// session, permanently, or deny.
	AskGrant QuestionKind = iota + 1
	// AskRun: the ask mode, before a command that may write outside the
	// scratch list; once, always for its words, or deny.
	AskRun
	// AskClone: the model asks to clone a repository on the host.
	AskClone
	// AskInstall: the model asks to install skills into the user store.
	AskInstall
)

// Question is what the gate asks the person.
type Question struct {
	Kind    QuestionKind
	Command string // AskGrant, AskRun: the command line asked about

	Resource string // AskGrant: the exact path refused
	Reason   string // AskGrant: the sandbox's reason
	Refusal  string // AskGrant: why it can never be granted (then only denied)

	Reasons []writecheck.Reason // AskRun: why it asks, one per part
	Words   []string            // AskRun: the words "always" remembers

	// Original is the command the model wrote, when Command is the
	// person's change of it (see Rewrite).
	Original string
	// Hook (AskRun), when set, is why a PreToolUse hook asked for this
	// question, which the mode alone would not have asked.
	Hook string

	URL string // AskClone: the repository

	Source string   // AskInstall: where the skills come from
	Skills []string // AskInstall: their names
	Text   string   // AskInstall: what the install does, in words
}

// Answer is the person's reply to a Question.
type Answer int

// Answers. Unanswered is no one's: nobody was there to ask.
const (
	Unanswered Answer = iota
	AnswerDeny
	AnswerOnce
	AnswerSession   // AskGrant: for the session
	AnswerPermanent // AskGrant: now and in sandbox.json
	AnswerAlways    // AskRun: always for its words, this session
)

// Options are the answers q offers, in the order front ends show them.
func (q Question) Options() []Answer {
	switch q.Kind {
	case AskGrant:
		if q.Refusal != "" {
			return []Answer{AnswerDeny}
		}
		return []Answer{AnswerOnce, AnswerSession, AnswerPermanent, AnswerDeny}
	case AskRun:
		return []Answer{AnswerOnce, AnswerAlways, AnswerDeny}
	}
	return []Answer{AnswerOnce, AnswerDeny}
}

// AskDeniedNote is what the model is told when the person declines a
// command in the ask mode.
const AskDeniedNote = "The user declined to run this command (permission mode ask). Ask them or do something else."

// The gate answers the tool's questions.
var (
	_ Approver  = (*Permissions)(nil)
	_ Gate      = (*Permissions)(nil)
	_ DenyNoter = (*Permissions)(nil)
)

// Mode is the permission mode.
func (p *Permissions) Mode() Mode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// SetSwitch sets what carries out a mode switch before the gate follows
// it (the sandbox read-only for plan, or back: app.ModeSwitch); it may
// refuse. Without one, modes cannot be switched.
func (p *Permissions) SetSwitch(f func(Mode) error) {
	p.mu.Lock()
	p.sw = f
	p.mu.Unlock()
}

// ErrNoModes is SetMode's error when the session has no mode switch.
var ErrNoModes = errors.New("permission modes are not available in this session")

// SetMode switches the permission mode: the switch first (the sandbox),
// then the answers. Switches are serialised, so the sandbox's state and
// the mode always agree.
func (p *Permissions) SetMode(m Mode) error {
	p.switchMu.Lock()
	defer p.switchMu.Unlock()
	p.mu.Lock()
	old, sw := p.mode, p.sw
	p.mu.Unlock()
	if m == old {
		return nil
	}
	if sw == nil {
		return ErrNoModes
	}
	if err := sw(m); err != nil {
		return err
	}
	p.mu.Lock()
	p.mode = m
	p.mu.Unlock()
	return nil
}

// ErrNoPlan is ApprovePlan's error outside plan mode.
var ErrNoPlan = errors.New("there is no plan to approve: the mode is not plan")

// ApprovePlan approves the plan made in plan mode: the mode becomes
// default and the workspace writable again.
func (p *Permissions) ApprovePlan() error {
	if p.Mode() != ModePlan {
		return ErrNoPlan
	}
	return p.SetMode(ModeDefault)
}

// Prompt is the user's prompt as the model gets it in the current mode
// (plan mode asks for a plan), with that mode.
func (p *Permissions) Prompt(input string) (Mode, string) {
	m := p.Mode()
	if m == ModePlan {
		return m, PlanPrompt(input)
	}
	return m, input
}

// Grants are the lasting grants the person made in this session, as
// "path (allow for this session)" or "command rm (always this session)".
func (p *Permissions) Grants() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.grants)
}

// ask puts q to the person, one question at a time (the caller holds askMu).
func (p *Permissions) ask(ctx context.Context, q Question) Answer {
	a, _ := p.askRewrite(ctx, q, nil)
	return a
}

// askRewrite is ask for a question whose answer may change the command
// (rw set, q an AskRun or AskGrant): a change goes to rw.Take and the
// answer is AnswerDeny and rw.Next is set (the command asked about does
// not run; the new one is asked about in turn), or a refused change:
// AnswerDeny and the note, also in rw.Refused.
func (p *Permissions) askRewrite(ctx context.Context, q Question, rw *Rewrite) (Answer, string) {
	if p.asker == nil {
		return Unanswered, ""
	}
	if ctx.Err() != nil {
		return AnswerDeny, ""
	}
	r, ok := p.asker.(Rewriter)
	if !ok || (q.Kind != AskRun && q.Kind != AskGrant) {
		return p.asker.Ask(ctx, q), ""
	}
	if rw != nil && rw.Original != "" && rw.Original != q.Command {
		q.Original = rw.Original
	}
	a, in := r.AskRewrite(ctx, q)
	if in != nil && !in.Restart && strings.TrimSpace(in.Command) == strings.TrimSpace(q.Command) {
		in = nil // the same command: no change
	}
	var note string
	switch {
	case in == nil:
		return a, ""
	case rw == nil:
		return AnswerDeny, RewriteRefusedNote
	case rw.Count >= MaxRewrites:
		note = RewriteLimitNote(rw.Count+1, in.Command)
	default:
		rw.Next = in
		return AnswerDeny, ""
	}
	rw.Refused = note
	return AnswerDeny, note
}

func (p *Permissions) tell(q Question, a Answer, by Decider) {
	if t, ok := p.asker.(Teller); ok {
		t.Tell(q, a, by)
	}
}

// Approve implements Approver: plan mode refuses (DenyNote says why), a
// resource that can never be granted is denied, accept-edits grants once
// inside the project; otherwise the person is asked.
func (p *Permissions) Approve(ctx context.Context, req ApprovalRequest) Decision {
	q := Question{Kind: AskGrant, Command: req.Command, Resource: req.Resource, Reason: req.Reason, Refusal: req.Refusal}
	p.askMu.Lock()
	defer p.askMu.Unlock()
	mode := p.Mode()
	switch {
	case mode == ModePlan:
		p.tell(q, AnswerDeny, ByPlan)
		return Deny
	case req.Refusal != "":
		p.tell(q, AnswerDeny, ByRefusal)
		return Deny
	case mode == ModeAcceptEdits && InProject(req.Resource, p.project):
		p.tell(q, AnswerOnce, ByAcceptEdits)
		return Once
	}
	var d Decision
	a, _ := p.askRewrite(ctx, q, req.Rewrite)
	switch a {
	case AnswerOnce:
		return Once
	case AnswerSession:
		d = Session
	case AnswerPermanent:
		d = Permanent
	default:
		return Deny
	}
	p.mu.Lock()
	p.grants = append(p.grants, req.Resource+" ("+grantText(d)+")")
	p.mu.Unlock()
	return d
}

func grantText(d Decision) string {
	if d == Permanent {
		return "allow permanently"
	}
	return "allow for this session"
}

// DenyNote implements DenyNoter: plan mode's refusals tell the model to
// plan rather than to ask again.
func (p *Permissions) DenyNote(ApprovalRequest) string {
	if p.Mode() == ModePlan {
		return PlanModeNote
	}
	return ""
}

// BeforeRun implements Gate: plan mode refuses what the read-only sandbox
// cannot hold (PlanRefuses); the ask mode asks before whatever may write
// outside the scratch list: once, always for the words that asked (this
// session), or deny. A command runs without asking when every word that
// asked has been allowed always. With no one to ask it is refused, and the
// model is told why (AskModeNote).
func (p *Permissions) BeforeRun(ctx context.Context, req RunRequest) (bool, string) {
	mode := p.Mode()
	if mode == ModePlan && PlanRefuses(req.Route) {
		p.tell(Question{Kind: AskRun, Command: req.Command}, AnswerDeny, ByPlan)
		return false, PlanModeNote
	}
	if spec := p.ruled(true, req.Command); spec != "" {
		return false, DisallowedNote(spec)
	}
	if why := preDecision(ctx).Ask; why != "" {
		return p.hookAsks(ctx, req, why)
	}
	if mode != ModeAsk || p.ruled(false, req.Command) != "" {
		return true, ""
	}
	reasons := req.Reasons()
	if len(reasons) == 0 {
		return true, ""
	}
	words := AskWords(reasons)
	p.askMu.Lock()
	defer p.askMu.Unlock()
	if p.allowedAlways(words) {
		return true, ""
	}
	a, note := p.askRewrite(ctx, Question{Kind: AskRun, Command: req.Command, Reasons: reasons, Words: words}, req.Rewrite)
	if note != "" || (req.Rewrite != nil && req.Rewrite.Next != nil) {
		return false, note
	}
	switch a {
	case AnswerOnce:
		return true, ""
	case AnswerAlways:
		p.mu.Lock()
		if p.always == nil {
			p.always = map[string]bool{}
		}
		for _, w := range words {
			if !p.always[w] {
				p.always[w] = true
				p.grants = append(p.grants, "command "+w+" (always this session)")
			}
		}
		p.mu.Unlock()
		return true, ""
	case Unanswered:
		return false, AskModeNote(reasons)
	}
	return false, AskDeniedNote
}

// hookAsks puts a command to the person because a PreToolUse hook asked
// (permissionDecision "ask"), whatever the mode or the allow rules say:
// once or deny ("always" is once: the hook asks again next time). With no
// one to ask it is refused.
func (p *Permissions) hookAsks(ctx context.Context, req RunRequest, why string) (bool, string) {
	word := firstWord(req.Command)
	q := Question{Kind: AskRun, Command: req.Command, Hook: why,
		Reasons: []writecheck.Reason{{Word: word, Why: "needs approval: " + why}}, Words: []string{word}}
	p.askMu.Lock()
	defer p.askMu.Unlock()
	a, note := p.askRewrite(ctx, q, req.Rewrite)
	switch {
	case note != "" || (req.Rewrite != nil && req.Rewrite.Next != nil):
		return false, note
	case a == AnswerOnce || a == AnswerAlways:
		return true, ""
	case a == Unanswered:
		return false, HookAskNote(why)
	}
	return false, AskDeniedNote
}

// firstWord is a command line's first word (what "always" would name).
func firstWord(cmd string) string {
	if f := strings.Fields(cmd); len(f) > 0 {
		return f[0]
	}
	return cmd
}

func (p *Permissions) allowedAlways(words []string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range words {
		if !p.always[w] {
			return false
		}
	}
	return true
}

// Confirm asks a yes/no question about something the model asked the host
// to do outside the sandbox (AskClone, AskInstall): true when the person
// allowed it. No one to ask is no.
func (p *Permissions) Confirm(ctx context.Context, q Question) bool {
	p.askMu.Lock()
	defer p.askMu.Unlock()
	return p.ask(ctx, q) == AnswerOnce
}
