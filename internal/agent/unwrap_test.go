package agent

import "testing"

func TestUnwrapSkillSearch(t *testing.T) {
	cases := []struct{ in, want string }{
		{WrapSkillSearch("fix it\n\nplease"), "fix it\n\nplease"},
		{WrapSkillSearch(""), ""},
		{"plain text", "plain text"},
		{"## Original user request\n\nnot wrapped", "## Original user request\n\nnot wrapped"},
	}
	for _, c := range cases {
		if got := UnwrapSkillSearch(c.in); got != c.want {
			t.Errorf("UnwrapSkillSearch(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
