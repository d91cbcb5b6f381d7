package skills

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Store manages the user skill folder ($SYNAPSE_HOME/skills) and the
// snapshots of every skill's versions (see versions.go).
type Store struct {
	Dir         string
	MaxVersions int
	// Git runs `git` for imports from URLs; nil means the git on PATH.
	Git func(ctx context.Context, args ...string) error
	// Now is the clock for snapshot times (nil: time.Now).
	Now func() time.Time
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
	reason := "skill:import"
	if exists {
		reason = "skill:import --force"
	}
	prev, _, err := st.installLocked(in.Name, staged, reason)
	if err != nil {
		return ImportResult{}, err
	}
	res.Replaced = prev
	return res, nil
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
