package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/synapse-agent/synapse/internal/command"
)

// Denial messages the kernel's refusals turn into, as tools print them.
const (
	msgDenied   = "Permission denied"
	msgReadOnly = "Read-only file system"
	// A hidden (blacklisted) directory is an empty one: its files "do not exist".
	msgMissing = "No such file or directory"
	// Renaming over or removing a bind-mounted file (.git/config, a hidden
	// .env) fails with EBUSY rather than EROFS.
	msgBusy = "Device or resource busy"
)

// sedTemp matches the temporary file `sed -i` creates beside its target.
// It and quotedRe serve only a failed command: compiled on first use, not at
// every start.
var sedTemp = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sed[A-Za-z0-9]{6}$`) })

// detectViolation marks a failed result as blocked when its stderr shows the
// kernel refusing a path the policy protects: a read-only file system (or a
// busy mount point) where the policy forbids writing, or a permission error
// or missing file on a blacklisted path. Under Landlock a refused write is
// "Permission denied", not a read-only file system.
func detectViolation(res command.Result, cwd string, p Policy, rules []rule, landlock bool) command.Result {
	if res.Blocked || res.ExitCode == 0 && res.Stderr == "" {
		return res
	}
	for _, line := range strings.Split(res.Stderr, "\n") {
		msg := denial(line)
		if msg == "" {
			continue
		}
		raw := deniedPath(line, msg)
		if raw == "" && msg == msgReadOnly {
			res.Blocked = true
			res.BlockedReason, res.BlockedResource = p.unnamedWriteDenial(cwd)
			return res
		}
		for _, raw := range busyCandidates(raw, line, msg) {
			m := msg
			if landlock && msg == msgDenied && landlockWriteDenial(absPath(expandHome(raw, p.Home), cwd)) {
				m = msgReadOnly // a write the policy refused, judged as bwrap's
			}
			if r, ok := judgeDenial(res, raw, m, cwd, p, rules); ok {
				return r
			}
		}
	}
	return res
}

// landlockWriteDenial tells, for a "Permission denied" on abs under
// Landlock, whether it was a write: Landlock lets commands read whatever
// is not hidden, so a path the host can read (or one that does not exist,
// which a create names) was refused for writing; one the host cannot read
// either is ordinary unix permissions.
func landlockWriteDenial(abs string) bool {
	f, err := os.Open(abs)
	if err == nil {
		f.Close()
		return true
	}
	return errors.Is(err, fs.ErrNotExist)
}

// busyCandidates lists the paths a denial line may be about: the one
// deniedPath found, and for a busy mount point every quoted path on the
// line (`mv: cannot move '.git' to 'x'` names the mount point first; an
// inter-device move names the target before "unable to remove target").
func busyCandidates(raw, line, msg string) []string {
	var out []string
	if raw != "" {
		out = append(out, raw)
	}
	if msg != msgBusy {
		return out
	}
	for _, m := range quotedRe().FindAllStringSubmatch(line[:strings.Index(line, msg)], -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// judgeDenial decides whether the kernel's refusal of raw was the policy's
// doing; ok reports a decision (res then carries it).
func judgeDenial(res command.Result, raw, msg, cwd string, p Policy, rules []rule) (command.Result, bool) {
	abs := absPath(expandHome(raw, p.Home), cwd)
	write := msg == msgReadOnly || msg == msgBusy
	if write {
		abs = writeTarget(abs, msg)
	}
	if e, ok := matchRules(rules, abs); ok {
		reason := "path is on the sandbox blacklist (" + e + ")"
		if msg == msgMissing {
			reason += " and hidden inside the sandbox"
		}
		res.Blocked, res.BlockedReason, res.BlockedResource = true, reason, e
		return res, true
	}
	if !write {
		// Permission denied / missing outside the blacklist: ordinary
		// unix permissions or a real missing file, not the policy.
		return res, false
	}
	blocked, reason, resource := p.check(resolvePath(abs, "/", p.Home), true, rules)
	switch {
	case blocked:
		res.Blocked, res.BlockedReason, res.BlockedResource = true, reason, resource
		return res, true
	case msg == msgReadOnly:
		// Allowed by the whitelist, yet mounted read-only: a mount the
		// sandbox placed inside a writable root.
		res.Blocked, res.BlockedReason, res.BlockedResource = true, "path is mounted read-only inside the sandbox", abs
		return res, true
	}
	// EBUSY on a path the policy allows is a real busy resource.
	return res, false
}

// denial returns the refusal message line holds ("" when none).
func denial(line string) string {
	for _, m := range []string{msgReadOnly, msgBusy, msgDenied, msgMissing} {
		if strings.Contains(line, m) {
			return m
		}
	}
	return ""
}

// writeTarget turns the path a failed write names into the path it was
// after: `sed -i` names its temporary file (the directory is what matters),
// and a rename over .git/config from .git/ names only the directory.
func writeTarget(abs, msg string) string {
	if sedTemp().MatchString(filepath.Base(abs)) {
		abs = filepath.Dir(abs)
	}
	if msg == msgBusy && filepath.Base(abs) == ".git" {
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			abs = filepath.Join(abs, "config")
		}
	}
	return abs
}

// unnamedWriteDenial explains a refused write whose error names no path:
// the resource is the policy root that denied it, when it is known.
func (p Policy) unnamedWriteDenial(cwd string) (reason, resource string) {
	if p.ReadOnly {
		root := cwd
		for _, w := range p.Whitelist {
			if within(cwd, w) && len(w) < len(root) && w != p.TempDir {
				root = w
			}
		}
		return readOnlyReason, root
	}
	if blocked, reason, _ := p.check(resolvePath(cwd, "/", p.Home), true, nil); blocked {
		return reason, cwd
	}
	// The current directory is writable, so the write went elsewhere; no
	// resource is named (granting "/" would allow everything).
	return "a write outside the sandbox write whitelist was refused (the error did not name the path)", ""
}

// deniedPath extracts the path a denial line names, or "".
func deniedPath(line, msg string) string {
	i := strings.Index(line, msg)
	before := strings.TrimRight(line[:i], " :")
	after := line[i+len(msg):]
	// `touch: cannot touch '/x'`, `mv: cannot move 'a' to ‘b’`
	if q, ok := trailingQuoted(before); ok {
		return q
	}
	// `bash: line 1: /x`, `sed: couldn't open temporary file ./sedAbc123`
	if j := strings.LastIndex(before, ": "); j >= 0 {
		if p := pathIn(before[j+2:]); p != "" {
			return p
		}
	} else if strings.ContainsAny(before, " \t") {
		// A line's first segment is usually the program's name (`tool: …`);
		// only prose naming a path counts (Perl's `cannot open /x: …`).
		if p := pathIn(before); strings.Contains(p, "/") {
			return p
		}
	}
	// Python: `PermissionError: [Errno 13] Permission denied: '/x'`
	if q := firstQuoted(after); q != "" {
		return q
	}
	return ""
}

