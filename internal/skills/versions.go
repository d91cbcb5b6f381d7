package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// DefaultMaxVersions is how many snapshots per skill the store keeps
// (SYNAPSE_SKILL_MAX_VERSIONS overrides it through config).
const DefaultMaxVersions = 20

const versionsDir = ".versions"

// Snapshot is one saved version of a skill: a copy of its folder under
// .versions/<name>/<number>/skill with a meta.json beside it.
//
// The store keeps a copy of every content a skill has had, the current one
// included: installing (import, an enhancement, a rollback) snapshots the
// outgoing folder when its content is not saved yet (a hand edit) and then
// the incoming one. Content already saved is never saved twice (compared by
// Hash), and pruning never removes the copy of the content being installed,
// so a rollback to the oldest snapshot at the limit loses nothing.
type Snapshot struct {
	Number  int       `json:"number"`
	Version string    `json:"version,omitempty"` // the frontmatter version at the time
	Created time.Time `json:"created"`
	Reason  string    `json:"reason"`
	// Hash identifies the content (paths, modes, bytes of regular files).
	Hash string `json:"hash,omitempty"`
	dir  string
}

func (st *Store) max() int {
	if st.MaxVersions > 0 {
		return st.MaxVersions
	}
	return DefaultMaxVersions
}

func (st *Store) verDir(name string) string { return filepath.Join(st.Dir, versionsDir, name) }

// Versions lists the snapshots of name, oldest first.
func (st *Store) Versions(name string) ([]Snapshot, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(st.verDir(name))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read versions of %s: %w", name, err)
	}
	var out []Snapshot
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		d := filepath.Join(st.verDir(name), e.Name())
		if !isDir(filepath.Join(d, "skill")) {
			continue // a snapshot cut short by a crash holds nothing to restore
		}
		snap := Snapshot{Number: n, dir: d}
		if data, err := os.ReadFile(filepath.Join(d, "meta.json")); err == nil {
			_ = json.Unmarshal(data, &snap) // a torn meta.json still leaves the folder restorable
			snap.Number = n
		}
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// hashOf is the snapshot's content hash (computed for snapshots made before
// hashes were recorded).
func (s Snapshot) hashOf() string {
	if s.Hash != "" {
		return s.Hash
	}
	h, _ := ContentHash(filepath.Join(s.dir, "skill"))
	return h
}

