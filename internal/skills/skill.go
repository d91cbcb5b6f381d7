// Package skills implements Synapse's skill system: SKILL.md folders in the
// Agent Skills format (YAML frontmatter + Markdown body, optional scripts/,
// references/, assets/), an index kept current as skills change, a local keyword
// search, the user skill store with bounded snapshots (import, rollback, delete),
// and the commands skill:load|list|info|import|rollback|delete and
// skill:<skill>:<script>.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v4"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// SkillFile is the file that makes a directory a skill.
const SkillFile = "SKILL.md"

// Source says where a skill was found.
type Source string

const (
	// SourceUser is the user store, $SYNAPSE_HOME/skills (managed by skill:import/rollback/delete).
	SourceUser Source = "user"
	// SourceProject is a project's .synapse/skills directory (read-only to the commands).
	SourceProject Source = "project"
)

// Skill is one parsed skill folder.
type Skill struct {
	Name          string
	Description   string
	Version       string
	Tags          []string
	License       string
	Compatibility string
	AllowedTools  []string
	Metadata      map[string]string

	Dir     string // absolute path of the skill folder
	Source  Source
	Body    string   // Markdown after the frontmatter
	Scripts []Script // files of scripts/ that can run as skill:<name>:<script>

	HasReferences bool
	HasAssets     bool
}

// Frontmatter is the YAML header of a SKILL.md, as far as Synapse reads it.
type Frontmatter struct {
	Name          string
	Description   string
	Version       string
	Tags          []string
	License       string
	Compatibility string
	AllowedTools  []string
	Metadata      map[string]string
}

// ValidName reports whether name can name a skill: it becomes a directory name
// and the middle of skill:<name>:<script>, so no separators, colons or spaces:
// 1-64 ASCII letters, digits, '.', '_' or '-', the first a letter or digit
// (so never "." or "..").
func ValidName(name string) bool { return textutil.IsName(name, "._-") }

// SplitFrontmatter separates a SKILL.md into its YAML header and Markdown body.
// ok is false when the file has no `---` header.
func SplitFrontmatter(data []byte) (yamlText, body string, ok bool) {
	s := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.HasPrefix(s, "---\n") {
		return "", s, false
	}
	rest := s[4:]
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimRight(line, " \t") == "---" {
			body := ""
			if end >= 0 {
				body = rest[off+end+1:]
			}
			return rest[:off], strings.TrimLeft(body, "\n"), true
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", s, false
}

// ParseFrontmatter reads the YAML header. Skills written for other agents often
// have descriptions with unquoted colons, which is invalid YAML; for those a
// line-based `key: value` reading of the top-level keys is used instead, so
// existing skills work unchanged.
func ParseFrontmatter(yamlText string) (Frontmatter, error) {
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &raw); err != nil {
		fm, ok := lenientFrontmatter(yamlText)
		if !ok {
			return Frontmatter{}, fmt.Errorf("invalid YAML frontmatter: %w", err)
		}
		return fm, nil
	}
	var fm Frontmatter
	fm.Name = scalar(raw["name"])
	fm.Description = strings.TrimSpace(scalar(raw["description"]))
	fm.Version = scalar(raw["version"])
	fm.Tags = stringList(raw["tags"])
	fm.License = scalar(raw["license"])
	fm.Compatibility = scalar(raw["compatibility"])
	fm.AllowedTools = stringList(raw["allowed-tools"])
	if md, ok := raw["metadata"]; ok && md.Kind == yaml.MappingNode {
		fm.Metadata = map[string]string{}
		for i := 0; i+1 < len(md.Content); i += 2 {
			k, v := md.Content[i].Value, md.Content[i+1]
			if v.Kind == yaml.ScalarNode {
				fm.Metadata[k] = v.Value
			} else {
				fm.Metadata[k] = strings.Join(stringList(*v), ", ")
			}
		}
		// The Agent Skills format keeps extra fields under metadata.
		if fm.Version == "" {
			fm.Version = fm.Metadata["version"]
		}
		if len(fm.Tags) == 0 && md.Content != nil {
			for i := 0; i+1 < len(md.Content); i += 2 {
				if md.Content[i].Value == "tags" {
					fm.Tags = stringList(*md.Content[i+1])
				}
			}
		}
	}
	return fm, nil
}

func scalar(n yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strings.TrimSpace(n.Value)
	}
	return ""
}

