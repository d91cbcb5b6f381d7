package skills

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/proc"
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
	// Note is what the import check said about it; Handled: it was not
	// installed (merged into another skill, say).
	Note    string
	Handled bool
}

// ReadFilter reports whether the agent may copy path on the model's behalf
// (the sandbox's read policy); reason says why not.
type ReadFilter func(path string) (ok bool, reason string)

// ConflictError is returned when a skill of that name exists and force is off.
type ConflictError struct {
	Name            string
	Existing, Newer string // versions
	Src             string // the source skill's folder, for the rename hint
}

func (e *ConflictError) Error() string {
	v := ""
	if e.Existing != "" || e.Newer != "" {
		v = fmt.Sprintf(" (installed version %s, importing %s)", orNone(e.Existing), orNone(e.Newer))
	}
	where := "its " + SkillFile
	if e.Src != "" {
		where = filepath.Join(e.Src, SkillFile)
	}
	return fmt.Sprintf("skill %q already exists%s; nothing was changed. Use --force to replace it: the installed version is snapshotted first and `skill:rollback %s` restores it. "+
		"To keep both, rename the skill you are importing instead (the name: in %s, or its folder's name when it has no name:) and import it again", e.Name, v, e.Name, where)
}

// NothingToImportError says the source holds no skill at all: not a
// failure (exit 0), there is just nothing to install.
type NothingToImportError struct {
	Src string // the source, and --path when given
}

func (e *NothingToImportError) Error() string {
	return fmt.Sprintf("nothing to import: %s has no %s (searched three levels down); nothing was changed. "+
		"Point skill:import at a folder or repository holding a skill folder with a %s", e.Src, SkillFile, SkillFile)
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

// ImportCheck looks at each skill about to be installed (in is its staged
// copy in dir, ours): handled means it was dealt with otherwise (merged,
// or refused with err) and is not installed; note is reported either way.
type ImportCheck func(in *Skill, dir string) (handled bool, note string, err error)

// Import copies the skill folder(s) found at src (a folder or a git URL) into
// the store. A folder with a SKILL.md is one skill; otherwise skill folders up
// to three levels down are imported. sub narrows the search to a sub-folder.
// allow (nil: everything) filters what a local folder import may read: a
// refused source is an error, refused files inside it are left out
// (ImportResult.Withheld). A clone holds only what the repository holds, so
// only a file:// URL's own path is checked.
func (st *Store) Import(ctx context.Context, src, sub string, o ImportOptions) ([]ImportResult, error) {
	force, allow, check := o.Force, o.Allow, o.Check
	root := src
	if local, ok := strings.CutPrefix(src, "file://"); ok && allow != nil {
		if ok, reason := allow(filepath.Clean(local)); !ok {
			return nil, fmt.Errorf("cannot import %s: %s", src, reason)
		}
	}
	if err := os.MkdirAll(st.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the skill store %s: %w", st.Dir, err)
	}
	// Clones and copies are made in the store, where commands cannot write.
	tmp, err := os.MkdirTemp(st.Dir, ".import-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary folder in %s: %w", st.Dir, err)
	}
	defer os.RemoveAll(tmp)
	if IsGitURL(src) {
		allow = nil
		if err := st.git(ctx, o.UserCredentials, "clone", "--depth", "1", "--quiet", "--", src, filepath.Join(tmp, "repo")); err != nil {
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
	stage := filepath.Join(tmp, "staged")
	if err := os.Mkdir(stage, 0o700); err != nil {
		return nil, fmt.Errorf("create a temporary folder in %s: %w", st.Dir, err)
	}
	// Everything is read once, through descriptors, into our own copy; from
	// then on only the copy is looked at (see stage.go).
	staged, err := stageSkills(root, stage, 3, allow)
	if len(staged) == 0 {
		if err != nil {
			return nil, err
		}
		where := src
		if sub != "" {
			where += " (--path " + sub + ")"
		}
		return nil, &NothingToImportError{Src: where}
	}
	if o.Approve != nil {
		if plan := st.plan(staged, force); len(plan) > 0 {
			if err := o.Approve(plan); err != nil {
				return nil, err
			}
		}
	}
	errs := []error{err}
	var results []ImportResult
	for _, one := range staged {
		note := ""
		if check != nil {
			if in, lerr := Load(one.Dir, SourceUser); lerr == nil {
				handled, n, cerr := check(in, one.Dir)
				if cerr != nil {
					errs = append(errs, cerr)
				}
				if handled || cerr != nil {
					if n != "" {
						results = append(results, ImportResult{Name: in.Name, Note: n, Handled: true})
					}
					continue
				}
				note = n
			}
		}
		r, err := st.importOne(one, force)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.Note = note
		results = append(results, r)
	}
	return results, errors.Join(errs...)
}

// PlannedSkill is one skill an import is about to install.
type PlannedSkill struct {
	Name     string
	Replaces bool // an installed skill of that name is replaced (--force; snapshotted)
}

// plan lists the staged skills the import would install: those it would
// refuse anyway (a reserved name, an installed name without --force) are
// left out.
func (st *Store) plan(staged []stagedSkill, force bool) []PlannedSkill {
	var out []PlannedSkill
	for _, one := range staged {
		in, err := Load(one.Dir, SourceUser)
		if err != nil || Reserved(in.Name) {
			continue
		}
		exists := isDir(st.skillDir(in.Name))
		if exists && !force {
			continue
		}
		out = append(out, PlannedSkill{Name: in.Name, Replaces: exists})
	}
	return out
}

// BundledPrefix starts the names of the skills bundled with Synapse (the
// meta-skills of internal/evolve) and of no other skill: an import never
// takes such a name, even with --force, so a public skill cannot replace a
// bundled one in the store every project reads.
const BundledPrefix = "synapse-"

// Reserved reports whether name is kept for the bundled skills.
func Reserved(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), BundledPrefix)
}

