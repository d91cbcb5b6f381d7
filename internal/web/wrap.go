package web

import (
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// SandboxWrap returns the WrapFunc the console uses on Linux: bubblewrap via
// internal/sandbox with the whole filesystem read-only except the writable
// paths, the host network kept (the CLIs talk to their APIs), the PTY kept as
// controlling terminal (job control, resize), and the user's well-known
// secret directories (~/.ssh, ~/.aws, …, under userHome) hidden. Glob entries
// of the default blacklist are left out: they would also hide the engines'
// own credential files inside agent_home.
func SandboxWrap(userHome string, env []string) WrapFunc {
	var hidden []string
	for _, e := range sandbox.DefaultBlacklist() {
		if !strings.ContainsAny(e, "*?[") {
			hidden = append(hidden, e)
		}
	}
	env = slices.Clone(env)
	return func(writable []string, cwd string, argv []string) ([]string, error) {
		p := sandbox.Policy{
			Whitelist:    writable,
			Blacklist:    hidden,
			AllowNetwork: true,
			Home:         userHome,
		}
		return sandbox.WrapArgv(p, argv, sandbox.WrapOptions{Cwd: cwd, AllowTTY: true, Env: env})
	}
}
