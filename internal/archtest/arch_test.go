package archtest

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/synapse-agent/synapse/"

// pkg is one package as `go list` reports it.
type pkg struct {
	ImportPath string
	Doc        string
	Deps       []string // transitive, without tests
}

// listPackages runs `go list -deps` style listing of every package of the
// module (their transitive dependencies included in Deps).
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Doc,Deps", module+"...")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		var ours []string
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module) {
				ours = append(ours, strings.TrimPrefix(d, module))
			}
		}
		p.Deps = ours
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

// rule forbids packages matching from (a path, or "*" for every package
// not in except) to depend, directly or not, on to.
type rule struct {
	from   string
	to     string
	except []string
	reason string
}

// leaves import nothing of ours, so that any layer may use them.
var leaves = []string{"internal/command", "internal/todo", "internal/fsutil", "internal/agentsh/registry", "internal/cmdline", "internal/writecheck",
	"internal/llm", "internal/textutil", "internal/testutil", "internal/debuglog"}

var rules = []rule{
	// Core knows no screen.
	{from: "*", to: "internal/repl", except: []string{"cmd/synapse", "internal/cli"},
		reason: "the REPL is a UI: only cli wires it (core knows no screen)"},
	{from: "*", to: "internal/view", except: []string{"cmd/synapse", "internal/cli", "internal/repl"},
		reason: "the view of agent events is UI: only cli and the REPL draw with it"},
	{from: "*", to: "internal/render", except: []string{"cmd/synapse", "internal/cli", "internal/repl", "internal/view"},
		reason: "the terminal renderer is UI: only cli, the REPL and the view draw"},
	{from: "internal/app", to: "internal/repl", reason: "app builds the agent; cli wires the UI"},
	{from: "internal/app", to: "internal/render", reason: "app builds the agent; cli wires the UI"},
	// Layers point one way.
	{from: "*", to: "internal/cli", except: []string{"cmd/synapse"}, reason: "cli is the top: only main calls it"},
	{from: "*", to: "internal/app", except: []string{"cmd/synapse", "internal/cli", "internal/acp"},
		reason: "app is the composition root: only the front ends (cli, acp) build agents with it"},
	{from: "internal/agent", to: "internal/subagent",
		reason: "agent declares the interface it needs; app injects the sub-agent handler (a sub-agent is an agent)"},
	{from: "internal/agent", to: "internal/sandbox", reason: "the agent loop reaches commands only through the tool"},
	{from: "internal/agent", to: "internal/shell", reason: "the agent loop reaches commands only through the tool"},
	{from: "internal/tool", to: "internal/agentsh", reason: "tool reaches its layers as command.Handlers keyed by router family"},
	{from: "internal/tool", to: "internal/subagent", reason: "tool reaches its layers as command.Handlers keyed by router family"},
	{from: "internal/tool", to: "internal/skills", reason: "tool reaches its layers as command.Handlers keyed by router family"},
	{from: "internal/tool", to: "internal/mcp", reason: "tool reaches its layers as command.Handlers keyed by router family"},
	{from: "internal/tool", to: "internal/shell", reason: "tool reaches the native layer through its Executor interface"},
	{from: "internal/tool", to: "internal/sandbox", reason: "tool reaches the native layer through its Executor interface"},
	{from: "internal/sandbox", to: "internal/shell", reason: "app hands the manager a StartSession func; sandbox knows no shell"},
	{from: "internal/render", to: "internal/agent", reason: "the renderer draws what it is told; the view translates agent events"},
	// cli → headless → agent: the wire format encodes events; it builds and runs nothing.
	{from: "internal/headless", to: "internal/sandbox", reason: "headless encodes agent events; it runs nothing"},
	{from: "internal/headless", to: "internal/shell", reason: "headless encodes agent events; it runs nothing"},
	{from: "internal/headless", to: "internal/subagent", reason: "headless encodes agent events; it runs nothing"},
	// Test helpers never reach the binary.
	{from: "cmd/synapse", to: "internal/testutil", reason: "test helpers never ship"},
	{from: "cmd/synapse", to: "internal/llm/llmtest", reason: "the scripted fake LLM never ships"},
	{from: "cmd/synapse", to: "internal/mcp/mcptest", reason: "the test MCP server never ships"},
	{from: "cmd/synapse", to: "internal/headless/headlesstest", reason: "the headless contract check never ships"},
}

func init() {
	for _, l := range leaves {
		rules = append(rules, rule{from: l, to: "*", reason: "a leaf imports nothing of ours, so any layer may use it"})
	}
	for _, p := range []string{"internal/llm/anthropic", "internal/llm/openai"} {
		rules = append(rules, rule{from: p, to: "*", except: []string{"internal/llm"},
			reason: "a provider adapter knows only the provider-neutral llm types"})
	}
	rules = append(rules,
		rule{from: "internal/repoguard", to: "*",
			reason: "the repository guard knows no policy: sandbox hands it the roots and paths"},
		rule{from: "internal/proc", to: "*", except: []string{"internal/textutil"},
			reason: "proc runs children for any layer: it imports only textutil (its cut note)"},
		rule{from: "internal/render", to: "*", except: []string{"internal/textutil", "internal/todo"},
			reason: "the renderer imports nothing of ours above it"},
		rule{from: "internal/router", to: "*", except: []string{"internal/agentsh/registry"},
			reason: "the router is pure classification: it takes the Agent Shell's names from their one table and nothing else of ours"},
		rule{from: "internal/config", to: "*", except: []string{"internal/fsutil"},
			reason: "config is resolved once and passed down; it imports nothing above it"},
	)
}

// violations lists the forbidden edges in pkgs.
func violations(pkgs map[string]pkg) []string {
	var out []string
	for _, r := range rules {
		for path, p := range pkgs {
			if (r.from != "*" && r.from != path) || slices.Contains(r.except, path) && r.from == "*" {
				continue
			}
			for _, d := range p.Deps {
				hit := d == r.to
				if r.to == "*" {
					hit = !slices.Contains(r.except, d)
				}
				if hit && d != path {
					out = append(out, fmt.Sprintf("%s imports %s (directly or not): forbidden: %s", path, d, r.reason))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestForbiddenImports checks the dependency rules of docs/architecture.md.
func TestForbiddenImports(t *testing.T) {
	pkgs := listPackages(t)
	for _, r := range rules {
		if _, ok := pkgs[r.from]; r.from != "*" && !ok {
			t.Errorf("rule for %s names a package that does not exist (update the rule with the code)", r.from)
		}
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// The check itself works: a made-up graph with forbidden edges is caught,
// a clean one is not.
func TestViolationsFindsForbiddenEdges(t *testing.T) {
	bad := map[string]pkg{
		"internal/app":      {ImportPath: "internal/app", Deps: []string{"internal/agent", "internal/repl"}},
		"internal/agent":    {ImportPath: "internal/agent", Deps: []string{"internal/subagent", "internal/tool"}},
		"internal/textutil": {ImportPath: "internal/textutil", Deps: []string{"internal/llm"}},
		"internal/cli":      {ImportPath: "internal/cli", Deps: []string{"internal/repl", "internal/app"}},
	}
	got := strings.Join(violations(bad), "\n")
	for _, want := range []string{"internal/app imports internal/repl", "internal/agent imports internal/subagent",
		"internal/textutil imports internal/llm"} {
		if !strings.Contains(got, want) {
			t.Errorf("violations lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "internal/cli imports") {
		t.Errorf("cli may import the REPL and app:\n%s", got)
	}
}
