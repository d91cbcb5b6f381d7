package repl

import (
	"errors"
	"strings"
	"testing"
)

// /model <name> goes through Options.SwitchModel when set: a refusal (the
// model's provider is not configured) is shown and the model stays.
func TestModelSwitchHook(t *testing.T) {
	cases := []struct {
		name      string
		switchErr error
		want      []string
		model     string
	}{
		{"accepted", nil, []string{"Model for this session: gpt-4o"}, "gpt-4o"},
		{"refused", errors.New("gpt-4o is a model of the openai provider, which is not configured: set OPENAI_API_KEY"),
			[]string{"gpt-4o is a model of the openai provider", "OPENAI_API_KEY", "Model: m1"}, "m1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fa := &fakeAgent{model: "m1"}
			var asked []string
			out, _ := runPiped(t, fa, "/model gpt-4o\n/model\n", func(o *Options) {
				o.SwitchModel = func(m string) error {
					asked = append(asked, m)
					if c.switchErr != nil {
						return c.switchErr
					}
					fa.SetModel(m)
					return nil
				}
			})
			if len(asked) != 1 || asked[0] != "gpt-4o" {
				t.Errorf("SwitchModel calls = %q", asked)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if c.switchErr != nil && strings.Contains(out, "Model for this session") {
				t.Errorf("a refused switch was reported as done:\n%s", out)
			}
			if m := fa.Model(); m != c.model {
				t.Errorf("model = %q, want %q", m, c.model)
			}
		})
	}
}
