package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Root is one directory that holds skill folders.
type Root struct {
	Dir    string
	Source Source
}

// Index is the set of skills found under its roots. It reloads itself when a
// root or a skill changes (by directory and SKILL.md modification times), so
// every read is current without watching the file system. Earlier roots win a
// name clash; the shadowed skill is reported in Problems.
type Index struct {
	roots []Root

	mu       sync.Mutex
	stamp    []int64
	skills   []*Skill
	byName   map[string]*Skill
	problems []string
}

// DefaultRoots are the skill folders Synapse reads, in precedence order: the
// project's .synapse/skills (when cwd is set), then the user store. A project
// skill replaces a user skill of the same name, as ./mcp_servers.json
// replaces a user MCP server: the project knows best what it needs.
// skill:import/rollback/delete manage only the user store.
func DefaultRoots(userDir, cwd string) []Root {
	var roots []Root
	if cwd != "" {
		roots = append(roots, Root{Dir: filepath.Join(cwd, ".synapse", "skills"), Source: SourceProject})
	}
	return append(roots, Root{Dir: userDir, Source: SourceUser})
}

// NewIndex returns an index over roots (missing directories are fine).
func NewIndex(roots ...Root) *Index { return &Index{roots: roots} }

// Roots returns the roots, in precedence order.
func (ix *Index) Roots() []Root { return append([]Root(nil), ix.roots...) }

// Invalidate forces the next read to rescan.
func (ix *Index) Invalidate() {
	ix.mu.Lock()
	ix.stamp = nil
	ix.mu.Unlock()
}

// Skills returns all skills sorted by name.
func (ix *Index) Skills() []*Skill {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refreshLocked()
	return append([]*Skill(nil), ix.skills...)
}

// Get finds a skill by name (case-insensitive when no exact match exists).
func (ix *Index) Get(name string) (*Skill, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refreshLocked()
	if s, ok := ix.byName[name]; ok {
		return s, true
	}
	for _, s := range ix.skills {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return nil, false
}

// Problems lists skill folders that could not be loaded or were shadowed.
func (ix *Index) Problems() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.refreshLocked()
	return append([]string(nil), ix.problems...)
}

// stampOf is a cheap fingerprint of everything the index depends on: the
// roots' and each skill's SKILL.md and scripts/ modification times (two stat
// calls per skill, no file reads).
func (ix *Index) stampOf() []int64 {
	var st []int64
	add := func(p string) {
		if fi, err := os.Stat(p); err == nil {
			st = append(st, fi.ModTime().UnixNano(), fi.Size())
		} else {
			st = append(st, -1, -1)
		}
	}
	for _, r := range ix.roots {
		add(r.Dir)
		entries, _ := os.ReadDir(r.Dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") || !(e.IsDir() || e.Type()&os.ModeSymlink != 0) {
				continue
			}
			d := filepath.Join(r.Dir, e.Name())
			add(filepath.Join(d, SkillFile))
			add(filepath.Join(d, "scripts"))
		}
	}
	return st
}

func (ix *Index) refreshLocked() {
	stamp := ix.stampOf()
	if ix.byName != nil && ix.stamp != nil && slices.Equal(stamp, ix.stamp) {
		return
	}
	ix.stamp = stamp
	ix.skills, ix.byName, ix.problems = nil, map[string]*Skill{}, nil
	for _, r := range ix.roots {
		entries, err := os.ReadDir(r.Dir)
		if err != nil {
			if !os.IsNotExist(err) {
				ix.problems = append(ix.problems, fmt.Sprintf("cannot read skills directory %s: %v", r.Dir, err))
			}
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			d := filepath.Join(r.Dir, e.Name())
			if !isDir(d) {
				continue
			}
			if _, err := os.Stat(filepath.Join(d, SkillFile)); err != nil {
				ix.problems = append(ix.problems, fmt.Sprintf("folder %s has no %s, so it is not a skill: add a %s or move the folder out of %s", d, SkillFile, SkillFile, r.Dir))
				continue
			}
			s, err := Load(d, r.Source)
			if err != nil {
				ix.problems = append(ix.problems, err.Error())
				continue
			}
			if r.Source == SourceProject && Reserved(s.Name) {
				ix.problems = append(ix.problems, fmt.Sprintf("skill %q in %s is not used: names starting with %q belong to the skills bundled with Synapse; rename it", s.Name, d, BundledPrefix))
				continue
			}
			if prev, dup := ix.byName[s.Name]; dup {
				ix.problems = append(ix.problems, fmt.Sprintf("skill %q in %s is shadowed by %s", s.Name, d, prev.Dir))
				continue
			}
			ix.byName[s.Name] = s
			ix.skills = append(ix.skills, s)
		}
	}
	sortSkills(ix.skills)
}

// Describe is the index as text for a model (task:skill:search): one block per
// skill with its name, version, tags, description and script commands.
func (ix *Index) Describe() string {
	list := ix.Skills()
	if len(list) == 0 {
		return "No skills are installed."
	}
	var b strings.Builder
	for _, s := range list {
		fmt.Fprintf(&b, "- name: %s\n", s.Name)
		if s.Version != "" {
			fmt.Fprintf(&b, "  version: %s\n", s.Version)
		}
		if len(s.Tags) > 0 {
			fmt.Fprintf(&b, "  tags: %s\n", strings.Join(s.Tags, ", "))
		}
		fmt.Fprintf(&b, "  description: %s\n", strings.Join(strings.Fields(s.Description), " "))
		if len(s.Scripts) > 0 {
			fmt.Fprintf(&b, "  scripts: %s\n", strings.Join(s.ScriptCommands(), ", "))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// Keywords splits a query into lower-case words, dropping very common ones.
func Keywords(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.'
	}) {
		f = strings.Trim(f, "-_.")
		if f == "" || stopWords[f] || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, f)
	}
	return out
}

var stopWords = map[string]bool{"a": true, "an": true, "the": true, "to": true, "of": true, "and": true,
	"or": true, "for": true, "in": true, "on": true, "with": true, "i": true, "me": true, "my": true,
	"please": true, "want": true, "need": true, "can": true, "you": true, "is": true, "it": true}
