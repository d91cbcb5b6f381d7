package sandbox

import (
	"regexp"
	"strings"

	"github.com/synapse-agent/synapse/internal/command"
)

// Denial messages the kernel's refusals turn into, as tools print them.
const (
	msgDenied   = "Permission denied"
	msgReadOnly = "Read-only file system"
	// A hidden (blacklisted) directory is an empty one: its files "do not exist".
	msgMissing = "No such file or directory"
)

var (
	quotedInLine = regexp.MustCompile("['‘`\"]([^'’`\"]+)['’`\"]")
	// `cat: /x: Permission denied`, `bash: line 1: /x: Read-only file system`
	colonPath = regexp.MustCompile(`(?:^|: )([^:]*/[^:]*|[^: ]+): (?:` + msgDenied + `|` + msgReadOnly + `|` + msgMissing + `)`)
)

// detectViolation marks a failed result as blocked when its stderr shows the
// kernel refusing a path the policy protects: a read-only file system error
// outside the write whitelist, or a permission error on a blacklisted path.
func detectViolation(res command.Result, cwd string, p Policy, rules []rule) command.Result {
	if res.Blocked || res.ExitCode == 0 && res.Stderr == "" {
		return res
	}
	for _, line := range strings.Split(res.Stderr, "\n") {
		ro := strings.Contains(line, msgReadOnly)
		if !ro && !strings.Contains(line, msgDenied) {
			if strings.Contains(line, msgMissing) {
				if path := deniedPath(line); path != "" {
					if e, ok := matchRules(rules, absPath(expandHome(path, p.Home), cwd)); ok {
						res.Blocked, res.BlockedReason, res.BlockedResource = true, "path is on the sandbox blacklist ("+e+") and hidden inside the sandbox", e
						return res
					}
				}
			}
			continue
		}
		path := deniedPath(line)
		if path == "" {
			if ro {
				res.Blocked = true
				res.BlockedReason = "the sandbox allows writes only inside the whitelist"
				res.BlockedResource = line
				return res
			}
			continue
		}
		abs := absPath(expandHome(path, p.Home), cwd)
		if blocked, reason, resource := p.check(resolvePath(abs, "/", p.Home), ro, rules); blocked {
			res.Blocked, res.BlockedReason, res.BlockedResource = true, reason, resource
			return res
		}
		if e, ok := matchRules(rules, abs); ok {
			res.Blocked, res.BlockedReason, res.BlockedResource = true, "path is on the sandbox blacklist ("+e+")", e
			return res
		}
		if ro {
			res.Blocked, res.BlockedReason, res.BlockedResource = true, "path is outside the sandbox write whitelist", abs
			return res
		}
	}
	return res
}

// deniedPath extracts the path a denial line names.
func deniedPath(line string) string {
	if m := quotedInLine.FindStringSubmatch(line); m != nil && strings.Contains(m[1], "/") {
		return m[1]
	}
	if m := colonPath.FindStringSubmatch(line); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}
