package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// DefaultMaxVersions is how many snapshots per skill the store keeps.
const DefaultMaxVersions = 5

const versionsDir = ".versions"

// Store manages the user skill folder ($SYNAPSE_HOME/skills). Every change
// (import over an existing skill, rollback, delete) first moves the current
// folder into a numbered snapshot under .versions/<name>/; at most MaxVersions
// snapshots are kept per skill. Changes are renames within one file system, so
// a crash leaves either the old or the new folder in place, never a mix.
type Store struct {
	Dir         string
	MaxVersions int
	// Git runs `git` for imports from URLs; nil means the git on PATH.
	Git func(ctx context.Context, args ...string) error
	// Now is the clock for snapshot times (nil: time.Now).
	Now func() time.Time
}

// Snapshot is one kept previous version of a skill.
type Snapshot struct {
	Number  int       `json:"number"`
	Version string    `json:"version,omitempty"` // the frontmatter version at the time
	Created time.Time `json:"created"`
	Reason  string    `json:"reason"`
	dir     string
}

func (st *Store) max() int {
	if st.MaxVersions > 0 {
		return st.MaxVersions
	}
	return DefaultMaxVersions
}

func (st *Store) now() time.Time {
	if st.Now != nil {
		return st.Now()
	}
	return time.Now()
}

// lock takes an exclusive lock on the store across processes.
func (st *Store) lock() (func(), error) {
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create skills directory %s: %w", st.Dir, err)
	}
	f, err := os.OpenFile(filepath.Join(st.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock skills directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock skills directory: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func (st *Store) skillDir(name string) string { return filepath.Join(st.Dir, name) }

// checkName refuses a name that is not one folder of the store: a `..` or
// a separator would make a rename reach outside it.
func checkName(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("invalid skill name %q: a skill name is one folder name of letters, digits, '.', '_' or '-'; see skill:list", name)
	}
	return nil
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
		snap := Snapshot{Number: n, dir: d}
		if data, err := os.ReadFile(filepath.Join(d, "meta.json")); err == nil {
			_ = json.Unmarshal(data, &snap)
			snap.Number = n
		}
		out = append(out, snap)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, nil
}

// snapshotLocked moves the current folder of name into a new snapshot.
func (st *Store) snapshotLocked(name, reason string) (Snapshot, error) {
	if err := checkName(name); err != nil {
		return Snapshot{}, err
	}
	cur := st.skillDir(name)
	vd := st.verDir(name)
	if err := os.MkdirAll(vd, 0o755); err != nil {
		return Snapshot{}, fmt.Errorf("create %s: %w", vd, err)
	}
	n, err := st.nextNumber(name)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{Number: n, Created: st.now().UTC(), Reason: reason, dir: filepath.Join(vd, strconv.Itoa(n))}
	if s, err := Load(cur, SourceUser); err == nil {
		snap.Version = s.Version
	}
	if err := os.MkdirAll(snap.dir, 0o755); err != nil {
		return Snapshot{}, fmt.Errorf("create snapshot: %w", err)
	}
	meta, _ := json.MarshalIndent(snap, "", "  ")
	if err := fsutil.WriteFileAtomic(filepath.Join(snap.dir, "meta.json"), meta, 0o600); err != nil {
		return Snapshot{}, err
	}
	if err := os.Rename(cur, filepath.Join(snap.dir, "skill")); err != nil {
		os.RemoveAll(snap.dir)
		return Snapshot{}, fmt.Errorf("snapshot %s: %w", name, err)
	}
	st.pruneLocked(name)
	return snap, nil
}

// nextNumber keeps snapshot numbers increasing even after restores and prunes.
func (st *Store) nextNumber(name string) (int, error) {
	seqFile := filepath.Join(st.verDir(name), "seq")
	n := 0
	if data, err := os.ReadFile(seqFile); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	}
	if vs, _ := st.Versions(name); len(vs) > 0 && vs[len(vs)-1].Number > n {
		n = vs[len(vs)-1].Number
	}
	n++
	if err := fsutil.WriteFileAtomic(seqFile, []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
		return 0, err
	}
	return n, nil
}

func (st *Store) pruneLocked(name string) {
	vs, err := st.Versions(name)
	if err != nil {
		return
	}
	for len(vs) > st.max() {
		os.RemoveAll(vs[0].dir)
		vs = vs[1:]
	}
}