// ImportOptions tune Store.Import.
type ImportOptions struct {
	Force bool       // replace an installed skill of the same name (snapshotted)
	Allow ReadFilter // what a local folder import may read (nil: everything)
	// Check looks at each skill before it is installed (nil: none).
	Check ImportCheck
	// UserCredentials lets a clone use the user's SSH agent, keys and git
	// credential helpers: only for a command the user typed.
	UserCredentials bool
	// Approve is asked, once the source is read, about the skills the
	// import would install (not asked when there are none); an error
	// stops the import before the store changes. nil: nothing is asked.
	Approve func([]PlannedSkill) error
}

// noCredentialsSSH is the ssh a clone the user did not type runs: no agent,
// no key files, no user ssh config (which may name keys), never a prompt.
const noCredentialsSSH = "ssh -F /dev/null -o IdentityAgent=none -o IdentitiesOnly=yes -o IdentityFile=/dev/null " +
	"-o BatchMode=yes -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no"

// gitEnv is git's environment for a clone: prompts are off either way, so
// a private URL fails instead of hanging the turn; without userCreds, SSH
// gets no agent nor keys and HTTPS no credential helper.
func gitEnv(userCreds bool) []string {
	env := os.Environ()
	if !userCreds {
		env = slices.DeleteFunc(env, func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			switch name {
			case "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_PARAMETERS":
				return true
			}
			return false
		})
		env = append(env, "GIT_SSH_COMMAND="+noCredentialsSSH, "SSH_ASKPASS_REQUIRE=never")
	}
	return append(env, "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=true")
}

func (st *Store) git(ctx context.Context, userCreds bool, args ...string) error {
	if st.Git != nil {
		return st.Git(ctx, args...)
	}
	// Hooks are not cloned and no repository code runs.
	full := []string{"-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never"}
	if !userCreds {
		// An empty helper resets the list: the user's stored passwords and
		// tokens are not offered to a host the model chose.
		full = append(full, "-c", "credential.helper=", "-c", "core.sshCommand="+noCredentialsSSH)
	}
	full = append(full, args...)
	// proc.Run: a cancel stops git's helpers too (git-remote-https, ssh),
	// which run in its process group.
	r := proc.Run(ctx, proc.Cmd{Argv: append([]string{"git"}, full...), Env: gitEnv(userCreds)})
	out := strings.TrimSpace(strings.TrimSpace(r.Stderr) + "\n" + strings.TrimSpace(r.Stdout))
	switch {
	case r.StartErr != nil:
		return fmt.Errorf("%w (is git installed?)", r.StartErr)
	case r.Canceled:
		return fmt.Errorf("%w: %s", ctx.Err(), out)
	case r.ExitCode != 0:
		return fmt.Errorf("exit status %d: %s", r.ExitCode, out)
	}
	return nil
}

// importOne installs one staged copy (ours, in the store).
func (st *Store) importOne(one stagedSkill, force bool) (ImportResult, error) {
	srcDir := one.Src
	in, err := Load(one.Dir, SourceUser)
	if err != nil {
		return ImportResult{}, fmt.Errorf("cannot import %s: %w", srcDir, err)
	}
	if strings.TrimSpace(in.Description) == "" {
		return ImportResult{}, fmt.Errorf("cannot import %s: %s has no description: add `description:` to its frontmatter", srcDir, SkillFile)
	}
	if Reserved(in.Name) {
		return ImportResult{}, fmt.Errorf("cannot import %s: the name %q is reserved: names starting with %q belong to the skills bundled with Synapse, which no import replaces; "+
			"nothing was changed. To import it, rename the skill (the name: of its %s and its folder)", srcDir, in.Name, BundledPrefix, SkillFile)
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
		ce := &ConflictError{Name: in.Name, Newer: in.Version, Src: srcDir}
		if old != nil {
			ce.Existing = old.Version
		}
		return ImportResult{}, ce
	}
	res := ImportResult{Name: in.Name, Dir: dst, Skipped: one.Skipped, Withheld: one.Withheld}
	reason := registry.SkillImport
	if exists {
		reason = registry.SkillImport + " --force"
	}
	prev, _, err := st.installLocked(in.Name, one.Dir, reason)
	if err != nil {
		return ImportResult{}, err
	}
	res.Replaced = prev
	return res, nil
}

// copyTree copies regular files and folders; symlinks and special files are
// skipped (a skill must not point outside itself) and returned. It reads
// like an import does (stage.go): through descriptors, never following a
// link, so a folder someone else can write cannot redirect it.
func copyTree(src, dst string) ([]string, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		return nil, err
	}
	var out stagedSkill
	if err := (&stager{}).copyDir(f, src, dst, "", &out); err != nil {
		return out.Skipped, err
	}
	return out.Skipped, os.Chmod(dst, 0o755)
}
