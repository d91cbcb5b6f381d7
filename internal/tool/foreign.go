package tool

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/router"
)

// Models trained on Claude Code call its file tools by habit, as a tool name
// (Read {"file_path": "a.txt"}) or as a command line (Read a.txt). Their
// names are not Synapse commands, so the correction names the command that
// does the same job instead of echoing the foreign name back.

// ForeignCommand is the Synapse command line for a call of another agent's
// file tool (Read, Write, Edit, Glob, Grep, LS) with its JSON arguments;
// false for any other name.
func ForeignCommand(name string, input json.RawMessage) (string, bool) {
	var in map[string]any
	_ = json.Unmarshal(input, &in) // absent or odd arguments leave placeholders
	str := func(k string) string { s, _ := in[k].(string); return s }
	num := func(k string) (int, bool) { f, ok := in[k].(float64); return int(f), ok }
	arg := func(k, placeholder string) string {
		if s := str(k); s != "" {
			return shellQuote(s)
		}
		return placeholder
	}
	switch name {
	case "Read":
		line := "read " + arg("file_path", "<file_path>")
		if off, ok := num("offset"); ok && off > 1 {
			line += fmt.Sprintf(" --offset %d", off-1) // Read counts lines from 1, read skips N
		}
		if lim, ok := num("limit"); ok && lim > 0 {
			line += fmt.Sprintf(" --limit %d", lim)
		}
		return line, true
	case "Write":
		return "write " + arg("file_path", "<file_path>") + " " + arg("content", "<content>"), true
	case "Edit":
		line := "edit " + arg("file_path", "<file_path>") + " " + arg("old_string", "<old_text>") + " " + arg("new_string", "<new_text>")
		if all, _ := in["replace_all"].(bool); all {
			line += " --all"
		}
		return line, true
	case "Glob":
		return globCommand(str("pattern"), str("path")), true
	case "Grep":
		return grepCommand(in), true
	case "LS":
		if p := str("path"); p != "" {
			return "ls " + shellQuote(p), true
		}
		return "ls", true
	}
	return "", false
}

// globCommand is the find line for a glob: "**/x" anywhere under dir, a
// pattern without a slash in dir itself, else matched against the path.
func globCommand(pattern, dir string) string {
	if dir == "" {
		dir = "."
	}
	d := shellQuote(dir)
	switch {
	case pattern == "":
		return "find " + d + " -name '<pattern>'"
	case strings.HasPrefix(pattern, "**/") && !strings.Contains(pattern[3:], "/"):
		return "find " + d + " -name " + shellQuote(pattern[3:])
	case !strings.Contains(pattern, "/"):
		return "find " + d + " -maxdepth 1 -name " + shellQuote(pattern)
	}
	// find's * matches across slashes, which is what ** means.
	p := strings.ReplaceAll(pattern, "**/", "")
	return "find " + d + " -path " + shellQuote(path.Join(dir, p))
}

// grepCommand is the grep line for Claude Code's Grep arguments.
func grepCommand(in map[string]any) string {
	flags := "-rn"
	switch in["output_mode"] {
	case "files_with_matches":
		flags = "-rl"
	case "count":
		flags = "-rc"
	}
	if i, _ := in["-i"].(bool); i {
		flags += "i"
	}
	parts := []string{"grep", flags}
	if g, _ := in["glob"].(string); g != "" {
		parts = append(parts, "--include="+shellQuote(g))
	}
	if t, _ := in["type"].(string); typeRe().MatchString(t) {
		parts = append(parts, "--include="+shellQuote("*."+t))
	}
	p, _ := in["pattern"].(string)
	if p == "" {
		p = "<pattern>"
	} else {
		p = shellQuote(p)
	}
	parts = append(parts, p)
	if dir, _ := in["path"].(string); dir != "" {
		parts = append(parts, shellQuote(dir))
	}
	return strings.Join(parts, " ")
}

// typeRe is compiled on first use, not at every start.
var typeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]{1,5}$`) })

// foreignLine is the Synapse command for a command line that starts with
// one of those tool names (Read a.txt → read a.txt); false otherwise.
func foreignLine(cmd string) (string, bool) {
	rest := router.Rest(cmd)
	switch router.FirstWord(cmd) {
	case "Read", "Write", "Edit", "LS":
		return strings.TrimSpace(strings.ToLower(router.FirstWord(cmd)) + " " + rest), true
	case "Grep":
		return strings.TrimSpace("grep -rn " + rest), true
	case "Glob":
		if rest == "" {
			return "find . -name '<pattern>'", true
		}
		if u := unquote(rest); !strings.ContainsAny(u, " \t") {
			return globCommand(u, ""), true
		}
		return "find . -name " + rest, true
	}
	return "", false
}

// unquote strips one pair of matching quotes around s.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// shellQuote is s as one shell word: as it is when it needs no quoting,
// else in single quotes.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\;&|<>()*?[]{}~#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
