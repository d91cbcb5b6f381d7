package subagent

import (
	"slices"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
)

// The sub-agent kinds are the registry's task family, and a kind the
// registry marks read-only runs in a read-only sandbox or with no tools.
func TestKindsAreTheRegistrysTasks(t *testing.T) {
	var names []string
	for _, k := range Kinds() {
		name := registry.TaskPrefix + k.Name
		names = append(names, name)
		c, ok := registry.Lookup(name)
		if !ok {
			t.Errorf("kind %s is not in agentsh/registry", name)
			continue
		}
		if c.ReadOnly != (k.ReadOnly || k.NoTools) {
			t.Errorf("%s: registry read-only %v, kind read-only %v no tools %v", name, c.ReadOnly, k.ReadOnly, k.NoTools)
		}
	}
	if want := registry.Names(registry.FamilyTask); !slices.Equal(names, want) {
		t.Errorf("kinds %v, registry's task family %v", names, want)
	}
}
