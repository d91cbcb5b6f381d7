package skills

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name string
		md   string
		want Frontmatter
	}{
		{"plain", "---\nname: a\ndescription: does A\nversion: 1.10\ntags: [x, y]\n---\nbody",
			Frontmatter{Name: "a", Description: "does A", Version: "1.10", Tags: []string{"x", "y"}}},
		{"agent skills metadata", "---\nname: b\ndescription: >\n  folded\n  text\nlicense: MIT\nmetadata:\n  version: \"2.0\"\n  tags: [m]\n---\n",
			Frontmatter{Name: "b", Description: "folded text", Version: "2.0", Tags: []string{"m"}, License: "MIT", Metadata: map[string]string{"version": "2.0", "tags": "m"}}},
		{"unquoted colon falls back to lines", "---\nname: c\ndescription: Use when: the user asks\ntags: p, q\n---\n",
			Frontmatter{Name: "c", Description: "Use when: the user asks", Tags: []string{"p", "q"}}},
		{"crlf and bom", "\ufeff---\r\nname: d\r\ndescription: dd\r\n---\r\nbody\r\n",
			Frontmatter{Name: "d", Description: "dd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, _, ok := SplitFrontmatter([]byte(tt.md))
			if !ok {
				t.Fatal("no frontmatter found")
			}
			got, err := ParseFrontmatter(y)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSplitFrontmatterNone(t *testing.T) {
	for _, md := range []string{"no header", "---\nname: x\n(no end)", ""} {
		if _, _, ok := SplitFrontmatter([]byte(md)); ok {
			t.Errorf("SplitFrontmatter(%q) found a header", md)
		}
	}
}

func TestExtractDoc(t *testing.T) {
	tests := []struct {
		name, src, ext, want string
	}{
		{"python docstring", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\"\"\"Summary.\n\n    Indented detail.\n\"\"\"\nimport x\n", ".py", "Summary.\n\nIndented detail."},
		{"python one-line", "'''Just one.'''\n", ".py", "Just one."},
		{"python comments only", "# Header line\n# second\nimport os\n", ".py", "Header line\nsecond"},
		{"shell header", "#!/bin/bash\n\n# Does things.\n# shellcheck disable=SC2086\n#\n# More.\nset -e\n# not this\n", ".sh", "Does things.\n\nMore."},
		{"js block", "#!/usr/bin/env node\n/**\n * Makes a thing.\n * Usage: x\n */\nconsole.log(1)\n", ".js", "Makes a thing.\nUsage: x"},
		{"none", "echo hi\n", ".sh", ""},
		{"python no doc", "import sys\nprint(1)\n", ".py", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := extractDoc(tt.src, tt.ext); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) Script {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return Script{Name: stem(name), Path: p}
	}
	tests := []struct {
		sc      Script
		want    []string
		wantErr bool
	}{
		{write("a.py", "print(1)\n", 0o644), []string{"python3"}, false},
		{write("b.sh", "echo\n", 0o644), []string{"bash"}, false},
		{write("c.py", "#!/usr/bin/env -S python3 -u\n", 0o644), []string{"/usr/bin/env", "-S", "python3", "-u"}, false},
		{write("d", "\x7fELF", 0o755), nil, false},
		{write("e.xyz", "data", 0o644), nil, true},
	}
	for _, tt := range tests {
		got, err := tt.sc.Interpreter()
		if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, %v; want %q (err %v)", tt.sc.Path, got, err, tt.want, tt.wantErr)
		}
	}
}

// copyTestSkills copies testdata/skills into a fresh folder and returns it.
func copyTestSkills(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "skills")
	if _, err := copyTree("testdata/skills", dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestIndexLoadsTestdata(t *testing.T) {
	ix := NewIndex(Root{Dir: copyTestSkills(t), Source: SourceUser})
	var names []string
	for _, s := range ix.Skills() {
		names = append(names, s.Name)
	}
	if want := []string{"hello", "pdf-tools"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("skills = %v, want %v", names, want)
	}
	pdf, _ := ix.Get("pdf-tools")
	if pdf.Version != "1.2.0" || !reflect.DeepEqual(pdf.Tags, []string{"pdf", "documents"}) || !pdf.HasReferences {
		t.Errorf("pdf-tools parsed as %+v", pdf)
	}
	if got := pdf.ScriptCommands(); !reflect.DeepEqual(got, []string{"skill:pdf-tools:count", "skill:pdf-tools:extract", "skill:pdf-tools:nodoc"}) {
		t.Errorf("scripts = %v", got)
	}
	hello, _ := ix.Get("HELLO")
	if hello == nil || hello.Version != "0.1" || hello.Description != "Greets people: says hello in several languages" {
		t.Errorf("hello parsed as %+v", hello)
	}
	probs := ix.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0], "broken") || !strings.Contains(probs[0], "frontmatter") {
		t.Errorf("problems = %q", probs)
	}
}

func TestIndexPrecedenceAndReload(t *testing.T) {
	user := copyTestSkills(t)
	project := filepath.Join(t.TempDir(), "proj")
	writeSkill(t, filepath.Join(project, "hello"), "hello", "project hello", "9")
	writeSkill(t, filepath.Join(project, "only-here"), "only-here", "project skill", "")
	ix := NewIndex(Root{Dir: user, Source: SourceUser}, Root{Dir: project, Source: SourceProject})
	if s, _ := ix.Get("hello"); s.Source != SourceUser {
		t.Errorf("hello from %s, want the user skill to win", s.Source)
	}
	if s, ok := ix.Get("only-here"); !ok || s.Source != SourceProject {
		t.Errorf("project skill missing: %+v", s)
	}
	if !strings.Contains(strings.Join(ix.Problems(), "\n"), "shadowed") {
		t.Errorf("shadowed project skill not reported: %q", ix.Problems())
	}
	// A new skill and an edited description show up without an explicit reload.
	writeSkill(t, filepath.Join(user, "fresh"), "fresh", "new one", "")
	if _, ok := ix.Get("fresh"); !ok {
		t.Error("new skill not seen")
	}
	writeSkill(t, filepath.Join(user, "fresh"), "fresh", "edited description that is longer", "")
	if s, _ := ix.Get("fresh"); s.Description != "edited description that is longer" {
		t.Errorf("edit not seen: %q", s.Description)
	}
	if err := os.RemoveAll(filepath.Join(user, "fresh")); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Get("fresh"); ok {
		t.Error("removed skill still listed")
	}
}

func writeSkill(t testing.TB, dir, name, desc, version string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: " + name + "\ndescription: " + desc + "\n"
	if version != "" {
		md += "version: \"" + version + "\"\n"
	}
	md += "---\n# " + name + "\n"
	if err := os.WriteFile(filepath.Join(dir, SkillFile), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDescribe(t *testing.T) {
	ix := NewIndex(Root{Dir: copyTestSkills(t), Source: SourceUser})
	d := ix.Describe()
	for _, want := range []string{"- name: pdf-tools", "version: 1.2.0", "tags: pdf, documents", "scripts: skill:pdf-tools:count, skill:pdf-tools:extract, skill:pdf-tools:nodoc", "- name: hello"} {
		if !strings.Contains(d, want) {
			t.Errorf("Describe() lacks %q:\n%s", want, d)
		}
	}
}

func TestReadFileLimited(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		limit int64
		want  string
		fails bool
	}{
		{"f", 100, "0123456789", false},
		{"f", 10, "0123456789", false},
		{"f", 4, "0123", false},
		{"link", 100, "", true},
	} {
		got, err := readFileLimited(filepath.Join(dir, c.name), c.limit)
		if got != c.want || (err != nil) != c.fails {
			t.Errorf("readFileLimited(%s, %d) = %q, %v; want %q (error: %v)", c.name, c.limit, got, err, c.want, c.fails)
		}
	}
}
