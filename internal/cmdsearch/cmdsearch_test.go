package cmdsearch

import (
	"context"
	"strings"
	"testing"
)

func sample() []Entry {
	return []Entry{
		{"skill:load pdf-tools", Skill, "Extract text and page counts from PDF documents.", []string{"pdf", "documents"}},
		{"skill:pdf-tools:extract", Skill, "Extract the text of a PDF file.", []string{"pdf-tools"}},
		{"skill:load hello", Skill, "Greets people.", []string{"greeting"}},
		{"mcp:docs:pdf_to_text", MCP, "Convert a document to plain text.", nil},
		{"mcp:gh:create_issue", MCP, "Open an issue on GitHub.\nSecond line not shown.", nil},
	}
}

func TestRun(t *testing.T) {
	h := &Handler{Sources: []Source{sample, nil}}
	tests := []struct {
		line    string
		exit    int
		want    []string // in this order
		notWant []string
	}{
		{"command:search pdf", 0, []string{"3 command(s) match \"pdf\"", "skill:load pdf-tools", "skill:pdf-tools:extract", "mcp:docs:pdf_to_text"}, []string{"hello", "create_issue"}},
		{"command:search PDF", 0, []string{"mcp:docs:pdf_to_text"}, nil},
		{"command:search --type=mcp pdf", 0, []string{"1 command(s)", "mcp:docs:pdf_to_text  [mcp] Convert a document to plain text."}, []string{"skill:"}},
		{"command:search -t skill pdf extract", 0, []string{"skill:pdf-tools:extract", "skill:load pdf-tools"}, []string{"mcp:"}},
		{"command:search github issue", 0, []string{"mcp:gh:create_issue", "Open an issue on GitHub."}, []string{"Second line"}},
		{"command:search todo", 0, []string{"TodoWrite  [agent]"}, nil},
		{"command:search", 0, []string{"Agent shell commands (21):", "read", "write", "edit", "bash", "TodoWrite", "task:explore", "task:general", "task:skill:search", "task:skill:enhance", "skill:load", "command:search", "Skills and skill scripts (3):", "MCP tools (2):", "26 command(s)"}, nil},
		{"command:search --type agent", 0, []string{"Agent shell commands (21):", "21 command(s)"}, []string{"MCP tools (", "pdf"}},
		{"command:search kubernetes", 0, []string{"No command matches kubernetes"}, nil},
		{"command:search --type=robots x", 1, []string{`unknown type "robots"`, "Usage: command:search"}, nil},
		{"command:search --bogus", 1, []string{"unknown option --bogus"}, nil},
		{"command:search --type", 1, []string{"--type needs a value"}, nil},
		{"command:search -h", 0, []string{"Usage: command:search [--type=agent|mcp|skill] [keyword|pattern …]"}, []string{"Examples"}},
		{"command:search --help", 0, []string{"Usage: command:search", "ranked", "Examples:", "command:search pdf"}, nil},
		{"command:search 'unclosed", 1, []string{"Unclosed quote"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			r := h.Run(context.Background(), tt.line)
			out := r.Stdout + r.Stderr
			if r.ExitCode != tt.exit {
				t.Errorf("exit %d, want %d:\n%s", r.ExitCode, tt.exit, out)
			}
			pos := 0
			for _, w := range tt.want {
				i := strings.Index(out[pos:], w)
				if i < 0 {
					t.Errorf("output lacks %q after offset %d:\n%s", w, pos, out)
					continue
				}
				pos += i
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestSearchRanking(t *testing.T) {
	entries := append(AgentCommands(), sample()...)
	tests := []struct {
		keywords []string
		first    string
	}{
		{[]string{"pdf"}, "skill:load pdf-tools"},               // name + tag + description
		{[]string{"text"}, "mcp:docs:pdf_to_text"},              // last name segment
		{[]string{"pdf", "extract"}, "skill:pdf-tools:extract"}, // two keywords beat one
		{[]string{"read"}, "read"},                              // exact command
		{[]string{"skill", "search"}, "task:skill:search"},
		{[]string{"replace"}, "edit"},
	}
	for _, tt := range tests {
		got := Search(entries, tt.keywords, "")
		if len(got) == 0 || got[0].Command != tt.first {
			var cmds []string
			for _, g := range got {
				cmds = append(cmds, g.Command)
			}
			t.Errorf("Search(%v) = %v, want %s first", tt.keywords, cmds, tt.first)
		}
	}
}

// A word with glob characters is a pattern over command names:
// mcp:test:* is that server's tools and not mcp:test-server's.
func TestGlobPatterns(t *testing.T) {
	src := func() []Entry {
		return []Entry{
			{"mcp:test:echo", MCP, "Echo.", nil},
			{"mcp:test:add", MCP, "Add numbers.", nil},
			{"mcp:test-server:echo", MCP, "Echo too.", nil},
			{"skill:load pdf-tools", Skill, "PDF work.", nil},
		}
	}
	h := &Handler{Sources: []Source{src}}
	tests := []struct {
		line    string
		want    []string
		notWant []string
	}{
		{"command:search mcp:test:*", []string{`2 command(s) match "mcp:test:*"`, "mcp:test:add", "mcp:test:echo"}, []string{"test-server"}},
		{"command:search MCP:Test-*:*", []string{"mcp:test-server:echo"}, []string{"mcp:test:add"}},
		{"command:search mcp:test:* add", []string{"1 command(s)", "mcp:test:add"}, []string{"mcp:test:echo", "test-server"}},
		{"command:search pdf*", []string{"skill:load pdf-tools"}, []string{"mcp:"}},
		{"command:search mcp:nothing:*", []string{"No command matches mcp:nothing:*"}, nil},
	}
	for _, tt := range tests {
		r := h.Run(context.Background(), tt.line)
		out := r.Stdout + r.Stderr
		if r.ExitCode != 0 {
			t.Errorf("%s: exit %d:\n%s", tt.line, r.ExitCode, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tt.line, w, out)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(out, w) {
				t.Errorf("%s: output has %q:\n%s", tt.line, w, out)
			}
		}
	}
	if r := h.Run(context.Background(), "command:search mcp:[x"); r.ExitCode == 0 || !strings.Contains(r.Stderr+r.Stdout, "bad pattern") {
		t.Errorf("a malformed pattern: %+v", r)
	}
}