// quotePairs maps a closing quote to the openings it may pair with.
var quotePairs = map[rune]string{'\'': "'`‘", '’': "‘'", '"': `"`, '”': "“"}

// trailingQuoted returns the quoted text s ends with.
func trailingQuoted(s string) (string, bool) {
	rs := []rune(s)
	if len(rs) < 2 {
		return "", false
	}
	opens, ok := quotePairs[rs[len(rs)-1]]
	if !ok {
		return "", false
	}
	for j := len(rs) - 2; j >= 0; j-- {
		if strings.ContainsRune(opens, rs[j]) {
			if q := string(rs[j+1 : len(rs)-1]); q != "" {
				return q, true
			}
			return "", false
		}
	}
	return "", false
}

var quotedRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("['‘`\"“]([^'’`\"”]+)['’`\"”]") })

func firstQuoted(s string) string {
	if m := quotedRe().FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// pathIn picks the path out of an error message's last segment.
func pathIn(seg string) string {
	seg = strings.TrimSpace(seg)
	switch {
	case seg == "":
		return ""
	case strings.HasPrefix(seg, "/"), strings.HasPrefix(seg, "~"), strings.HasPrefix(seg, "./"), strings.HasPrefix(seg, "../"):
		return seg // paths may hold spaces: the whole segment
	case !strings.ContainsAny(seg, " \t"):
		return seg // a bare relative name
	}
	// Prose before the path: "couldn't open temporary file /a b/sedX".
	for _, pre := range []string{" /", " ~/"} {
		if j := strings.Index(seg, pre); j >= 0 {
			return seg[j+1:]
		}
	}
	fields := strings.Fields(seg)
	for j := len(fields) - 1; j >= 0; j-- {
		if strings.Contains(fields[j], "/") {
			return fields[j]
		}
	}
	return ""
}
