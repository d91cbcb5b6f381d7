package web

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/sandbox"
)

// SandboxWrap returns the WrapFunc the console uses on Linux: bubblewrap via
// internal/sandbox with the whole filesystem read-only except the writable
// paths, the host network kept (the CLIs talk to their APIs), the PTY kept as
// controlling terminal (job control, resize), the user's well-known secret
// directories (~/.ssh, ~/.aws, …, under userHome) hidden, and a private /tmp.
// Glob entries of the default blacklist are left out: they would also hide
// the engines' own credential files inside agent_home. hide names more files
// to hide, such as Synapse's own settings.json with its provider keys.
func SandboxWrap(userHome string, env []string, hide ...string) WrapFunc {
	hidden := slices.Clone(hide)
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
		out, err := sandbox.WrapArgv(p, argv, sandbox.WrapOptions{Cwd: cwd, AllowTTY: true, Env: env})
		if err != nil {
			return nil, err
		}
		var keep []string
		if len(argv) > 0 {
			// An engine installed under /tmp would vanish under the private
			// tmpfs: bind its installation back, read-only.
			keep = installRoots(argv[0], "/tmp")
		}
		return privateTmp(out, keep...), nil
	}
}

// privateTmp gives the sandboxed program an empty tmpfs /tmp of its own,
// mounted right after the read-only root so that writable paths under /tmp
// are bound on top of it. Writes there never reach the host, so the write
// boundary holds, and CLIs that insist on /tmp (codex puts its daemon's
// socket directory there, whatever TMPDIR says) work. An argv that does not
// have the expected shape is returned unchanged. Directories in keep (below
// /tmp) are bound back read-only on top of the tmpfs.
func privateTmp(argv []string, keep ...string) []string {
	for i := 0; i+2 < len(argv) && argv[i] != "--"; i++ {
		if argv[i] == "--ro-bind" && argv[i+1] == "/" && argv[i+2] == "/" {
			out := append(slices.Clone(argv[:i+3]), "--tmpfs", "/tmp")
			for _, d := range keep {
				out = append(out, "--ro-bind", d, d)
			}
			return append(out, argv[i+3:]...)
		}
	}
	return argv
}

// installRoots returns the directories below dir that the program at argv0
// needs: the directory of argv0 (often a bin/ of symlinks) and, for its real
// file, the outermost node_modules it sits in (an npm package finds its
// optional dependencies, such as codex's platform binary, as siblings there)
// or else that file's directory. Nested results are dropped.
func installRoots(argv0, dir string) []string {
	var roots []string
	for _, p := range []string{argv0, resolved(argv0)} {
		if !within(p, dir) {
			continue
		}
		root := filepath.Dir(p)
		if nm := outerNodeModules(p); nm != "" {
			root = nm
		}
		roots = append(roots, root)
	}
	var out []string
	for _, r := range roots {
		covered := false
		for _, o := range roots {
			if o != r && within(r, o) {
				covered = true
			}
		}
		if !covered && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// outerNodeModules is the outermost directory named node_modules on path's
// way from the root, or "".
func outerNodeModules(path string) string {
	parts := strings.Split(filepath.Clean(path), string(filepath.Separator))
	for i, part := range parts[:len(parts)-1] {
		if part == "node_modules" {
			return string(filepath.Separator) + filepath.Join(parts[:i+1]...)
		}
	}
	return ""
}

// resolved is path with symlinks resolved, or path itself when that fails.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// withheldEnv are the variables no engine gets unless the user maps them:
// Synapse's own provider keys and the console's secrets.
func withheldEnv() []string {
	return append(sandbox.ProviderCredentials(), EnvToken, EnvUser, EnvPassword)
}
