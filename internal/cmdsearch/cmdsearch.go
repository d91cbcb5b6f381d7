// Package cmdsearch implements `command:search [--type=agent|mcp|skill]
// [keyword …]`: a case-insensitive, ranked keyword search over every command
// the model can run — the built-in agent shell commands (agentsh/registry), skills
// and their scripts, and MCP tools — printing the command to run and a
// one-line description.
package cmdsearch

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/cmdline"
	"github.com/synapse-agent/synapse/internal/command"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Type is the layer a command belongs to.
type Type string

// The three types --type accepts.
const (
	Agent Type = "agent"
	Skill Type = "skill"
	MCP   Type = "mcp"
)

var typeOrder = map[Type]int{Agent: 0, Skill: 1, MCP: 2}

// Entry is one searchable command.
type Entry struct {
	Command     string // what to run, e.g. "mcp:docs:pdf_to_text" or "skill:load pdf"
	Type        Type
	Description string
	Keywords    []string // extra words that should find it (tags, synonyms)
}

// Source returns current entries; it is called on every search so the list
// follows skills and servers as they change.
type Source func() []Entry

// AgentCommands are the built-in agent shell commands, from their one table.
func AgentCommands() []Entry {
	var out []Entry
	for _, c := range registry.All() {
		out = append(out, Entry{c.Name, Agent, c.Help, c.Keywords})
	}
	return out
}

// Handler runs command:search over the agent commands and the sources.
type Handler struct {
	Sources []Source
}

const usage = "Usage: command:search [--type=agent|mcp|skill] [keyword|pattern …]"

const help = usage + `

Searches every command you can run — the agent shell commands, skills and
their scripts (skill:<skill>:<script>), and MCP tools (mcp:<server>:<tool>) —
for the keywords, case-insensitively, in names, descriptions and tags.
Results are ranked (more keywords matched first, name matches before
description matches) and show the command to run with a one-line description.
A word with * ? or [ is a glob pattern over command names: mcp:github:*
lists that server's tools, *pdf* any command with pdf in a part of its
name. Without keywords every command is listed. --type keeps one kind only.
Every command found explains its own arguments with --help.

Examples:
  command:search pdf
  command:search --type=mcp github issue
  command:search --type skill
  command:search 'mcp:github:*'
`

// Run implements command.Handler.
func (h *Handler) Run(ctx context.Context, line string) command.Result {
	words, err := cmdline.Split(line)
	if err != nil {
		return command.Fail(err.Error())
	}
	if len(words) > 0 && words[0] == registry.CommandSearch {
		words = words[1:]
	}
	if len(words) == 1 && words[0] == "-h" {
		return command.OK(usage + "\n")
	}
	if len(words) == 1 && words[0] == "--help" {
		return command.OK(help)
	}
	var typ Type
	var keywords, patterns []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "--type" || w == "-t":
			if i+1 >= len(words) {
				return command.Usage("--type needs a value: agent, mcp or skill\n" + usage)
			}
			i++
			typ = Type(strings.ToLower(words[i]))
		case strings.HasPrefix(w, "--type="):
			typ = Type(strings.ToLower(strings.TrimPrefix(w, "--type=")))
		case strings.HasPrefix(w, "-") && len(w) > 1:
			return command.Usage(fmt.Sprintf("unknown option %s\n%s", w, usage))
		case strings.ContainsAny(w, "*?["):
			if _, err := path.Match(w, ""); err != nil {
				return command.Usage(fmt.Sprintf("bad pattern %q: %v\n%s", w, err, usage))
			}
			patterns = append(patterns, strings.ToLower(w))
		default:
			keywords = append(keywords, Keywords(w)...)
		}
	}
	if _, ok := typeOrder[typ]; typ != "" && !ok {
		return command.Usage(fmt.Sprintf("unknown type %q: use agent, mcp or skill\n%s", typ, usage))
	}
	entries := AgentCommands()
	for _, src := range h.Sources {
		if src != nil {
			entries = append(entries, src()...)
		}
	}
	if len(patterns) > 0 {
		entries = slices.DeleteFunc(entries, func(e Entry) bool { return !matchesAll(e.Command, patterns) })
	}
	if len(keywords) == 0 && len(patterns) == 0 {
		return command.OK(listAll(entries, typ))
	}
	query := strings.Join(append(slices.Clone(patterns), keywords...), " ")
	var found []Result
	if len(keywords) == 0 {
		for _, e := range entries {
			if typ == "" || e.Type == typ {
				found = append(found, Result{Entry: e})
			}
		}
		sort.SliceStable(found, func(i, j int) bool { return found[i].Command < found[j].Command })
	} else {
		found = Search(entries, keywords, typ)
	}
	if len(found) == 0 {
		msg := fmt.Sprintf("No command matches %s", query)
		if typ != "" {
			msg += fmt.Sprintf(" (type %s)", typ)
		}
		return command.OK(msg + ". Try other words, or command:search with no keywords to list everything.\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d command(s) match %q:\n", len(found), query)
	writeRows(&b, found)
	b.WriteString("Run a command with --help for its usage.\n")
	return command.OK(b.String())
}

