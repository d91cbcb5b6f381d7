package subagent

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/llm/llmtest"
)

// A host's definition becomes a kind whose permissions are the nearest
// the sub-agent machinery can express; a bad definition names the field.
func TestNewCustomKind(t *testing.T) {
	def := Definition{Description: "Reviews code", Prompt: "You are REVIEWER"}
	with := func(f func(*Definition)) Definition { d := def; f(&d); return d }
	tests := []struct {
		name      string
		agent     string
		def       Definition
		field     string // the DefinitionError's field; "" for none
		readOnly  bool
		excludes  []string // must be in Exclude
		allows    []string // must not be in Exclude
		noteMatch string
	}{
		{name: "no tools: all of the parent's", agent: "helper", def: def, excludes: []string{"task:"}, allows: []string{"write", "edit", "mcp:"}},
		{name: "reading tools: read-only", agent: "reviewer", def: with(func(d *Definition) { d.Tools = []string{"Read", "Grep", "Glob"} }),
			readOnly: true, excludes: []string{"task:", "write", "edit", "mcp:"}},
		{name: "a writing tool: full", agent: "fixer", def: with(func(d *Definition) { d.Tools = []string{"Read", "Edit"} }),
			excludes: []string{"task:", "mcp:"}, allows: []string{"write", "edit"}},
		{name: "an mcp tool keeps MCP", agent: "docs", def: with(func(d *Definition) { d.Tools = []string{"Bash", "mcp__docs__search"} }),
			excludes: []string{"task:"}, allows: []string{"mcp:"}},
		{name: "read-only drops MCP with a note", agent: "ro", def: with(func(d *Definition) { d.Tools = []string{"Read", "mcp__docs"} }),
			readOnly: true, excludes: []string{"mcp:"}, noteMatch: "no MCP tools"},
		{name: "disallowed Write takes write and edit", agent: "nowrite", def: with(func(d *Definition) { d.DisallowedTools = []string{"Write"} }),
			excludes: []string{"write", "edit"}},
		{name: "disallowed Bash is read-only", agent: "nobash", def: with(func(d *Definition) { d.DisallowedTools = []string{"Bash"} }),
			readOnly: true, excludes: []string{"write"}},
		{name: "disallowed mcp", agent: "nomcp", def: with(func(d *Definition) { d.DisallowedTools = []string{"mcp__x"} }), excludes: []string{"mcp:"}},
		{name: "unknown tools noted", agent: "odd", def: with(func(d *Definition) { d.Tools = []string{"Bash", "Frobnicate"} }), noteMatch: "Frobnicate"},
		{name: "bad name", agent: "a b", def: def, field: "name"},
		{name: "colon in name", agent: "skill:search", def: def, field: "name"},
		{name: "empty name", agent: "", def: def, field: "name"},
		{name: "no description", agent: "x", def: with(func(d *Definition) { d.Description = " " }), field: "description"},
		{name: "no prompt", agent: "x", def: with(func(d *Definition) { d.Prompt = "" }), field: "prompt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, notes, err := NewCustomKind(tc.agent, tc.def)
			if tc.field != "" {
				var de *DefinitionError
				if !errors.As(err, &de) || de.Field != tc.field || de.Agent != tc.agent || !strings.Contains(err.Error(), tc.field) {
					t.Fatalf("err = %v, want a DefinitionError on %s", err, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if k.ReadOnly != tc.readOnly || !k.Custom() || k.Prompt() != "You are REVIEWER" || k.Name != tc.agent {
				t.Errorf("kind = %+v (read-only %v, prompt %q)", k, k.ReadOnly, k.Prompt())
			}
			for _, e := range tc.excludes {
				if !slices.Contains(k.Exclude, e) {
					t.Errorf("Exclude %v lacks %s", k.Exclude, e)
				}
			}
			for _, e := range tc.allows {
				if slices.Contains(k.Exclude, e) {
					t.Errorf("Exclude %v has %s", k.Exclude, e)
				}
			}
			if got := strings.Join(notes, "\n"); (tc.noteMatch == "") != (got == "") || !strings.Contains(got, tc.noteMatch) {
				t.Errorf("notes = %q, want one with %q", got, tc.noteMatch)
			}
		})
	}
}

// A session's custom types are task commands beside the built-in ones; one
// named like a built-in type replaces it for the session only.
func TestCustomParse(t *testing.T) {
	rev, _, err := NewCustomKind("reviewer", Definition{Description: "Reviews", Prompt: "You are REVIEWER"})
	if err != nil {
		t.Fatal(err)
	}
	exp, _, err := NewCustomKind(Explore, Definition{Description: "My explorer", Prompt: "You are MY-EXPLORER"})
	if err != nil {
		t.Fatal(err)
	}
	c := &Custom{}
	c.Set([]Kind{rev, exp})
	req, err := c.Parse(`task:reviewer -p "look" -d "review"`)
	if err != nil || req.Kind.Prompt() != "You are REVIEWER" {
		t.Fatalf("task:reviewer = %+v, %v", req, err)
	}
	if req, err := c.Parse(`task:explore -p x -d y`); err != nil || req.Kind.Prompt() != "You are MY-EXPLORER" {
		t.Fatalf("task:explore in the session = %+v, %v", req.Kind, err)
	}
	if req, err := Parse(`task:explore -p x -d y`); err != nil || req.Kind.Custom() {
		t.Fatalf("task:explore outside the session = %+v, %v", req.Kind, err)
	}
	if _, err := Parse(`task:reviewer -p x -d y`); err == nil {
		t.Fatal("task:reviewer parsed without the session's types")
	}
	_, err = c.Parse(`task:nope -p x -d y`)
	if err == nil || !strings.Contains(err.Error(), "task:reviewer") {
		t.Fatalf("unknown type error %v does not list task:reviewer", err)
	}
	var nilCustom *Custom
	if got := len(nilCustom.All()); got != len(Kinds()) {
		t.Fatalf("nil Custom has %d kinds", got)
	}
}

// task:<custom> runs a sub-agent with the definition's prompt and model,
// and --help lists the session's types.
func TestCustomKindRuns(t *testing.T) {
	k, _, err := NewCustomKind("reviewer", Definition{Description: "Reviews code", Prompt: "You are REVIEWER-XYZ", Tools: []string{"Read"}, Model: "review-model"})
	if err != nil {
		t.Fatal(err)
	}
	c := &Custom{}
	c.Set([]Kind{k})
	f := newFixture(t, Options{Custom: c}, llmtest.TextTurn("looks fine"))
	res := f.h.Run(f.traced(context.Background()), `task:reviewer -p "review main.go" -d "review"`)
	if res.ExitCode != 0 || res.Stdout != "looks fine" {
		t.Fatalf("result = %+v", res)
	}
	req, _ := f.srv.LastRequest()
	if !strings.HasPrefix(req.System, "You are REVIEWER-XYZ") || !strings.Contains(req.System, f.ws.dir) {
		t.Errorf("system prompt = %q", req.System)
	}
	if req.Model != "review-model" {
		t.Errorf("model = %q, want the definition's", req.Model)
	}
	help := f.h.Run(context.Background(), "task:general --help")
	if !strings.Contains(help.Stdout, "task:reviewer") || !strings.Contains(help.Stdout, "Reviews code") {
		t.Errorf("help does not list the custom type:\n%s", help.Stdout)
	}
}

// TestValidCustomNameMatchesPattern: validCustomName is hand-written code
// for the pattern below and must accept exactly what it accepts.
func TestValidCustomNameMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	for _, name := range []string{
		"", "a", "Z9", "code-reviewer", "code_reviewer", "a.b", ".", "-x", "_x", "a b", "a/b", "a:b",
		"a\n", "\na", "é", "aé", "a\xff", strings.Repeat("a", 64), strings.Repeat("a", 65),
	} {
		if got, want := validCustomName(name), re.MatchString(name); got != want {
			t.Errorf("validCustomName(%q) = %v, want %v", name, got, want)
		}
	}
}
