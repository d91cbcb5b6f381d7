package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/synapse-agent/synapse/internal/config"
)

// The README and the docs/ pages name commands, flags, SYNAPSE_* variables
// and settings.json keys; a renamed flag or key must fail here rather than
// leave the page wrong. The command lines are checked as the fleet examples
// are (callProblems); usage lines in inline code (`synapse run [--flag X]`)
// have their command path and every flag looked up.

const repoRoot = "../.."

// docPages is README.md and every docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no docs pages (%v)", err)
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, pages...)
}

func TestDocsUseRealCommandsFlagsVariablesAndSettings(t *testing.T) {
	goSources := goSourceText(t)
	seen := map[string]bool{}
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pageProblems(filepath.Base(page), data, goSources, seen) {
			t.Error(p)
		}
	}
	// Relative links must reach a page, and an anchor a heading of it.
	for _, page := range docPages(t) {
		for _, p := range linkProblems(t, page) {
			t.Error(p)
		}
	}
	// The extraction must keep finding the pages' commands, or this test
	// would pass on nothing.
	for _, want := range []string{
		"README.md synapse run", "README.md synapse exec", "README.md synapse sandbox status",
		"commands.md synapse chat", "commands.md synapse sessions", "commands.md synapse mcp approve",
		"commands.md synapse acp", "web-console.md synapse serve", "headless.md synapse run",
		"README.md SYNAPSE_MODEL", "sessions.md SYNAPSE_MAX_CONTEXT_WINDOW",
		"hooks.md settings.json", "sessions.md settings.json",
	} {
		if !seen[want] {
			t.Errorf("nothing found for %q (found: %v)", want, keys(seen))
		}
	}
}

// TestDocsCheckFailsOnBrokenNames feeds pageProblems pages with one broken
// name each: every one must be reported, and the correct twin must not.
func TestDocsCheckFailsOnBrokenNames(t *testing.T) {
	goSources := goSourceText(t)
	tests := []struct {
		name, page string
		broken     bool
	}{
		{"shell flag", "```sh\nsynapse run --output-format json \"x\"\n```\n", false},
		{"shell flag broken", "```sh\nsynapse run --output-formatt json \"x\"\n```\n", true},
		{"shell command broken", "```sh\nsynapse runn \"x\"\n```\n", true},
		{"inline usage", "`synapse chat [-c \\| -r ID]`\n", false},
		{"inline usage broken", "`synapse chat [-c \\| -x ID]`\n", true},
		{"inline long flag broken", "| `synapse sessions [--every]` | x |\n", true},
		{"inline subcommand broken", "`synapse sandbox statu`\n", true},
		{"variable", "`SYNAPSE_HOME`\n", false},
		{"variable broken", "`SYNAPSE_NO_SUCH_VARIABLE=1`\n", true},
		{"settings", "```json settings.json\n{\"context\": {\"window\": 1}, \"shareEnv\": [\"A\"]}\n```\n", false},
		{"settings key broken", "```json settings.json\n{\"contextt\": {}}\n```\n", true},
		{"settings nested key broken", "```json settings.json\n{\"context\": {\"windoww\": 1}}\n```\n", true},
		{"settings not JSON", "```json settings.json\n{\"context\": \n```\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := pageProblems("test.md", []byte(tc.page), goSources, map[string]bool{})
			if got := len(problems) > 0; got != tc.broken {
				t.Errorf("broken=%v, problems: %q", tc.broken, problems)
			}
		})
	}
}

