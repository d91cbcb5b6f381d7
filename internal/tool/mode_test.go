package tool

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/synapse-agent/synapse/internal/router"
)

func TestParseModeAndCycle(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Mode
		ok   bool
	}{
		{"plan", ModePlan, true}, {"DEFAULT", ModeDefault, true}, {"accept-edits", ModeAcceptEdits, true},
		{"yolo", "", false}, {"", "", false},
	} {
		got, err := ParseMode(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseMode(%q) = %q, %v", tt.in, got, err)
		}
	}
	m, seen := ModeDefault, map[Mode]bool{}
	for range Modes {
		seen[m] = true
		m = m.Next()
	}
	if m != ModeDefault || len(seen) != len(Modes) {
		t.Errorf("Next does not cycle through every mode back to default: %v", seen)
	}
}

func TestInProjectAndModeApprover(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "sub", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ProjectRoot(sub); got != root {
		t.Errorf("ProjectRoot(%s) = %s, want the repository root %s", sub, got, root)
	}
	plain := t.TempDir()
	if got := ProjectRoot(plain); got != plain {
		t.Errorf("ProjectRoot outside a repository = %s, want %s", got, plain)
	}
	for _, tt := range []struct {
		path string
		want bool
	}{
		{filepath.Join(root, "top.txt"), true},
		{filepath.Join(root, "sub", "x"), true},
		{filepath.Join(root, ".git", "hooks", "pre-commit"), false},
		{root, false},
		{filepath.Join(root, "..", "outside"), false},
		{"/etc/passwd", false},
		{root + "-sibling/x", false},
	} {
		if got := InProject(tt.path, root); got != tt.want {
			t.Errorf("InProject(%s) = %v, want %v", tt.path, got, tt.want)
		}
	}
	ctx := context.Background()
	in := ApprovalRequest{Resource: filepath.Join(root, "top.txt")}
	if d := (ModeApprover{Mode: ModeAcceptEdits, Project: root}).Approve(ctx, in); d != Once {
		t.Errorf("accept-edits inside the project: %v, want once", d)
	}
	if d := (ModeApprover{Mode: ModeAcceptEdits, Project: root}).Approve(ctx, ApprovalRequest{Resource: in.Resource, Refusal: "blacklisted"}); d != Deny {
		t.Errorf("accept-edits grants a refused path: %v", d)
	}
	if d := (ModeApprover{Mode: ModeDefault, Project: root}).Approve(ctx, in); d != Deny {
		t.Errorf("default mode without a person: %v, want deny", d)
	}
	a := ModeApprover{Mode: ModePlan, Project: root}
	if d := a.Approve(ctx, in); d != Deny || a.DenyNote(in) != PlanModeNote {
		t.Errorf("plan: %v, note %q", d, a.DenyNote(in))
	}
	if got := UnwrapPlanPrompt(PlanPrompt("do it")); got != "do it" {
		t.Errorf("UnwrapPlanPrompt = %q", got)
	}
}

func TestNeedsAsk(t *testing.T) {
	native := router.Route{Family: router.FamilyNative}
	for _, tt := range []struct {
		route router.Route
		cmd   string
		want  bool
	}{
		{router.Route{Family: router.FamilyBuiltin, Name: "write"}, "write a 'x'", true},
		{router.Route{Family: router.FamilyBuiltin, Name: "edit"}, "edit a", true},
		{router.Route{Family: router.FamilyBuiltin, Name: "read"}, "read a", false},
		{router.Route{Family: router.FamilyTask, Name: "task:explore"}, "task:explore x", false},
		{native, "ls -la | grep -i go && cat go.mod", false},
		{native, "git status; git diff HEAD", false},
		{native, "echo x > f", true},
		{native, "cat a >> b", true},
		{native, "rm -rf build", true},
		{native, "git commit -m x", true},
		{native, "ls && make", true},
		{native, "echo $(touch x)", true},
	} {
		if got := NeedsAsk(tt.route, tt.cmd); got != tt.want {
			t.Errorf("NeedsAsk(%q) = %v, want %v", tt.cmd, got, tt.want)
		}
	}
	a := ModeApprover{Mode: ModeAsk}
	if ok, note := a.BeforeRun(context.Background(), native, "rm x"); ok || note == "" {
		t.Errorf("ask mode without a person ran a write: %v %q", ok, note)
	}
	if ok, _ := a.BeforeRun(context.Background(), native, "ls"); !ok {
		t.Error("ask mode refused ls")
	}
	if ok, _ := (ModeApprover{Mode: ModeDefault}).BeforeRun(context.Background(), native, "rm x"); !ok {
		t.Error("default mode refused before running")
	}
}

func TestPlanRefuses(t *testing.T) {
	for _, tt := range []struct {
		route router.Route
		want  bool
	}{
		{router.Route{Family: router.FamilyTask, Name: "task:general"}, true},
		{router.Route{Family: router.FamilyTask, Name: "task:explore"}, false},
		{router.Route{Family: router.FamilyMCP, Name: "mcp:s:t"}, true},
		{router.Route{Family: router.FamilySkillScript, Name: "skill:a:b"}, true},
		{router.Route{Family: router.FamilySkill, Name: "skill:import"}, true},
		{router.Route{Family: router.FamilySkill, Name: "skill:list"}, false},
		{router.Route{Family: router.FamilyNative, Name: "ls"}, false}, // the read-only sandbox holds it
	} {
		if got := PlanRefuses(tt.route); got != tt.want {
			t.Errorf("PlanRefuses(%s) = %v, want %v", tt.route.Name, got, tt.want)
		}
	}
	ok, note := ModeApprover{Mode: ModePlan}.BeforeRun(context.Background(), router.Route{Family: router.FamilyTask, Name: "task:general"}, "task:general do it")
	if ok || note != PlanModeNote {
		t.Errorf("plan mode let task:general run: %v %q", ok, note)
	}
}