// ImportResult says what one imported skill became.
type ImportResult struct {
	Name     string
	Dir      string
	Replaced *Snapshot // set when --force replaced an existing skill
	Skipped  []string  // symlinks and special files left out
	Withheld []string  // files and folders the read filter refused, left out
}

// ReadFilter reports whether the agent may copy path on the model's behalf
// (the sandbox's read policy); reason says why not.
type ReadFilter func(path string) (ok bool, reason string)

// ConflictError is returned when a skill of that name exists and force is off.
type ConflictError struct {
	Name            string
	Existing, Newer string // versions
}

func (e *ConflictError) Error() string {
	v := ""
	if e.Existing != "" || e.Newer != "" {
		v = fmt.Sprintf(" (installed version %s, importing %s)", orNone(e.Existing), orNone(e.Newer))
	}
	return fmt.Sprintf("skill %q already exists%s; nothing was changed. Use --force to replace it: the installed version is snapshotted first and `skill:rollback %s` restores it", e.Name, v, e.Name)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// IsGitURL reports whether src names a git repository rather than a folder.
func IsGitURL(src string) bool {
	for _, p := range []string{"https://", "http://", "ssh://", "git://", "file://", "git@"} {
		if strings.HasPrefix(src, p) {
			return true
		}
	}
	return false
}

// Import copies the skill folder(s) found at src (a folder or a git URL) into
// the store. A folder with a SKILL.md is one skill; otherwise skill folders up
// to three levels down are imported. sub narrows the search to a sub-folder.
// allow (nil: everything) filters what a local folder import may read: a
// refused source is an error, refused files inside it are left out
// (ImportResult.Withheld). A clone holds only what the repository holds, so
// only a file:// URL's own path is checked.
func (st *Store) Import(ctx context.Context, src, sub string, force bool, allow ReadFilter) ([]ImportResult, error) {
	root := src
	if local, ok := strings.CutPrefix(src, "file://"); ok && allow != nil {
		if ok, reason := allow(filepath.Clean(local)); !ok {
			return nil, fmt.Errorf("cannot import %s: %s", src, reason)
		}
	}
	if IsGitURL(src) {
		allow = nil
		tmp, err := os.MkdirTemp("", "synapse-skill-import-")
		if err != nil {
			return nil, fmt.Errorf("create a temporary folder for the clone: %w", err)
		}
		defer os.RemoveAll(tmp)
		if err := st.git(ctx, "clone", "--depth", "1", "--quiet", "--", src, filepath.Join(tmp, "repo")); err != nil {
			return nil, fmt.Errorf("git clone %s failed: %w", src, err)
		}
		root = filepath.Join(tmp, "repo")
	} else if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder or a git URL (https://…, git@…, file://…)", src)
	}
	if sub != "" {
		clean := filepath.Clean(sub)
		if filepath.IsAbs(clean) || strings.HasPrefix(clean, "..") {
			return nil, fmt.Errorf("--path %s must be a relative path inside the source", sub)
		}
		root = filepath.Join(root, clean)
	}
	if allow != nil {
		if ok, reason := allow(root); !ok {
			return nil, fmt.Errorf("cannot import %s: %s", root, reason)
		}
	}
	dirs := findSkillDirs(root, 3)
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no %s found in %s (searched three levels down)", SkillFile, src)
	}
	var results []ImportResult
	var errs []error
	for _, d := range dirs {
		r, err := st.importOne(d, force, allow)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		results = append(results, r)
	}
	return results, errors.Join(errs...)
}