// ContentHash identifies a skill folder's content: the relative paths, modes
// and bytes of its folders and regular files, as a copy keeps them (symlinks,
// special files and .git are left out, as copyTree leaves them out).
func ContentHash(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir() && d.Name() == ".git" && p != dir:
			return filepath.SkipDir
		case d.IsDir():
			fmt.Fprintf(h, "d %s\x00", rel)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "f %s %o %d\x00", rel, info.Mode().Perm()&0o111, info.Size())
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			_, err = io.Copy(h, f)
			f.Close()
			return err
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("read %s: %w", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// recordLocked saves a copy of src as a new snapshot of name, unless a
// snapshot with the same content exists: then that one is returned and
// created is false.
func (st *Store) recordLocked(name, src, reason string) (snap Snapshot, created bool, err error) {
	hash, err := ContentHash(src)
	if err != nil {
		return Snapshot{}, false, err
	}
	vs, err := st.Versions(name)
	if err != nil {
		return Snapshot{}, false, err
	}
	for _, v := range vs {
		if v.hashOf() == hash {
			return v, false, nil
		}
	}
	vd := st.verDir(name)
	if err := os.MkdirAll(vd, 0o755); err != nil {
		return Snapshot{}, false, fmt.Errorf("create %s: %w", vd, err)
	}
	n, err := st.nextNumber(name, vs)
	if err != nil {
		return Snapshot{}, false, err
	}
	snap = Snapshot{Number: n, Created: st.now().UTC(), Reason: reason, Hash: hash, dir: filepath.Join(vd, strconv.Itoa(n))}
	if s, err := Load(src, SourceUser); err == nil {
		snap.Version = s.Version
	}
	// Copied into a hidden temp folder, then renamed: a crash leaves no
	// half-copied snapshot under a number.
	tmp, err := os.MkdirTemp(vd, ".new-")
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("create snapshot of %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	if _, err := copyTree(src, filepath.Join(tmp, "skill")); err != nil {
		return Snapshot{}, false, fmt.Errorf("snapshot %s: %w", name, err)
	}
	meta, _ := json.MarshalIndent(snap, "", "  ")
	if err := fsutil.WriteFileAtomic(filepath.Join(tmp, "meta.json"), meta, 0o600); err != nil {
		return Snapshot{}, false, err
	}
	if err := os.Rename(tmp, snap.dir); err != nil {
		return Snapshot{}, false, fmt.Errorf("snapshot %s: %w", name, err)
	}
	return snap, true, nil
}

// nextNumber keeps snapshot numbers increasing even after prunes.
func (st *Store) nextNumber(name string, vs []Snapshot) (int, error) {
	seqFile := filepath.Join(st.verDir(name), "seq")
	n := 0
	if data, err := os.ReadFile(seqFile); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if len(vs) > 0 && vs[len(vs)-1].Number > n {
		n = vs[len(vs)-1].Number
	}
	n++
	if err := fsutil.WriteFileAtomic(seqFile, []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
		return 0, err
	}
	return n, nil
}

// pruneLocked removes the oldest snapshots beyond the limit, never the one
// holding keepHash (the content just installed).
func (st *Store) pruneLocked(name, keepHash string) {
	vs, err := st.Versions(name)
	if err != nil {
		return
	}
	excess := len(vs) - st.max()
	for _, v := range vs {
		if excess <= 0 {
			return
		}
		if keepHash != "" && v.hashOf() == keepHash {
			continue
		}
		if os.RemoveAll(v.dir) == nil {
			excess--
		}
	}
}

// installLocked makes staged (a folder inside st.Dir) the skill name: the
// current folder's content is snapshotted first when it is not saved yet,
// the folders are swapped by renames, and the new content is snapshotted.
// prev is the snapshot holding the replaced content (nil when name was not
// installed); cur is the snapshot of the installed content.
func (st *Store) installLocked(name, staged, reason string) (prev *Snapshot, cur Snapshot, err error) {
	if err := checkName(name); err != nil {
		return nil, Snapshot{}, err
	}
	dst := st.skillDir(name)
	if isDir(dst) {
		s, _, err := st.recordLocked(name, dst, "before "+reason)
		if err != nil {
			return nil, Snapshot{}, fmt.Errorf("save the current version of %s first: %w", name, err)
		}
		prev = &s
		trash, err := os.MkdirTemp(st.Dir, ".old-")
		if err != nil {
			return nil, Snapshot{}, fmt.Errorf("replace %s: %w", name, err)
		}
		defer os.RemoveAll(trash)
		old := filepath.Join(trash, name)
		if err := os.Rename(dst, old); err != nil {
			return nil, Snapshot{}, fmt.Errorf("replace %s: %w", name, err)
		}
		if err := os.Rename(staged, dst); err != nil {
			if rerr := os.Rename(old, dst); rerr != nil {
				return nil, Snapshot{}, fmt.Errorf("install %s: %w (and putting the old version back failed: %v; it is saved as snapshot %d)", name, err, rerr, s.Number)
			}
			return nil, Snapshot{}, fmt.Errorf("install %s: %w", name, err)
		}
	} else if err := os.Rename(staged, dst); err != nil {
		return nil, Snapshot{}, fmt.Errorf("install %s: %w", name, err)
	}
	cur, _, err = st.recordLocked(name, dst, reason)
	if err != nil {
		return prev, Snapshot{}, fmt.Errorf("%s is installed, but saving a snapshot of it failed: %w", name, err)
	}
	st.pruneLocked(name, cur.Hash)
	return prev, cur, nil
}

// Commit installs a copy of the skill folder src as name (an enhancement or
// a merge made in a scratch folder). Like every change, it snapshots the
// current version first. created reports that name was not installed before.
func (st *Store) Commit(name, src, reason string) (cur Snapshot, created bool, err error) {
	if err := checkName(name); err != nil {
		return Snapshot{}, false, err
	}
	unlock, err := st.lock()
	if err != nil {
		return Snapshot{}, false, err
	}
	defer unlock()
	if isDir(st.skillDir(name)) {
		// Unchanged content is neither copied nor swapped: at most saved
		// (a hand edit that no snapshot holds yet).
		have, herr := ContentHash(src)
		cur, cerr := ContentHash(st.skillDir(name))
		if herr == nil && cerr == nil && have == cur {
			snap, _, err := st.recordLocked(name, st.skillDir(name), reason)
			return snap, false, err
		}
	}
	tmp, err := os.MkdirTemp(st.Dir, ".commit-")
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("create a temporary folder in %s: %w", st.Dir, err)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, name)
	if _, err := copyTree(src, staged); err != nil {
		return Snapshot{}, false, fmt.Errorf("copy %s: %w", src, err)
	}
	prev, cur, err := st.installLocked(name, staged, reason)
	return cur, prev == nil, err
}

