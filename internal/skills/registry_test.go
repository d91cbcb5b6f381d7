package skills

import (
	"slices"
	"testing"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
)

// The skill management commands are the registry's skill family.
func TestCommandsAreTheRegistrysSkillFamily(t *testing.T) {
	var names []string
	for _, c := range Commands {
		names = append(names, c.Name)
	}
	if want := registry.Names(registry.FamilySkill); !slices.Equal(names, want) {
		t.Errorf("skills.Commands %v, registry's skill family %v", names, want)
	}
}
