package tool

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// scriptedAsker answers every question with answer and records them.
type scriptedAsker struct {
	answer Answer
	asked  []Question
	told   []Decider
}

func (a *scriptedAsker) Ask(_ context.Context, q Question) Answer {
	a.asked = append(a.asked, q)
	return a.answer
}

func (a *scriptedAsker) Tell(_ Question, _ Answer, by Decider) { a.told = append(a.told, by) }

// TestGateDecisions is the gate's table: mode × request × what was
// remembered × who answers. asked says whether the person was asked.
func TestGateDecisions(t *testing.T) {
	project := t.TempDir()
	inside := filepath.Join(project, "a.txt")
	native := router.Route{Family: router.FamilyNative, Name: "rm"}
	general := router.Route{Family: router.FamilyTask, Name: "task:general"}
	rmReasons := []writecheck.Reason{{Word: "rm", Why: "writes y"}}
	run := func(route router.Route, reasons []writecheck.Reason) RunRequest {
		return RunRequest{Route: route, Command: "cmd", Asks: func() []writecheck.Reason { return reasons }}
	}
	type req struct {
		grant *ApprovalRequest
		run   *RunRequest
	}
	grant := func(r ApprovalRequest) req { return req{grant: &r} }
	runs := func(r RunRequest) req { return req{run: &r} }
	for _, tt := range []struct {
		name     string
		mode     Mode
		req      req
		always   []string // words remembered before
		nobody   bool     // no asker (synapse run)
		answer   Answer
		want     string // a Decision for grants, "run" or the note's start for runs
		asked    bool
		told     Decider
		grantLen int // grants recorded after
	}{
		{name: "default grant asks", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerSession, want: "session", asked: true, grantLen: 1},
		{name: "default grant once records nothing", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerOnce, want: "once", asked: true},
		{name: "default grant permanent", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerPermanent, want: "permanent", asked: true, grantLen: 1},
		{name: "default grant denied", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerDeny, want: "deny", asked: true},
		{name: "default grant nobody", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/opt/x"}), nobody: true, want: "deny"},
		{name: "refusal never asks", mode: ModeDefault, req: grant(ApprovalRequest{Resource: "/root/.ssh", Refusal: "blacklisted"}), answer: AnswerPermanent, want: "deny", told: ByRefusal},
		{name: "accept-edits inside", mode: ModeAcceptEdits, req: grant(ApprovalRequest{Resource: inside}), answer: AnswerDeny, want: "once", told: ByAcceptEdits},
		{name: "accept-edits inside nobody", mode: ModeAcceptEdits, req: grant(ApprovalRequest{Resource: inside}), nobody: true, want: "once"},
		{name: "accept-edits refused inside", mode: ModeAcceptEdits, req: grant(ApprovalRequest{Resource: inside, Refusal: "blacklisted"}), answer: AnswerOnce, want: "deny", told: ByRefusal},
		{name: "accept-edits outside asks", mode: ModeAcceptEdits, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerOnce, want: "once", asked: true},
		{name: "plan grant refused", mode: ModePlan, req: grant(ApprovalRequest{Resource: inside}), answer: AnswerOnce, want: "deny", told: ByPlan},
		{name: "ask grant asks", mode: ModeAsk, req: grant(ApprovalRequest{Resource: "/opt/x"}), answer: AnswerOnce, want: "once", asked: true},

		{name: "default runs without asking", mode: ModeDefault, req: runs(run(native, rmReasons)), want: "run"},
		{name: "accept-edits runs without asking", mode: ModeAcceptEdits, req: runs(run(general, rmReasons)), want: "run"},
		{name: "plan refuses a sub-agent", mode: ModePlan, req: runs(run(general, nil)), want: PlanModeNote, told: ByPlan},
		{name: "plan lets native run (read-only sandbox)", mode: ModePlan, req: runs(run(native, rmReasons)), want: "run"},
		{name: "ask without reasons runs", mode: ModeAsk, req: runs(run(native, nil)), want: "run"},
		{name: "ask once", mode: ModeAsk, req: runs(run(native, rmReasons)), answer: AnswerOnce, want: "run", asked: true},
		{name: "ask always", mode: ModeAsk, req: runs(run(native, rmReasons)), answer: AnswerAlways, want: "run", asked: true, grantLen: 1},
		{name: "ask deny", mode: ModeAsk, req: runs(run(native, rmReasons)), answer: AnswerDeny, want: AskDeniedNote, asked: true},
		{name: "ask nobody", mode: ModeAsk, req: runs(run(native, rmReasons)), nobody: true, want: "Refused without running it"},
		{name: "ask remembered", mode: ModeAsk, req: runs(run(native, rmReasons)), always: []string{"rm"}, answer: AnswerDeny, want: "run"},
		{name: "ask remembered one word of two", mode: ModeAsk, always: []string{"rm"}, answer: AnswerDeny, want: AskDeniedNote, asked: true,
			req: runs(run(native, []writecheck.Reason{{Word: "rm"}, {Word: "touch"}}))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &scriptedAsker{answer: tt.answer}
			var g *Permissions
			if tt.nobody {
				g = NewPermissions(nil, tt.mode, project)
			} else {
				g = NewPermissions(a, tt.mode, project)
			}
			g.always = map[string]bool{}
			for _, w := range tt.always {
				g.always[w] = true
			}
			var got string
			if tt.req.grant != nil {
				got = g.Approve(context.Background(), *tt.req.grant).String()
			} else {
				ok, note := g.BeforeRun(context.Background(), *tt.req.run)
				got = note
				if ok {
					got = "run"
				}
			}
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("decision %q, want %q", got, tt.want)
			}
			if asked := len(a.asked) > 0; asked != tt.asked {
				t.Errorf("asked %v, want %v", asked, tt.asked)
			}
			if tt.told != 0 && !slices.Contains(a.told, tt.told) {
				t.Errorf("told %v, want %v", a.told, tt.told)
			}
			if n := len(g.Grants()); n != tt.grantLen {
				t.Errorf("grants %q, want %d", g.Grants(), tt.grantLen)
			}
		})
	}
}

