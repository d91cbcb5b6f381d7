package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// frontEnds are the packages that talk to a person (or to no one): they
// implement tool.Asker and render its questions; only the gate
// (tool.Permissions) decides permissions.
var frontEnds = []string{"internal/repl", "internal/acp", "internal/cli", "internal/headless"}

// gateOnly are the tool package's decision helpers and the tool's side of
// the gate: a front end that names one decides permissions itself (the
// mode's rules, the always-memory, plan refusals, grant decisions) instead
// of asking through tool.Asker.
var gateOnly = []string{
	"Approver", "ApprovalRequest", "Decision", "Deny", "Once", "Session", "Permanent",
	"Gate", "RunRequest", "DenyNoter",
	"InProject", "PlanRefuses", "AskWords", "AskModeNote", "PlanModeNote", "AskDeniedNote", "PlanPrompt",
}

// gateRefs lists, for the Go files (tests aside) of dir, the gate-only
// names of the tool package they refer to, as "file:line: tool.Name".
func gateRefs(t *testing.T, dir string) []string {
	t.Helper()
	const toolPath = module + "internal/tool"
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		local := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == toolPath {
				local = "tool"
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && slices.Contains(gateOnly, sel.Sel.Name) {
				pos := fset.Position(sel.Pos())
				out = append(out, filepath.Base(pos.Filename)+":"+strconv.Itoa(pos.Line)+": tool."+sel.Sel.Name)
			}
			return true
		})
	}
	return out
}

// TestOnlyTheGateDecides: the front ends (REPL, ACP, cli) reach
// permissions only through the gate (tool.Permissions) and its Asker
// types; none of them names the tool's approval interfaces or the mode's
// decision helpers, so the policy is written once.
func TestOnlyTheGateDecides(t *testing.T) {
	root := moduleRoot(t)
	for _, p := range frontEnds {
		dir := filepath.Join(root, p)
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("front end %s: %v (update the rule with the code)", p, err)
			continue
		}
		for _, ref := range gateRefs(t, dir) {
			t.Errorf("%s/%s: a front end decides permissions; ask through tool.Permissions (tool.Asker) instead", p, ref)
		}
	}
}

// The check itself works: a front end naming a decision helper is caught.
func TestGateRefsFindsDecisions(t *testing.T) {
	dir := t.TempDir()
	src := `package fe

import tl "` + module + `internal/tool"

func decide(m tl.Mode, r tl.ApprovalRequest) bool { return m == tl.ModePlan || tl.InProject(r.Resource, "") }
`
	if err := os.WriteFile(filepath.Join(dir, "fe.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(gateRefs(t, dir), "\n")
	for _, want := range []string{"tool.ApprovalRequest", "tool.InProject"} {
		if !strings.Contains(got, want) {
			t.Errorf("gateRefs lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ModePlan") || strings.Contains(got, "tool.Mode\n") {
		t.Errorf("modes are the front ends' to show:\n%s", got)
	}
}

// moduleRoot is the directory holding go.mod, above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}
