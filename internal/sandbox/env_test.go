package sandbox

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// The shell never sees the agent's provider credentials nor the variables
// named to hide, sandboxed or not; everything else passes through.
func TestShellEnvHidesCredentials(t *testing.T) {
	env := []string{
		"ANTHROPIC_API_KEY=sk-ant-secret", "ANTHROPIC_AUTH_TOKEN=tok-secret", "OPENAI_API_KEY=sk-oai-secret",
		"MY_GATEWAY_KEY=gw-secret", "KEEP_ME=visible",
	}
	probe := `echo "a=$ANTHROPIC_API_KEY t=$ANTHROPIC_AUTH_TOKEN o=$OPENAI_API_KEY g=$MY_GATEWAY_KEY k=$KEEP_ME"; env | grep -c secret || true`
	for _, enabled := range []bool{true, false} {
		t.Run(map[bool]string{true: "sandboxed", false: "sandbox off"}[enabled], func(t *testing.T) {
			f := newFixture(t, func(o *ManagerOptions) {
				o.Env = append(slices.Clone(o.Env), env...)
				o.HideEnv = []string{"MY_GATEWAY_KEY"}
				o.Config.Enabled = enabled
			})
			res := f.run(t, probe)
			if res.ExitCode != 0 || res.Stdout != "a= t= o= g= k=visible\n0" {
				t.Errorf("shell saw: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
			for _, kv := range f.m.Env() {
				if strings.Contains(kv, "secret") {
					t.Errorf("Manager.Env() keeps %s", kv)
				}
			}
			if !slices.Contains(f.m.Env(), "KEEP_ME=visible") || !slices.Contains(f.m.Env(), "PATH="+os.Getenv("PATH")) {
				t.Errorf("Manager.Env() lost ordinary variables: %v", f.m.Env())
			}
		})
	}
}
