package tool

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
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

func TestInProjectAndGateWithoutAPerson(t *testing.T) {
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
	if d := NewPermissions(nil, ModeAcceptEdits, root).Approve(ctx, in); d != Once {
		t.Errorf("accept-edits inside the project: %v, want once", d)
	}
	if d := NewPermissions(nil, ModeAcceptEdits, root).Approve(ctx, ApprovalRequest{Resource: in.Resource, Refusal: "blacklisted"}); d != Deny {
		t.Errorf("accept-edits grants a refused path: %v", d)
	}
	if d := NewPermissions(nil, ModeDefault, root).Approve(ctx, in); d != Deny {
		t.Errorf("default mode without a person: %v, want deny", d)
	}
	a := NewPermissions(nil, ModePlan, root)
	if d := a.Approve(ctx, in); d != Deny || a.DenyNote(in) != PlanModeNote {
		t.Errorf("plan: %v, note %q", d, a.DenyNote(in))
	}
	if got := UnwrapPlanPrompt(PlanPrompt("do it")); got != "do it" {
		t.Errorf("UnwrapPlanPrompt = %q", got)
	}
}

// mcpReadOnly answers ReadOnly as an MCP handler whose "lookup" tool is
// annotated readOnlyHint.
type mcpReadOnly struct{ ran []string }

func (m *mcpReadOnly) Run(_ context.Context, line string) command.Result {
	m.ran = append(m.ran, line)
	return command.OK("ran")
}

func (m *mcpReadOnly) ReadOnly(_ context.Context, line string) bool {
	return router.FirstWord(line) == "mcp:docs:lookup"
}

// TestAskModeRunRequests runs commands through the real tool (a real bash
// session, the real Agent Shell) in the ask mode without a person: what
// would be asked is refused before it runs, with a note naming the word
// and the path; the rest runs.
func TestAskModeRunRequests(t *testing.T) {
	scratch := t.TempDir()
	mcp := &mcpReadOnly{}
	b, ex := newTool(t, func(o *Options) {
		o.Approver = NewPermissions(nil, ModeAsk, "")
		o.Scratch = writecheck.Checker{Scratch: []string{scratch}}
		o.Handlers = map[router.Family]command.Handler{router.FamilyMCP: mcp, router.FamilySkillScript: mcp}
	})
	cwd := ex.Cwd()
	for _, tt := range []struct {
		cmd      string
		refused  string // the word the note names; "" when it runs
		notePath string
	}{
		{"ls -la", "", ""},
		{"echo x > " + scratch + "/a", "", ""},
		{"echo x > f", "echo", "f (outside the scratch list)"},
		{"(cd " + scratch + " && rm -f a)", "", ""},
		{"cd sub 2>/dev/null; rm -rf build", "rm", "build"},
		{"write " + scratch + "/w.txt 'yes'", "", ""},
		{"write w.txt 'no'", "write", cwd + "/w.txt"},
		{"edit w.txt a b", "edit", cwd + "/w.txt"},
		{"bash rm -f x", "rm", ""},
		{"read " + scratch + "/w.txt", "", ""},
		{"mcp:docs:lookup --q x", "", ""},
		{"mcp:docs:patch --path f", "mcp:docs:patch", "readOnlyHint"},
		{"skill:pdf:pages a.pdf", "skill:pdf:pages", ""},
		{"task:general do it", "task:general", ""},
		// The shell's directory is where relative paths lead.
		{"cd " + scratch, "", ""},
		{"echo y > rel", "", ""},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			r := b.Run(context.Background(), Input{Command: tt.cmd})
			refused := strings.Contains(r.Output, "permission mode is ask")
			if refused != (tt.refused != "") {
				t.Fatalf("refused = %v, want %v; output %q", refused, tt.refused != "", r.Output)
			}
			if tt.refused != "" && (!strings.Contains(r.Output, "`"+tt.refused+"`") || !strings.Contains(r.Output, tt.notePath)) {
				t.Errorf("the note does not name %q and %q: %q", tt.refused, tt.notePath, r.Output)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(cwd, "f")); err == nil {
		t.Error("a refused redirection ran")
	}
	if b, err := os.ReadFile(filepath.Join(scratch, "w.txt")); err != nil || string(b) != "yes" {
		t.Errorf("the scratch write did not happen: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(scratch, "rel")); err != nil {
		t.Errorf("a relative write after cd into the scratch directory did not run: %v", err)
	}
	if strings.Join(mcp.ran, ",") != "mcp:docs:lookup --q x" {
		t.Errorf("extension commands that ran: %q", mcp.ran)
	}
	if ok, _ := NewPermissions(nil, ModeDefault, "").BeforeRun(context.Background(), RunRequest{
		Route: router.Route{Family: router.FamilyNative}, Command: "rm x",
		Asks: func() []writecheck.Reason { return []writecheck.Reason{{Word: "rm", Why: "writes x"}} },
	}); !ok {
		t.Error("default mode refused before running")
	}
}

func TestAskWords(t *testing.T) {
	got := AskWords([]writecheck.Reason{{Word: "rm", Why: "a"}, {Word: "cp", Why: "b"}, {Word: "rm", Why: "c"}})
	if strings.Join(got, ",") != "rm,cp" {
		t.Errorf("AskWords = %q", got)
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
	ok, note := NewPermissions(nil, ModePlan, "").BeforeRun(context.Background(), RunRequest{Route: router.Route{Family: router.FamilyTask, Name: "task:general"}, Command: "task:general do it"})
	if ok || note != PlanModeNote {
		t.Errorf("plan mode let task:general run: %v %q", ok, note)
	}
}
