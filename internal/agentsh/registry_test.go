package agentsh

import (
	"slices"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/router"
)

// The registry is the one list of Agent Shell commands: every builtin in it
// has a runner here, a usage line and a --help page, every runner is in it,
// and the router sends each of its names to the family the table says.
func TestRegistryTiesAgentShell(t *testing.T) {
	builtins := registry.Names(registry.FamilyBuiltin)
	for _, name := range builtins {
		if _, ok := commands[name]; !ok {
			t.Errorf("registry builtin %s has no runner in agentsh", name)
		}
		if u := usage(name); !strings.HasPrefix(u, "Usage: "+name) {
			t.Errorf("%s: usage %q does not start with Usage: %s", name, u, name)
		}
		if Help(name) == "" {
			t.Errorf("%s has no --help page (help/%s.md)", name, strings.ReplaceAll(name, ":", "-"))
		}
	}
	for name := range commands {
		if !slices.Contains(builtins, name) {
			t.Errorf("agentsh runs %s, which the registry does not list as a builtin", name)
		}
	}
	for _, c := range registry.All() {
		r := router.Classify(c.Name + " x")
		if r.Layer != router.Agent || string(r.Family) != c.Family || r.Name != c.Name {
			t.Errorf("router.Classify(%q) = %+v, want agent layer, family %q", c.Name, r, c.Family)
		}
		if c.Help == "" {
			t.Errorf("%s has no one-line help for command:search", c.Name)
		}
	}
}

// FileArg reads a file command's path as the command itself does.
func TestFileArg(t *testing.T) {
	for _, c := range []struct {
		line, want string
		ok         bool
	}{
		{"read a.txt", "a.txt", true},
		{"read --offset 5 --limit=3 'my file.txt'", "my file.txt", true},
		{`write "my file.txt" 'x y'`, "my file.txt", true},
		{"write b.txt <<'EOF'\nhi\nEOF", "b.txt", true},
		{"edit --all c.go old new", "c.go", true},
		{"read -h", "", false},
		{"read", "", false},
		{"bash cat a.txt", "", false},
		{"ls a.txt", "", false},
	} {
		got, ok := FileArg(c.line)
		if got != c.want || ok != c.ok {
			t.Errorf("FileArg(%q) = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}
