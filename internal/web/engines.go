package web

import (
	"errors"
	"os"
	"path/filepath"
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
}

// Engines returns the whitelist, in display order.
func Engines() []Engine {
	return []Engine{
		{ID: "codex-tui", Label: "Codex TUI", Command: "codex", Install: "npm install -g @openai/codex"},
		{ID: "gemini-tui", Label: "Gemini TUI", Command: "gemini", Install: "npm install -g @google/gemini-cli"},
		{ID: "iflow-tui", Label: "iFlow TUI", Command: "iflow", Install: "install the iFlow CLI so that iflow is on PATH"},
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
