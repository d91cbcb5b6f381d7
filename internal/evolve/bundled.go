package evolve

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/fsutil"
	"github.com/synapse-agent/synapse/internal/skills"
)

// The bundled meta-skills, written for Synapse: how to write a skill, and
// how to enhance or merge one.
//
//go:embed all:metaskills
var bundledFS embed.FS

// BundledNames are the meta-skills installed into the user store. They
// start with skills.BundledPrefix, which no import may take: a public skill
// of the same name (anthropics/skills has a skill-creator) cannot replace
// the one auto-enhance follows.
var BundledNames = []string{"synapse-skill-creator", "synapse-skill-enhance"}

// renamed pairs each meta-skill's earlier name with its current one.
var renamed = [][2]string{{"skill-creator", "synapse-skill-creator"}, {"skill-enhance", "synapse-skill-enhance"}}

// bundledRecord is the file in the store that remembers the content hash
// of each meta-skill as installed, to tell an unchanged copy (upgraded)
// from one the user changed (left alone).
const bundledRecord = ".bundled.json"

// InstallBundled installs the meta-skills into the store on first run and
// upgrades each one only while the user has not changed it (nor deleted
// it: a deleted meta-skill stays deleted). Every change goes through the
// store, with a snapshot. It returns what it did, one line each.
func InstallBundled(st *skills.Store) (did []string, err error) {
	rec := map[string]string{}
	recPath := filepath.Join(st.Dir, bundledRecord)
	if data, err := os.ReadFile(recPath); err == nil {
		_ = json.Unmarshal(data, &rec) // a torn record only costs one upgrade decision
	}
	// Extracted inside the store, not the shared temp dir: sandboxed
	// commands can write there and could swap a file before it is installed.
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(st.Dir, ".metaskills-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	changed := false
	defer func() {
		// Saved whatever failed later: a rename done and not recorded would
		// read as a meta-skill the user deleted.
		if changed {
			data, _ := json.MarshalIndent(rec, "", "  ")
			if werr := fsutil.WriteFileAtomic(recPath, append(data, '\n'), 0o600); werr != nil && err == nil {
				err = werr
			}
		}
	}()
	if did, changed, err = migrate(st, rec); err != nil {
		return did, err
	}
	for _, name := range BundledNames {
		src := filepath.Join(tmp, name)
		if err := extract(name, src); err != nil {
			return did, fmt.Errorf("bundled skill %s: %w", name, err)
		}
		want, err := skills.ContentHash(src)
		if err != nil {
			return did, err
		}
		cur := filepath.Join(st.Dir, name)
		installed, seen := rec[name]
		switch _, statErr := os.Stat(filepath.Join(cur, skills.SkillFile)); {
		case statErr != nil && seen:
			continue // the user deleted it
		case statErr != nil:
			if _, _, err := st.Commit(name, src, "bundled meta-skill"); err != nil {
				return did, err
			}
			did = append(did, "installed the bundled skill "+name)
		default:
			have, err := skills.ContentHash(cur)
			if err != nil {
				return did, err
			}
			if have == want || !seen || have != installed {
				// Current, or not ours to replace (a skill of the same
				// name the user had, or a copy the user changed).
				if have == want && installed != want {
					rec[name], changed = want, true
				}
				continue
			}
			if _, _, err := st.Commit(name, src, "bundled meta-skill upgrade"); err != nil {
				return did, err
			}
			did = append(did, "upgraded the bundled skill "+name)
		}
		rec[name], changed = want, true
	}
	return did, nil
}

// migrate handles the meta-skills installed under their earlier names
// (rec holds their hashes as installed): a copy the user has not changed is
// deleted (kept as a snapshot) and its successor installed by the caller; a
// changed copy is left to the user as a skill of their own; a deleted one
// keeps its successor deleted too.
func migrate(st *skills.Store, rec map[string]string) (did []string, changed bool, err error) {
	for _, r := range renamed {
		old, name := r[0], r[1]
		installed, seen := rec[old]
		if !seen {
			continue // a skill of that name is the user's own
		}
		delete(rec, old)
		changed = true
		if _, err := os.Stat(filepath.Join(st.Dir, old, skills.SkillFile)); err != nil {
			if _, ok := rec[name]; !ok {
				rec[name] = installed // deleted by the user: so stays its successor
			}
			continue
		}
		have, err := skills.ContentHash(filepath.Join(st.Dir, old))
		if err != nil {
			return did, changed, err
		}
		if have == installed {
			if _, err := st.Delete(old); err != nil {
				return did, changed, fmt.Errorf("remove the bundled skill %s (renamed %s): %w", old, name, err)
			}
			did = append(did, fmt.Sprintf("renamed the bundled skill %s to %s (the old copy is kept as a snapshot)", old, name))
		}
	}
	return did, changed, nil
}

// extract writes the embedded meta-skill name into dst (scripts executable).
func extract(name, dst string) error {
	root := path.Join("metaskills", name)
	return fs.WalkDir(bundledFS, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := bundledFS.ReadFile(p)
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(rel, "scripts/") {
			mode = 0o755
		}
		return os.WriteFile(target, data, mode)
	})
}