// "always" is remembered: the next command with the same word runs
// without asking, one with another word asks again.
func TestGateRemembersAlways(t *testing.T) {
	a := &scriptedAsker{answer: AnswerAlways}
	g := NewPermissions(a, ModeAsk, "")
	req := func(words ...string) RunRequest {
		var rs []writecheck.Reason
		for _, w := range words {
			rs = append(rs, writecheck.Reason{Word: w, Why: "writes"})
		}
		return RunRequest{Route: router.Route{Family: router.FamilyNative}, Command: strings.Join(words, " && "), Asks: func() []writecheck.Reason { return rs }}
	}
	ctx := context.Background()
	for _, words := range [][]string{{"rm"}, {"rm"}, {"rm", "touch"}, {"touch"}} {
		if ok, note := g.BeforeRun(ctx, req(words...)); !ok {
			t.Fatalf("%v refused: %q", words, note)
		}
	}
	if len(a.asked) != 2 || !slices.Equal(a.asked[1].Words, []string{"rm", "touch"}) {
		t.Errorf("questions %+v", a.asked)
	}
	if got := strings.Join(g.Grants(), ";"); got != "command rm (always this session);command touch (always this session)" {
		t.Errorf("grants %q", got)
	}
}

// blockingAsker holds each question until released, counting how many are
// open at once.
type blockingAsker struct {
	mu       sync.Mutex
	open     int
	maxOpen  int
	released chan struct{}
}

func (a *blockingAsker) Ask(context.Context, Question) Answer {
	a.mu.Lock()
	a.open++
	a.maxOpen = max(a.maxOpen, a.open)
	a.mu.Unlock()
	<-a.released
	a.mu.Lock()
	a.open--
	a.mu.Unlock()
	return AnswerOnce
}

// Questions from parallel calls (a task batch) are asked one at a time.
func TestGateAsksOneAtATime(t *testing.T) {
	a := &blockingAsker{released: make(chan struct{})}
	g := NewPermissions(a, ModeAsk, "")
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			g.Approve(ctx, ApprovalRequest{Resource: fmt.Sprint("/opt/", i)})
		})
	}
	wg.Go(func() { g.Confirm(ctx, Question{Kind: AskClone, URL: "u"}) })
	for range 4 {
		select {
		case a.released <- struct{}{}:
		case <-time.After(5 * time.Second):
			t.Fatal("a question was never asked")
		}
	}
	wg.Wait()
	if a.maxOpen != 1 {
		t.Errorf("%d questions open at once", a.maxOpen)
	}
}

// Modes switch through the switch func; plan approval is a switch to
// default, only from plan.
func TestGateModesAndPlanApproval(t *testing.T) {
	g := NewPermissions(nil, "", "")
	if g.Mode() != ModeDefault {
		t.Fatalf("starting mode %q", g.Mode())
	}
	if err := g.SetMode(ModePlan); !errors.Is(err, ErrNoModes) {
		t.Errorf("without a switch: %v", err)
	}
	var switched []Mode
	g.SetSwitch(func(m Mode) error {
		if m == ModeAsk {
			return errors.New("no")
		}
		switched = append(switched, m)
		return nil
	})
	if err := g.ApprovePlan(); !errors.Is(err, ErrNoPlan) {
		t.Errorf("approve outside plan: %v", err)
	}
	if err := g.SetMode(ModePlan); err != nil || g.Mode() != ModePlan {
		t.Fatalf("plan: %v %q", err, g.Mode())
	}
	if m, got := g.Prompt("x"); m != ModePlan || got != PlanPrompt("x") {
		t.Errorf("plan prompt %q", got)
	}
	if err := g.SetMode(ModeAsk); err == nil || g.Mode() != ModePlan {
		t.Errorf("a refused switch changed the mode: %v %q", err, g.Mode())
	}
	if err := g.ApprovePlan(); err != nil || g.Mode() != ModeDefault {
		t.Errorf("approve: %v %q", err, g.Mode())
	}
	if !slices.Equal(switched, []Mode{ModePlan, ModeDefault}) {
		t.Errorf("switches %v", switched)
	}
	if g.Confirm(context.Background(), Question{Kind: AskInstall}) {
		t.Error("no one to ask said yes")
	}
}