// matchesAll reports whether cmd matches every glob pattern (lower-case).
// A pattern matches the whole command name (mcp:test:* is that server's
// tools, not mcp:test-server's), or, when it has no ':' or space, one word
// of it (pdf* finds mcp:docs:pdf_to_text and skill:load pdf-tools).
func matchesAll(cmd string, patterns []string) bool {
	cmd = strings.ToLower(cmd)
	words := strings.FieldsFunc(cmd, func(r rune) bool { return r == ':' || r == ' ' })
	for _, p := range patterns {
		ok, _ := path.Match(p, cmd)
		if !ok && !strings.ContainsAny(p, ": ") {
			ok = slices.ContainsFunc(words, func(w string) bool { m, _ := path.Match(p, w); return m })
		}
		if !ok {
			return false
		}
	}
	return true
}

// Result is one ranked match.
type Result struct {
	Entry
	Matched int // how many keywords matched
	Score   int
}

// Search ranks entries by keywords (already lower-case); typ "" keeps all types.
func Search(entries []Entry, keywords []string, typ Type) []Result {
	var out []Result
	for _, e := range entries {
		if typ != "" && e.Type != typ {
			continue
		}
		r := Result{Entry: e}
		for _, k := range keywords {
			if s := score(e, k); s > 0 {
				r.Matched++
				r.Score += s
			}
		}
		if r.Matched > 0 {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Matched != b.Matched {
			return a.Matched > b.Matched
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Type != b.Type {
			return typeOrder[a.Type] < typeOrder[b.Type]
		}
		return a.Command < b.Command
	})
	return out
}

func score(e Entry, k string) int {
	cmd := strings.ToLower(e.Command)
	s := 0
	parts := splitWords(cmd)
	switch {
	case len(parts) > 0 && parts[len(parts)-1] == k, cmd == k:
		s += 100
	case contains(parts, k):
		s += 60
	case strings.Contains(cmd, k):
		s += 40
	}
	for _, kw := range e.Keywords {
		kw = strings.ToLower(kw)
		if kw == k {
			s += 30
			break
		} else if strings.Contains(kw, k) {
			s += 15
			break
		}
	}
	desc := strings.ToLower(e.Description)
	if contains(splitWords(desc), k) {
		s += 20
	} else if strings.Contains(desc, k) {
		s += 8
	}
	return s
}

func splitWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Keywords lower-cases a query word and splits it on punctuation, so
// "PDF," and "pdf-tools" both search sensibly.
func Keywords(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != ':' && r != '.'
	}) {
		if f = strings.Trim(f, "-_:."); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func listAll(entries []Entry, typ Type) string {
	var b strings.Builder
	titles := map[Type]string{Agent: "Agent shell commands", Skill: "Skills and skill scripts", MCP: "MCP tools"}
	total := 0
	for _, t := range []Type{Agent, Skill, MCP} {
		if typ != "" && t != typ {
			continue
		}
		var rows []Result
		for _, e := range entries {
			if e.Type == t {
				rows = append(rows, Result{Entry: e})
			}
		}
		total += len(rows)
		if len(rows) == 0 {
			fmt.Fprintf(&b, "%s: none\n", titles[t])
			continue
		}
		if t != Agent {
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].Command < rows[j].Command })
		}
		fmt.Fprintf(&b, "%s (%d):\n", titles[t], len(rows))
		writeRows(&b, rows)
	}
	fmt.Fprintf(&b, "%d command(s). Narrow the list with keywords: command:search <keyword …>\n", total)
	return b.String()
}

func writeRows(b *strings.Builder, rows []Result) {
	width := 0
	for _, r := range rows {
		width = max(width, len([]rune(r.Command)))
	}
	width = min(width, 40)
	for _, r := range rows {
		fmt.Fprintf(b, "  %-*s  [%s] %s\n", width, r.Command, r.Type, oneLine(r.Description))
	}
}

func oneLine(s string) string {
	s = textutil.OneLine(s, 140)
	if s == "" {
		s = "(no description)"
	}
	return s
}