func (st *Store) git(ctx context.Context, args ...string) error {
	if st.Git != nil {
		return st.Git(ctx, args...)
	}
	// Hooks are not cloned and no repository code runs; prompts are disabled so
	// a private URL fails instead of hanging the turn.
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func findSkillDirs(root string, depth int) []string {
	if _, err := os.Stat(filepath.Join(root, SkillFile)); err == nil {
		return []string{root}
	}
	if depth == 0 {
		return nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "node_modules" {
			out = append(out, findSkillDirs(filepath.Join(root, e.Name()), depth-1)...)
		}
	}
	return out
}

func (st *Store) importOne(srcDir string, force bool, allow ReadFilter) (ImportResult, error) {
	if allow != nil {
		for _, p := range []string{srcDir, filepath.Join(srcDir, SkillFile)} {
			if ok, reason := allow(p); !ok {
				return ImportResult{}, fmt.Errorf("cannot import %s: %s", srcDir, reason)
			}
		}
	}
	in, err := Load(srcDir, SourceUser)
	if err != nil {
		return ImportResult{}, fmt.Errorf("cannot import %s: %w", srcDir, err)
	}
	if strings.TrimSpace(in.Description) == "" {
		return ImportResult{}, fmt.Errorf("cannot import %s: %s has no description: add `description:` to its frontmatter", srcDir, SkillFile)
	}
	unlock, err := st.lock()
	if err != nil {
		return ImportResult{}, err
	}
	defer unlock()
	dst := st.skillDir(in.Name)
	exists := isDir(dst)
	if exists && !force {
		old, _ := Load(dst, SourceUser)
		ce := &ConflictError{Name: in.Name, Newer: in.Version}
		if old != nil {
			ce.Existing = old.Version
		}
		return ImportResult{}, ce
	}
	tmp, err := os.MkdirTemp(st.Dir, ".import-")
	if err != nil {
		return ImportResult{}, fmt.Errorf("create a temporary folder in %s: %w", st.Dir, err)
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, in.Name)
	skipped, withheld, err := copyTreeFiltered(srcDir, staged, allow)
	if err != nil {
		return ImportResult{}, fmt.Errorf("copy %s: %w", srcDir, err)
	}
	res := ImportResult{Name: in.Name, Dir: dst, Skipped: skipped, Withheld: withheld}
	if exists {
		snap, err := st.snapshotLocked(in.Name, "replaced by skill:import --force")
		if err != nil {
			return ImportResult{}, err
		}
		res.Replaced = &snap
	}
	if err := os.Rename(staged, dst); err != nil {
		return ImportResult{}, fmt.Errorf("install %s: %w", in.Name, err)
	}
	return res, nil
}

// Rollback restores snapshot number (0: the newest) of name, snapshotting the
// current folder first when there is one. It returns the restored snapshot.
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
		return Snapshot{}, nil, fmt.Errorf("skill %q has no previous versions to roll back to", name)
	}
	target := vs[len(vs)-1]
	if number > 0 {
		found := false
		for _, v := range vs {
			if v.Number == number {
				target, found = v, true
			}
		}
		if !found {
			return Snapshot{}, nil, fmt.Errorf("skill %q has no snapshot %d; available: %s", name, number, snapNumbers(vs))
		}
	}
	var saved *Snapshot
	if isDir(st.skillDir(name)) {
		s, err := st.snapshotLocked(name, fmt.Sprintf("before rollback to snapshot %d", target.Number))
		if err != nil {
			return Snapshot{}, nil, err
		}
		saved = &s
	}
	if err := os.Rename(filepath.Join(target.dir, "skill"), st.skillDir(name)); err != nil {
		return Snapshot{}, saved, fmt.Errorf("restore snapshot %d of %s: %w", target.Number, name, err)
	}
	os.RemoveAll(target.dir)
	return target, saved, nil
}

// Delete removes name from the store, keeping it as a snapshot.
func (st *Store) Delete(name string) (Snapshot, error) {
	if err := checkName(name); err != nil {
		return Snapshot{}, err
	}
	unlock, err := st.lock()
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	if !isDir(st.skillDir(name)) {
		return Snapshot{}, fmt.Errorf("skill %q is not installed in %s", name, st.Dir)
	}
	return st.snapshotLocked(name, "deleted")
}

func snapNumbers(vs []Snapshot) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, strconv.Itoa(v.Number))
	}
	return strings.Join(parts, ", ")
}

// copyTree copies regular files and folders; symlinks and special files are
// skipped (a skill must not point outside itself) and returned.
func copyTree(src, dst string) ([]string, error) {
	skipped, _, err := copyTreeFiltered(src, dst, nil)
	return skipped, err
}

// copyTreeFiltered is copyTree that also leaves out the files and folders
// allow refuses (withheld).
func copyTreeFiltered(src, dst string, allow ReadFilter) (skipped, withheld []string, err error) {
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() && (d.Name() == ".git") && p != src {
			return filepath.SkipDir
		}
		if allow != nil && p != src {
			if ok, _ := allow(p); !ok {
				withheld = append(withheld, rel)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return copyFile(p, target, info.Mode().Perm())
		default:
			skipped = append(skipped, rel)
			return nil
		}
	})
	return skipped, withheld, err
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm|0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
