package skills

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Script is one runnable file of a skill's scripts/ folder.
type Script struct {
	Name string // command name: the file name without extension, unless two files share it
	Path string // absolute path
}

// interpreters maps a file extension to the argv prefix that runs it. A
// shebang line, when present, takes precedence: it is the author's choice.
var interpreters = map[string][]string{
	".py":   {"python3"},
	".sh":   {"bash"},
	".bash": {"bash"},
	".zsh":  {"zsh"},
	".js":   {"node"},
	".mjs":  {"node"},
	".cjs":  {"node"},
	".rb":   {"ruby"},
	".pl":   {"perl"},
	".php":  {"php"},
	".lua":  {"lua"},
	".r":    {"Rscript"},
	".ts":   {"npx", "--yes", "tsx"},
}

// notScripts are files a scripts/ folder commonly holds that are not commands.
var notScripts = map[string]bool{".md": true, ".txt": true, ".json": true, ".yaml": true, ".yml": true,
	".pyc": true, ".toml": true, ".cfg": true, ".ini": true, ".lock": true, ".csv": true}

func findScripts(dir string) ([]Script, error) {
	sdir := filepath.Join(dir, "scripts")
	entries, err := os.ReadDir(sdir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", sdir, err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || !e.Type().IsRegular() {
			continue
		}
		ext := strings.ToLower(filepath.Ext(name))
		if notScripts[ext] {
			continue
		}
		if _, known := interpreters[ext]; !known {
			// Unknown extension: a command only if it has a shebang or is executable.
			info, err := e.Info()
			if err != nil {
				continue
			}
			if info.Mode()&0o111 == 0 && len(shebang(filepath.Join(sdir, name))) == 0 {
				continue
			}
		}
		files = append(files, name)
	}
	sort.Strings(files)
	stems := map[string]int{}
	for _, f := range files {
		stems[stem(f)]++
	}
	out := make([]Script, 0, len(files))
	for _, f := range files {
		name := stem(f)
		if stems[name] > 1 || !ValidName(name) {
			name = f // two files share a stem: the full file name disambiguates
		}
		if !ValidName(name) {
			continue
		}
		out = append(out, Script{Name: name, Path: filepath.Join(sdir, f)})
	}
	return out, nil
}

func stem(f string) string { return strings.TrimSuffix(f, filepath.Ext(f)) }

// shebang returns the interpreter argv of a `#!` first line, or nil.
func shebang(path string) []string {
	f, err := openRegular(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReader(f)
	line, _ := r.ReadString('\n')
	if !strings.HasPrefix(line, "#!") {
		return nil
	}
	return strings.Fields(strings.TrimSpace(line[2:]))
}

// Interpreter returns the argv prefix that runs the script: its shebang, else
// the interpreter of its extension, else the file itself when executable.
func (sc Script) Interpreter() ([]string, error) {
	if sb := shebang(sc.Path); len(sb) > 0 {
		return sb, nil
	}
	if in, ok := interpreters[strings.ToLower(filepath.Ext(sc.Path))]; ok {
		return append([]string(nil), in...), nil
	}
	if fi, err := os.Stat(sc.Path); err == nil && fi.Mode()&0o111 != 0 {
		return nil, nil
	}
	return nil, fmt.Errorf("cannot tell how to run %s: add a #! line or use a known extension (.py, .sh, .js, .rb, .pl, …)", sc.Path)
}

// Argv is the full argument vector for running the script with args. The args
// are appended as separate elements; nothing is ever joined into a shell string.
func (sc Script) Argv(args []string) ([]string, error) {
	in, err := sc.Interpreter()
	if err != nil {
		return nil, err
	}
	argv := append(in, sc.Path)
	return append(argv, args...), nil
}

// Doc extracts the script's own documentation: a Python module docstring, or
// the comment block at the top of the file (after the shebang). Empty when
// the script has neither.
func (sc Script) Doc() string {
	data, err := readFileLimited(sc.Path, 64<<10)
	if err != nil {
		return ""
	}
	return extractDoc(data, strings.ToLower(filepath.Ext(sc.Path)))
}

func extractDoc(src, ext string) string {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	i := 0
	if i < len(lines) && strings.HasPrefix(lines[i], "#!") {
		i++
	}
	var comments []string
	collect := func(text string) {
		if strings.HasPrefix(text, "-*-") || strings.HasPrefix(text, "shellcheck ") ||
			strings.HasPrefix(text, "vim:") || strings.HasPrefix(text, "coding") ||
			strings.HasPrefix(text, "/// <reference") {
			return
		}
		comments = append(comments, text)
	}
	for ; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		switch {
		case t == "" && len(comments) == 0:
			continue
		case strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "#!"):
			collect(strings.TrimPrefix(strings.TrimPrefix(t, "#"), " "))
			continue
		case strings.HasPrefix(t, "//"):
			collect(strings.TrimPrefix(strings.TrimPrefix(t, "//"), " "))
			continue
		case strings.HasPrefix(t, "/*"):
			block, next := blockComment(lines, i)
			if len(comments) == 0 && block != "" {
				return block
			}
			i = next
			continue
		}
		break
	}
	if ext == ".py" && i < len(lines) {
		if doc := pyDocstring(lines[i:]); doc != "" {
			return doc
		}
	}
	return strings.TrimSpace(strings.Join(comments, "\n"))
}

func blockComment(lines []string, i int) (string, int) {
	var out []string
	for j := i; j < len(lines); j++ {
		t := strings.TrimSpace(lines[j])
		if j == i {
			t = strings.TrimLeft(strings.TrimPrefix(t, "/*"), "*")
		}
		end := strings.Contains(t, "*/")
		t = strings.TrimSpace(strings.SplitN(t, "*/", 2)[0])
		t = strings.TrimSpace(strings.TrimPrefix(t, "*"))
		out = append(out, t)
		if end {
			return strings.TrimSpace(strings.Join(out, "\n")), j
		}
	}
	return "", len(lines)
}

// pyDocstring reads a module docstring starting at lines[0].
func pyDocstring(lines []string) string {
	first := strings.TrimSpace(lines[0])
	first = strings.TrimLeft(first, "rRuU")
	var q string
	switch {
	case strings.HasPrefix(first, `"""`):
		q = `"""`
	case strings.HasPrefix(first, `'''`):
		q = `'''`
	default:
		return ""
	}
	rest := first[3:]
	if k := strings.Index(rest, q); k >= 0 {
		return strings.TrimSpace(rest[:k])
	}
	body := []string{rest}
	for j := 1; j < len(lines); j++ {
		if k := strings.Index(lines[j], q); k >= 0 {
			body = append(body, lines[j][:k])
			return dedent(body)
		}
		body = append(body, lines[j])
	}
	return ""
}

// dedent removes the common indentation of all lines but the first (PEP 257).
func dedent(lines []string) string {
	indent := -1
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := []string{strings.TrimSpace(lines[0])}
	for _, l := range lines[1:] {
		if indent > 0 && len(l) >= indent {
			l = l[indent:]
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
