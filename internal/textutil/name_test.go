package textutil

import (
	"strings"
	"testing"
)

func TestIsName(t *testing.T) {
	for _, c := range []struct {
		s, punct string
		want     bool
	}{
		{"a", "", true},
		{"my-skill.v2", "._-", true},
		{"my-skill.v2", "_-", false},
		{"", "-", false},
		{"-x", "-", false},
		{".", ".", false},
		{"a b", "-", false},
		{"é", "", false},
		{strings.Repeat("a", 64), "", true},
		{strings.Repeat("a", 65), "", false},
	} {
		if got := IsName(c.s, c.punct); got != c.want {
			t.Errorf("IsName(%q, %q) = %v, want %v", c.s, c.punct, got, c.want)
		}
	}
}
