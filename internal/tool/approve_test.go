package tool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
)

// policyExec blocks every resource a command names (after "touch ") unless it
// is whitelisted, like the sandbox manager does, and records the grants.
type policyExec struct {
	fakeExec
	mu        sync.Mutex
	runtime   []string
	permanent []string
	log       []string
}

func newPolicyExec(blockedPaths ...string) *policyExec {
	p := &policyExec{}
	p.cwd = "/workspace"
	p.answer = func(cmd string) command.Result {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, r := range blockedPaths {
			if strings.Contains(cmd, r) && !slices.Contains(p.runtime, r) {
				return command.Result{Stderr: "touch: " + r + ": Read-only file system", ExitCode: 1,
					Blocked: true, BlockedReason: "not in the write whitelist", BlockedResource: r}
			}
		}
		return command.OK("done\n")
	}
	return p
}

func (p *policyExec) AddRuntimeWhitelist(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runtime = append(p.runtime, path)
	p.log = append(p.log, "add-runtime "+path)
	return nil
}

func (p *policyExec) RemoveRuntimeWhitelist(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i := slices.Index(p.runtime, path); i >= 0 {
		p.runtime = slices.Delete(p.runtime, i, i+1)
	}
	p.log = append(p.log, "remove-runtime "+path)
	return nil
}

func (p *policyExec) AddPermanentWhitelist(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.permanent = append(p.permanent, path)
	p.runtime = append(p.runtime, path)
	p.log = append(p.log, "add-permanent "+path)
	return nil
}

type recordingApprover struct {
	decisions []Decision
	asked     []ApprovalRequest
}

func (a *recordingApprover) Approve(_ context.Context, req ApprovalRequest) Decision {
	a.asked = append(a.asked, req)
	d := a.decisions[0]
	if len(a.decisions) > 1 {
		a.decisions = a.decisions[1:]
	}
	return d
}

func TestApprovalDecisions(t *testing.T) {
	const res = "/data/out.txt"
	const cmd = "touch /data/out.txt"
	tests := []struct {
		decision   Decision
		wantBlock  bool
		wantLog    []string
		wantCalls  int
		wantNote   string
		wantRemain []string // runtime whitelist afterwards
	}{
		{Deny, true, nil, 1, "The user denied access to /data/out.txt.", nil},
		{Once, false, []string{"add-runtime " + res, "remove-runtime " + res}, 2, "", nil},
		{Session, false, []string{"add-runtime " + res}, 2, "", []string{res}},
		{Permanent, false, []string{"add-permanent " + res}, 2, "", []string{res}},
	}
	for _, tt := range tests {
		t.Run(tt.decision.String(), func(t *testing.T) {
			px := newPolicyExec(res)
			ap := &recordingApprover{decisions: []Decision{tt.decision}}
			b := New(Options{Exec: px, Approver: ap})
			r := b.Run(context.Background(), Input{Command: cmd})
			if len(ap.asked) == 1 {
				ap.asked[0].Rewrite = nil
			}
			if len(ap.asked) != 1 || ap.asked[0] != (ApprovalRequest{Command: cmd, Resource: res, Reason: "not in the write whitelist"}) {
				t.Errorf("asked %+v", ap.asked)
			}
			blocked := r.Facts.Type == ExtrasTypeSandboxBlocked
			if blocked != tt.wantBlock || r.IsError {
				t.Errorf("result %+v, want blocked=%v", r, tt.wantBlock)
			}
			if !slices.Equal(px.log, tt.wantLog) {
				t.Errorf("grants %q, want %q (exact resource only)", px.log, tt.wantLog)
			}
			if n := len(px.Calls()); n != tt.wantCalls {
				t.Errorf("executor calls = %d, want %d", n, tt.wantCalls)
			}
			if tt.wantNote != "" && !strings.HasSuffix(r.Output, tt.wantNote) {
				t.Errorf("output %q lacks %q", r.Output, tt.wantNote)
			}
			if !tt.wantBlock && r.Output != "done" {
				t.Errorf("retry output = %q", r.Output)
			}
			if !slices.Equal(px.runtime, tt.wantRemain) {
				t.Errorf("runtime whitelist = %q, want %q", px.runtime, tt.wantRemain)
			}
			if got := r.Facts.Approval; !slices.Equal(got, []string{tt.decision.String()}) {
				t.Errorf("approval extra = %v", got)
			}
			for _, c := range px.Calls() {
				if c.cwd != "/workspace" {
					t.Errorf("retry ran in %q", c.cwd)
				}
			}
		})
	}
}

func TestApprovalSeveralResourcesAndNoLoop(t *testing.T) {
	px := newPolicyExec("/a", "/b")
	ap := &recordingApprover{decisions: []Decision{Once}}
	b := New(Options{Exec: px, Approver: ap})
	r := b.Run(context.Background(), Input{Command: "cp /a /b"})
	if r.Output != "done" || len(ap.asked) != 2 || ap.asked[0].Resource != "/a" || ap.asked[1].Resource != "/b" {
		t.Fatalf("got %+v, asked %+v", r, ap.asked)
	}
	want := []string{"add-runtime /a", "add-runtime /b", "remove-runtime /a", "remove-runtime /b"}
	if !slices.Equal(px.log, want) {
		t.Errorf("log = %q, want %q", px.log, want)
	}

	// A grant that does not unblock is not asked again forever.
	stuck := &policyExec{}
	stuck.cwd = "/w"
	stuck.answer = func(string) command.Result {
		return command.Result{Blocked: true, BlockedResource: "/x", BlockedReason: "r", ExitCode: 1}
	}
	ap = &recordingApprover{decisions: []Decision{Session}}
	b = New(Options{Exec: stuck, Approver: ap})
	r = b.Run(context.Background(), Input{Command: "touch /x"})
	if r.Facts.Type != ExtrasTypeSandboxBlocked || len(ap.asked) != 1 || len(stuck.Calls()) != 2 {
		t.Errorf("got %+v, asked %d, calls %d", r, len(ap.asked), len(stuck.Calls()))
	}
}

func TestNoApproverLeavesBlocked(t *testing.T) {
	px := newPolicyExec("/data")
	b := New(Options{Exec: px})
	r := b.Run(context.Background(), Input{Command: "touch /data"})
	if r.Facts.Type != ExtrasTypeSandboxBlocked || len(px.log) != 0 || len(px.Calls()) != 1 {
		t.Errorf("got %+v", r)
	}
}

func TestAllowPermanentResolvesPaths(t *testing.T) {
	px := newPolicyExec()
	b := New(Options{Exec: px, Home: "/home/u"})
	for _, tt := range []struct{ path, cwd, want string }{
		{"/extra", "/workspace", "/extra"},
		{"data/../out", "/workspace", "/workspace/out"},
		{"~/cache", "/workspace", "/home/u/cache"},
	} {
		if err := b.AllowPermanent(tt.path, tt.cwd); err != nil {
			t.Fatal(err)
		}
		if got := px.permanent[len(px.permanent)-1]; got != tt.want {
			t.Errorf("AllowPermanent(%q, %q) granted %q, want %q", tt.path, tt.cwd, got, tt.want)
		}
	}
	if err := New(Options{}).AllowPermanent("/x", "/"); err == nil || !strings.Contains(err.Error(), "no sandbox manager") {
		t.Errorf("without a whitelist: %v", err)
	}
	if err := b.AllowPermanent("rel", ""); err == nil {
		t.Errorf("relative path without cwd accepted")
	}
}