// stringList accepts a YAML list or a comma/space separated string.
func stringList(n yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if v := strings.TrimSpace(c.Value); v != "" && c.Kind == yaml.ScalarNode {
				out = append(out, v)
			}
		}
	case yaml.ScalarNode:
		out = append(out, strings.FieldsFunc(n.Value, func(r rune) bool { return r == ',' || r == ' ' })...)
	}
	return out
}

func lenientFrontmatter(text string) (Frontmatter, bool) {
	var fm Frontmatter
	found, inMetadata := false, false
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		k = strings.TrimSpace(k)
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		if indented {
			if !inMetadata {
				continue
			}
			if fm.Metadata == nil {
				fm.Metadata = map[string]string{}
			}
			fm.Metadata[k] = v
			switch k {
			case "version":
				if fm.Version == "" {
					fm.Version = v
				}
			case "tags":
				if len(fm.Tags) == 0 {
					fm.Tags = stringList(yaml.Node{Kind: yaml.ScalarNode, Value: strings.Trim(v, "[]")})
				}
			}
			continue
		}
		inMetadata = k == "metadata"
		switch k {
		case "name":
			fm.Name, found = v, true
		case "description":
			fm.Description, found = v, true
		case "version":
			fm.Version = v
		case "license":
			fm.License = v
		case "compatibility":
			fm.Compatibility = v
		case "tags":
			fm.Tags = stringList(yaml.Node{Kind: yaml.ScalarNode, Value: strings.Trim(v, "[]")})
		}
	}
	return fm, found
}

// Load parses the skill folder dir. The name comes from the frontmatter, or
// from the folder name when the frontmatter has none.
func Load(dir string, src Source) (*Skill, error) {
	data, err := readFileLimited(filepath.Join(dir, SkillFile), maxSkillFile)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, SkillFile), err)
	}
	yamlText, body, ok := SplitFrontmatter([]byte(data))
	if !ok {
		return nil, fmt.Errorf("%s: no YAML frontmatter: start the file with a --- block holding name and description", filepath.Join(dir, SkillFile))
	}
	fm, err := ParseFrontmatter(yamlText)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SkillFile), err)
	}
	name := fm.Name
	if name == "" {
		name = filepath.Base(dir)
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("%s: invalid skill name %q: use letters, digits, '.', '_' or '-' (at most 64)", filepath.Join(dir, SkillFile), name)
	}
	s := &Skill{
		Name: name, Description: fm.Description, Version: fm.Version, Tags: fm.Tags,
		License: fm.License, Compatibility: fm.Compatibility, AllowedTools: fm.AllowedTools,
		Metadata: fm.Metadata, Dir: dir, Source: src, Body: body,
	}
	s.Scripts, err = findScripts(dir)
	if err != nil {
		return nil, err
	}
	s.HasReferences = isDir(filepath.Join(dir, "references"))
	s.HasAssets = isDir(filepath.Join(dir, "assets"))
	return s, nil
}

// Script finds a script by command name (stem) or file name.
func (s *Skill) Script(name string) (Script, bool) {
	for _, sc := range s.Scripts {
		if sc.Name == name {
			return sc, true
		}
	}
	for _, sc := range s.Scripts {
		if filepath.Base(sc.Path) == name {
			return sc, true
		}
	}
	return Script{}, false
}

// ScriptCommands lists the skill:<name>:<script> commands of s.
func (s *Skill) ScriptCommands() []string {
	out := make([]string, len(s.Scripts))
	for i, sc := range s.Scripts {
		out[i] = "skill:" + s.Name + ":" + sc.Name
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func sortSkills(list []*Skill) {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
}

// maxSkillFile bounds what is read of a SKILL.md.
const maxSkillFile = 1 << 20

// openRegular opens path for reading without following a symlink as its
// last part, and only when it is a regular file. A project's skills are
// written by sandboxed commands: a SKILL.md or script linked to a file the
// sandbox hides (~/.ssh/config) was read by the host and its text shown to
// the model by skill:load, skill:list and the script docs.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link; skill files must be regular files in the skill's folder", path)
		}
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// readFileLimited reads at most limit bytes of a regular file. The buffer
// grows with what is read, not to the limit: every start loads each
// SKILL.md, and a buffer of the 1 MB limit each was most of its garbage.
func readFileLimited(path string, limit int64) (string, error) {
	f, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit))
	if err != nil {
		return "", err
	}
	return string(b), nil
}