// Rollback restores snapshot number of name. The current folder is
// snapshotted first when its content is not saved yet, and the restored
// snapshot stays in the list, so a rollback never loses a version. It
// returns the restored snapshot and the one holding the replaced content
// (nil when the skill was not installed, e.g. after skill:delete).
func (st *Store) Rollback(name string, number int) (Snapshot, *Snapshot, error) {
	if err := checkName(name); err != nil {
		return Snapshot{}, nil, err
	}
	unlock, err := st.lock()
	if err != nil {
		return Snapshot{}, nil, err
	}
	defer unlock()
	vs, err := st.Versions(name)
	if err != nil {
		return Snapshot{}, nil, err
	}
	if len(vs) == 0 {
		return Snapshot{}, nil, fmt.Errorf("skill %q has no saved versions to roll back to", name)
	}
	var target *Snapshot
	for i := range vs {
		if vs[i].Number == number {
			target = &vs[i]
		}
	}
	if target == nil {
		return Snapshot{}, nil, fmt.Errorf("skill %q has no snapshot %d; available: %s", name, number, snapNumbers(vs))
	}
	tmp, err := os.MkdirTemp(st.Dir, ".rollback-")
	if err != nil {
		return Snapshot{}, nil, fmt.Errorf("create a temporary folder in %s: %w", st.Dir, err)
	}
	defer os.RemoveAll(tmp)
	// A copy, not a move: the snapshot stays where it is whatever happens next.
	staged := filepath.Join(tmp, name)
	if _, err := copyTree(filepath.Join(target.dir, "skill"), staged); err != nil {
		return Snapshot{}, nil, fmt.Errorf("restore snapshot %d of %s: %w", target.Number, name, err)
	}
	prev, _, err := st.installLocked(name, staged, fmt.Sprintf("rollback to snapshot %d", target.Number))
	if err != nil {
		return Snapshot{}, prev, err
	}
	if prev != nil && prev.Number == target.Number {
		prev = nil // it was already the installed version
	}
	return *target, prev, nil
}

// Delete removes name from the store, keeping its content as a snapshot.
func (st *Store) Delete(name string) (Snapshot, error) {
	if err := checkName(name); err != nil {
		return Snapshot{}, err
	}
	unlock, err := st.lock()
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	dst := st.skillDir(name)
	if !isDir(dst) {
		return Snapshot{}, fmt.Errorf("skill %q is not installed in %s", name, st.Dir)
	}
	snap, _, err := st.recordLocked(name, dst, "before skill:delete")
	if err != nil {
		return Snapshot{}, fmt.Errorf("save %s before deleting it: %w", name, err)
	}
	trash, err := os.MkdirTemp(st.Dir, ".old-")
	if err != nil {
		return Snapshot{}, fmt.Errorf("delete %s: %w", name, err)
	}
	defer os.RemoveAll(trash)
	if err := os.Rename(dst, filepath.Join(trash, name)); err != nil {
		return Snapshot{}, fmt.Errorf("delete %s: %w", name, err)
	}
	st.pruneLocked(name, snap.hashOf())
	return snap, nil
}

// CurrentSnapshot is the snapshot holding the installed content of name,
// if one does (a hand-edited skill has none until its next change).
func (st *Store) CurrentSnapshot(name string, vs []Snapshot) (Snapshot, bool) {
	dir := st.skillDir(name)
	if !isDir(dir) {
		return Snapshot{}, false
	}
	h, err := ContentHash(dir)
	if err != nil {
		return Snapshot{}, false
	}
	for _, v := range vs {
		if v.hashOf() == h {
			return v, true
		}
	}
	return Snapshot{}, false
}

// Times are when a skill was first saved (its oldest snapshot, else the
// folder's time) and last changed (the newest modification inside it).
func (st *Store) Times(dir, name string) (created, updated time.Time) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(updated) {
			updated = info.ModTime()
		}
		return nil
	})
	created = updated
	if fi, err := os.Stat(dir); err == nil && fi.ModTime().Before(created) {
		created = fi.ModTime()
	}
	if vs, _ := st.Versions(name); len(vs) > 0 && !vs[0].Created.IsZero() && vs[0].Created.Before(created) {
		created = vs[0].Created
	}
	return created, updated
}

func snapNumbers(vs []Snapshot) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, strconv.Itoa(v.Number))
	}
	return strings.Join(parts, ", ")
}

// CopyDir copies a skill folder's regular files and folders (symlinks and
// special files are left out, as on import).
func CopyDir(src, dst string) error {
	_, err := copyTree(src, dst)
	return err
}
