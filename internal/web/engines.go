package web

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Engine is one agent CLI the console can host. Each engine has exactly one
// command (its full-screen TUI, started without arguments): the console
// exposes no login/version/other modes, and clients name engines by ID only.
type Engine struct {
	ID      string `json:"id"`
	Label   string `json:"label"`
	Command string `json:"command"`
	Install string `json:"install"` // how to get it, shown when it is not installed
	// Env names the variables of the engine's own vendor it gets from the
	// server's environment (NAME, or a NAME_* prefix), besides the common
	// ones (commonEnv). Synapse's own provider keys never match: the user
	// maps them to an engine explicitly (Options.EngineEnv).
	Env []string `json:"-"`
}

// Engines returns the whitelist, in display order.
func Engines() []Engine {
	return []Engine{
		{ID: "codex-tui", Label: "Codex TUI", Command: "codex", Install: "npm install -g @openai/codex",
			Env: []string{"CODEX_*", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_ORGANIZATION", "OPENAI_PROJECT", "AZURE_OPENAI_*"}},
		{ID: "gemini-tui", Label: "Gemini TUI", Command: "gemini", Install: "npm install -g @google/gemini-cli",
			Env: []string{"GEMINI_*", "GOOGLE_API_KEY", "GOOGLE_CLOUD_*", "GOOGLE_GENAI_*", "GOOGLE_APPLICATION_CREDENTIALS"}},
		{ID: "iflow-tui", Label: "iFlow TUI", Command: "iflow", Install: "install the iFlow CLI so that iflow is on PATH",
			Env: []string{"IFLOW_*"}},
	}
}

// LookupEngine returns the engine with the given id; anything else is not an engine.
func LookupEngine(id string) (Engine, bool) {
	for _, e := range Engines() {
		if e.ID == id {
			return e, true
		}
	}
	return Engine{}, false
}

// lookPath finds an executable named file in the directories of pathEnv (a
// PATH value), like exec.LookPath but against the environment the engines
// will get rather than the server process's own.
func lookPath(file, pathEnv string) (string, error) {
	if strings.Contains(file, "/") {
		return "", errors.New("engine commands are bare names")
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the session's cwd
		}
		p := filepath.Join(dir, file)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		return p, nil
	}
	return "", os.ErrNotExist
}

// commonEnv is what every engine gets from the server's environment: finding
// programs, language and time zone, who the user is, and how to reach the
// network (proxies, extra CA certificates). HOME, TERM and TMPDIR are set
// per session (sessionEnv).
var commonEnv = []string{
	"PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "USER", "LOGNAME", "SHELL",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// engineEnv is the part of the server's environment base that engine may
// see: commonEnv and the engine's own vendor variables, never one of
// withheld (Synapse's provider keys, the console's own secrets), plus the
// variables the user mapped to it explicitly (mapped), withheld or not.
func engineEnv(base []string, e Engine, mapped, withheld []string) []string {
	allowed := func(name string) bool {
		if slices.Contains(mapped, name) {
			return true
		}
		if slices.Contains(withheld, name) {
			return false
		}
		return matchesAny(name, commonEnv) || matchesAny(name, e.Env)
	}
	var out []string
	for _, kv := range base {
		if name, _, ok := strings.Cut(kv, "="); ok && allowed(name) {
			out = append(out, kv)
		}
	}
	return out
}

// matchesAny reports whether name is one of patterns (NAME or NAME_*).
func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}
