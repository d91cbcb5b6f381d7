package subagent

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		line string
		want Request // Kind compared by name
	}{
		{"short flags equal long ones (seed 001)", `task:general -p "research" -d "general task"`,
			Request{Kind: Kind{Name: General}, Prompt: "research", Description: "general task"}},
		{"long flags", `task:general --prompt "research" --description "general task"`,
			Request{Kind: Kind{Name: General}, Prompt: "research", Description: "general task"}},
		{"model and max-turns (seed 001)", `task:general --prompt "x" --description "y" --model claude-sonnet-4-20250514 --max-turns 10`,
			Request{Kind: Kind{Name: General}, Prompt: "x", Description: "y", Model: "claude-sonnet-4-20250514", MaxTurns: 10}},
		{"double and single quotes keep spaces (seed 001)", `task:explore --prompt "multi word" --description 'single quoted'`,
			Request{Kind: Kind{Name: Explore}, Prompt: "multi word", Description: "single quoted"}},
		{"mixed quotes in one word", `task:explore -p "it's "'a "mixed"'' value' -d x`,
			Request{Kind: Kind{Name: Explore}, Prompt: `it's a "mixed" value`, Description: "x"}},
		{"equals form", `task:explore --prompt="a b" --description=c --max-turns=3`,
			Request{Kind: Kind{Name: Explore}, Prompt: "a b", Description: "c", MaxTurns: 3}},
		{"skill:search type", `task:skill:search -p "pdf to markdown" -d "find skills"`,
			Request{Kind: Kind{Name: SkillSearch}, Prompt: "pdf to markdown", Description: "find skills"}},
		{"skill:enhance type", `task:skill:enhance -p "improve x" -d "enhance"`,
			Request{Kind: Kind{Name: SkillEnhance}, Prompt: "improve x", Description: "enhance"}},
		{"order free, leading spaces, newlines inside quotes", "  task:general -d d --prompt \"line1\nline2\"",
			Request{Kind: Kind{Name: General}, Prompt: "line1\nline2", Description: "d"}},
		{"--help", `task:general --help`, Request{Kind: Kind{Name: General}, Help: true}},
		{"-h", `task:explore -h`, Request{Kind: Kind{Name: Explore}, Help: true}},
		{"--help after options", `task:explore -p x --help`, Request{Kind: Kind{Name: Explore}, Help: true}},
		{"a prompt that says --help is a prompt", `task:general -p "--help" -d x`,
			Request{Kind: Kind{Name: General}, Prompt: "--help", Description: "x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.line)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.line, err)
			}
			if got.Kind.Name != tc.want.Kind.Name {
				t.Errorf("kind = %q, want %q", got.Kind.Name, tc.want.Kind.Name)
			}
			got.Kind, tc.want.Kind = Kind{}, Kind{}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q) = %+v, want %+v", tc.line, got, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		is    error
		wants []string
	}{
		{"unknown type (seed 001)", `task:invalid --prompt "x" --description "y"`, ErrInvalidCommand, []string{"Invalid task command", "task:explore"}},
		{"no type", `task: -p x -d y`, ErrInvalidCommand, []string{"Invalid task command"}},
		{"unknown type with help", `task:nope --help`, ErrInvalidCommand, []string{"Invalid task command"}},
		{"unclosed quote (seed 001)", `task:explore --prompt "unclosed --description "x"`, ErrUnclosedQuote, []string{"Unclosed quote"}},
		{"unclosed single quote", `task:explore -p 'abc -d x`, ErrUnclosedQuote, []string{"Unclosed quote"}},
		{"missing prompt", `task:general --description "y"`, ErrUsage, []string{"Missing --prompt", "Usage: task:general"}},
		{"missing description", `task:general --prompt "x"`, ErrUsage, []string{"Missing --description", "Usage:"}},
		{"missing both", `task:explore`, ErrUsage, []string{"Missing --prompt and --description"}},
		{"blank prompt", `task:explore -p "  " -d x`, ErrUsage, []string{"Missing --prompt"}},
		{"flag without value", `task:explore -d x --prompt`, ErrUsage, []string{"--prompt needs a value"}},
		{"max-turns not a number", `task:explore -p x -d y --max-turns ten`, ErrUsage, []string{"--max-turns must be a positive whole number"}},
		{"max-turns zero", `task:explore -p x -d y --max-turns 0`, ErrUsage, []string{"--max-turns must be a positive"}},
		{"unknown option", `task:explore -p x -d y --fast`, ErrUsage, []string{`Unknown option "--fast"`}},
		{"positional text", `task:explore look at this`, ErrUsage, []string{`Unexpected argument "look"`}},
		{"compound line", `task:explore -p x -d y && echo hi`, ErrUsage, []string{`Unexpected argument "&&"`, "cannot be combined"}},
		{"twice", `task:explore -p x -p z -d y`, ErrUsage, []string{"--prompt is given twice"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.line)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tc.line)
			}
			if !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestHelpAndPrompts(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			h := Help(k)
			for _, w := range []string{"USAGE", "task:" + k.Name, "--prompt", "--description", "--model", "--max-turns"} {
				if !strings.Contains(h, w) {
					t.Errorf("help lacks %q:\n%s", w, h)
				}
			}
			if p := k.Prompt(); len(p) < 200 {
				t.Errorf("embedded prompt of %s is missing or too short: %q", k.Name, p)
			}
			if !k.NoTools && !strings.Contains(strings.Join(k.Exclude, " "), "task:") {
				t.Errorf("%s may start sub-agents: exclude = %v", k.Name, k.Exclude)
			}
		})
	}
	ex, _ := LookupKind(Explore)
	for _, w := range []string{"task:", "write", "edit"} {
		found := false
		for _, e := range ex.Exclude {
			found = found || e == w
		}
		if !found {
			t.Errorf("explore does not exclude %q: %v", w, ex.Exclude)
		}
	}
	if !ex.ReadOnly {
		t.Error("explore is not read-only")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`task:general -p "x" -d y`, `task:explore --prompt "unclosed`, `task:`, `task:skill:search -p='a' -d "b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		req, err := Parse(line)
		if err == nil && !req.Help && (strings.TrimSpace(req.Prompt) == "" || strings.TrimSpace(req.Description) == "") {
			t.Fatalf("Parse(%q) accepted a request without prompt or description: %+v", line, req)
		}
	})
}
