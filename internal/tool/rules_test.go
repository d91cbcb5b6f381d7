package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/router"
	"github.com/synapse-agent/synapse/internal/writecheck"
)

// Claude Code's tool patterns map onto command layers and prefixes.
func TestRulesMatch(t *testing.T) {
	cases := []struct {
		spec string
		yes  []string
		no   []string
	}{
		{"Bash", []string{"ls", "read a.txt", "mcp:fs:list"}, nil},
		{"Bash(git diff:*)", []string{"git diff", "git diff --stat", "  git diff HEAD"}, []string{"git diffx", "git log", "echo git diff"}},
		{"Bash(npm test)", []string{"npm test"}, []string{"npm test --watch", "npm"}},
		{"Bash(rm *)", []string{"rm -rf x", "rm"}, []string{"rmdir x"}},
		{"Read", []string{"read a.txt"}, []string{"cat a.txt", "write a.txt x"}},
		{"Write", []string{"write a.txt hi"}, []string{"edit a.txt a b"}},
		{"Edit", []string{"edit a.txt a b"}, []string{"write a.txt hi"}},
		{"Task", []string{`task:explore "find x"`}, []string{"ls"}},
		{"Grep", []string{"grep -rn x ."}, []string{"rg x"}},
		{"mcp__docs", []string{"mcp:docs:search q", "mcp:docs:get"}, []string{"mcp:other:search"}},
		{"mcp__docs__search", []string{"mcp:docs:search q"}, []string{"mcp:docs:get"}},
	}
	for _, c := range cases {
		r, err := ParseRule(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		for _, line := range c.yes {
			if !r.Matches(line) {
				t.Errorf("%s does not match %q", c.spec, line)
			}
		}
		for _, line := range c.no {
			if r.Matches(line) {
				t.Errorf("%s matches %q", c.spec, line)
			}
		}
	}
}

func TestParseRulesSplitsAndReportsTheMeaningless(t *testing.T) {
	rules, ignored := ParseRules([]string{"Bash(git log:*),Read", "WebFetch Write(src/**)", ""})
	var specs []string
	for _, r := range rules {
		specs = append(specs, r.Spec)
	}
	if strings.Join(specs, "|") != "Bash(git log:*)|Read" {
		t.Errorf("rules %q", specs)
	}
	if len(ignored) != 2 || !strings.Contains(ignored[0], "WebFetch") || !strings.Contains(ignored[1], "Write(src/**)") {
		t.Errorf("ignored %q", ignored)
	}
}

// The gate: a disallowed command is refused in every mode; an allowed one
// runs without asking in the ask mode; plan mode still refuses.
func TestGateRules(t *testing.T) {
	deny, _ := ParseRules([]string{"Bash(rm:*)"})
	allow, _ := ParseRules([]string{"Bash(touch:*)", "Task"})
	cases := []struct {
		mode  Mode
		cmd   string
		ok    bool
		asked bool
	}{
		{ModeDefault, "rm -rf x", false, false},
		{ModeAsk, "rm -rf x", false, false},
		{ModeDefault, "echo hi", true, false},
		{ModeAsk, "touch a", true, false},
		{ModeAsk, "cp a b", false, true},
		{ModePlan, `task:general "x"`, false, false},
	}
	for _, c := range cases {
		a := &countingAsker{answer: AnswerDeny}
		p := NewPermissions(a, c.mode, "/p")
		p.SetRules(allow, deny)
		ok, note := p.BeforeRun(context.Background(), runRequest(c.cmd))
		if ok != c.ok || (a.n > 0) != c.asked {
			t.Errorf("%s %q: ok %v (note %q), asked %d; want ok %v, asked %v", c.mode, c.cmd, ok, note, a.n, c.ok, c.asked)
		}
		if !ok && strings.HasPrefix(c.cmd, "rm") && !strings.Contains(note, "Bash(rm:*)") {
			t.Errorf("%q: note %q does not name the rule", c.cmd, note)
		}
	}
}

type countingAsker struct {
	answer Answer
	n      int
}

func (a *countingAsker) Ask(context.Context, Question) Answer { a.n++; return a.answer }

func runRequest(cmd string) RunRequest {
	return RunRequest{Route: router.Classify(cmd), Command: cmd, Asks: func() []writecheck.Reason {
		return []writecheck.Reason{{Word: strings.Fields(cmd)[0], Why: "may write"}}
	}}
}