var (
	shellFence    = regexp.MustCompile("(?ms)^```[^\\n]*\\n.*?^```[ \t]*$")
	settingsFence = regexp.MustCompile("(?ms)^```json settings\\.json\\n(.*?)^```")
	inlineCode    = regexp.MustCompile("`([^`\\n]+)`")
	synapseVar    = regexp.MustCompile(`\bSYNAPSE_[A-Z0-9_]*[A-Z0-9]\b`)
	usageFlag     = regexp.MustCompile(`^--?[A-Za-z][A-Za-z0-9-]*`)
	commandWord   = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// pageProblems checks one page and records in seen what it found ("page
// command path", "page SYNAPSE_X", "page settings.json").
func pageProblems(page string, data []byte, goSources string, seen map[string]bool) []string {
	var problems []string
	lineOf := func(off int) string { return page + ":" + strconv.Itoa(1+bytes.Count(data[:off], []byte("\n"))) }

	// Command lines in shell code blocks, as the fleet test reads them.
	for _, m := range fence.FindAllSubmatchIndex(data, -1) {
		for _, c := range shellCalls(lineOf(m[2]), string(data[m[2]:m[3]])) {
			path, p := callProblems(c)
			problems = append(problems, p...)
			seen[page+" "+path] = true
		}
	}

	// Usage lines in inline code, outside code blocks.
	prose := shellFence.ReplaceAllFunc(slices.Clone(data), func(b []byte) []byte {
		return bytes.Repeat([]byte("\n"), bytes.Count(b, []byte("\n")))
	})
	for _, m := range inlineCode.FindAllSubmatchIndex(prose, -1) {
		code := strings.ReplaceAll(string(prose[m[2]:m[3]]), `\|`, "|")
		if !strings.HasPrefix(code, "synapse ") {
			continue
		}
		path, p := usageProblems(lineOf(m[2]), strings.Fields(code)[1:])
		problems = append(problems, p...)
		seen[page+" "+path] = true
	}

	// SYNAPSE_* variables: each must be named in the Go sources.
	for _, m := range synapseVar.FindAllIndex(data, -1) {
		name := string(data[m[0]:m[1]])
		seen[page+" "+name] = true
		if !strings.Contains(goSources, `"`+name+`"`) {
			problems = append(problems, fmt.Sprintf("%s: %s is not a variable the code reads (no %q in a Go source)", lineOf(m[0]), name, name))
		}
	}

	// settings.json examples (fenced as "json settings.json"): every key
	// must be one config.Settings has.
	for _, m := range settingsFence.FindAllSubmatchIndex(data, -1) {
		seen[page+" settings.json"] = true
		var v any
		if err := json.Unmarshal(data[m[2]:m[3]], &v); err != nil {
			problems = append(problems, fmt.Sprintf("%s: settings.json example is not JSON: %v", lineOf(m[2]), err))
			continue
		}
		for _, k := range unknownKeys(reflect.TypeFor[config.Settings](), v, "") {
			problems = append(problems, fmt.Sprintf("%s: settings.json has no key %s", lineOf(m[2]), k))
		}
	}
	return problems
}

// usageProblems checks a usage line such as "run [--output-format
// text|json] [--allow-path P] <prompt>": its leading plain words must be a
// command path and every flag in it one that command takes.
func usageProblems(where string, words []string) (string, []string) {
	stdio := IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	root := newRootCmd(stdio)
	cmd := root
	i := 0
	for ; i < len(words) && commandWord.MatchString(words[i]); i++ {
		sub := findSub(cmd, words[i])
		if sub == nil {
			if cmd.HasSubCommands() {
				return "", []string{fmt.Sprintf("%s: synapse %s: %q is no subcommand of %q", where, strings.Join(words, " "), words[i], cmd.CommandPath())}
			}
			break // an argument
		}
		cmd = sub
	}
	// The flags cobra adds itself when a command runs.
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	var problems []string
	for _, w := range words[i:] {
		if w == "--" {
			break
		}
		for _, part := range strings.Split(strings.Trim(w, "[]()"), "|") {
			f := usageFlag.FindString(part)
			if f == "" {
				continue
			}
			name := strings.TrimLeft(f, "-")
			var ok bool
			if strings.HasPrefix(f, "--") {
				ok = cmd.Flags().Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil
			} else {
				ok = len(name) == 1 && (cmd.Flags().ShorthandLookup(name) != nil || cmd.InheritedFlags().ShorthandLookup(name) != nil)
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: %s has no flag %s", where, cmd.CommandPath(), f))
			}
		}
	}
	return cmd.CommandPath(), problems
}

func findSub(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || slices.Contains(c.Aliases, name) {
			return c
		}
	}
	return nil
}

// unknownKeys lists the object keys in v that typ (a Settings field type)
// does not have; a map takes any key, json.RawMessage anything.
func unknownKeys(typ reflect.Type, v any, at string) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeFor[json.RawMessage]() {
		return nil
	}
	var out []string
	switch typ.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := map[string]reflect.Type{}
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				fields[name] = f.Type
			}
		}
		for k, val := range obj {
			ft, ok := fields[k]
			if !ok {
				out = append(out, strconv.Quote(at+k))
				continue
			}
			out = append(out, unknownKeys(ft, val, at+k+".")...)
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for k, val := range obj {
				out = append(out, unknownKeys(typ.Elem(), val, at+k+".")...)
			}
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok {
			for _, val := range arr {
				out = append(out, unknownKeys(typ.Elem(), val, at)...)
			}
		}
	}
	slices.Sort(out)
	return out
}

// goSourceText is every non-test Go file of the module, concatenated, and
// the fleet Containerfile's build arguments (SYNAPSE_BINARY) as quoted names.
func goSourceText(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	containerfile, err := os.ReadFile(filepath.Join(fleetDir, "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^ARG\s+(\w+)`).FindAllSubmatch(containerfile, -1) {
		b.WriteString(strconv.Quote(string(m[1])) + "\n")
	}
	err = filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#+\s+(.*)$`)
)

// linkProblems lists page's relative links whose file or anchor is missing.
func linkProblems(t *testing.T, page string) []string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, m := range mdLink.FindAllSubmatch(data, -1) {
		target := string(m[1])
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		path := page
		if file != "" {
			path = filepath.Join(filepath.Dir(page), file)
		}
		if fi, err := os.Stat(path); err == nil && fi.IsDir() && anchor == "" {
			continue // a folder, as GitHub lists it
		}
		linked, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: link %s: %v", filepath.Base(page), target, err))
			continue
		}
		if anchor != "" && !slices.Contains(anchors(linked), anchor) {
			problems = append(problems, fmt.Sprintf("%s: link %s: no heading with that anchor", filepath.Base(page), target))
		}
	}
	return problems
}

// anchors are GitHub's ids for a page's headings (lower case, spaces to
// hyphens, punctuation dropped).
func anchors(page []byte) []string {
	var out []string
	for _, m := range heading.FindAllSubmatch(page, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(string(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}
