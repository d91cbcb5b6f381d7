package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/synapse-agent/synapse/internal/config"
)

// resolveEntries expands the whitelist and blacklist of a loaded
// configuration against env, and drops, with a warning naming the field
// and the entry, every entry that cannot be used: a variable that is not
// set, a whitelist entry that is not absolute once expanded, or one on the
// blacklist (a blacklisted path cannot be made writable: bubblewrap could
// not even start with it). The sandbox always starts with what is left.
func resolveEntries(cfg Config, env []string, home, file string) (Config, []string) {
	lookup := func(k string) (string, bool) {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	var warns []string
	skip := func(field, entry, why string) {
		warns = append(warns, fmt.Sprintf("%s: field %q: entry %q was skipped: %s (the file was left unchanged)", file, field, entry, why))
	}
	var black []string
	for _, e := range cfg.Policy.Blacklist {
		x, err := config.ExpandVars(e, lookup)
		if err != nil {
			skip("policy.filesystem.blacklist", e, err.Error()+"; it would protect nothing")
			continue
		}
		if x != "" {
			black = append(black, x)
		}
	}
	rules := compileRules(black, home)
	var white []string
	for _, e := range cfg.Policy.Whitelist {
		x, err := config.ExpandVars(e, lookup)
		if err != nil {
			skip("policy.filesystem.whitelist", e, err.Error())
			continue
		}
		if x == "" {
			continue
		}
		if (x == "~" || strings.HasPrefix(x, "~/")) && home == "" {
			skip("policy.filesystem.whitelist", e, "~ cannot be expanded: HOME is not set")
			continue
		}
		if !filepath.IsAbs(expandHome(x, home)) {
			skip("policy.filesystem.whitelist", e, "it is not an absolute path once expanded; write it as /full/path, ~/path or $VAR/path")
			continue
		}
		if filepath.Clean(expandHome(x, home)) == "/" {
			skip("policy.filesystem.whitelist", e, rootGrantAdvice)
			continue
		}
		if entry, ok := blacklisted(rules, x, home); ok {
			skip("policy.filesystem.whitelist", e, "it is on the sandbox blacklist ("+entry+"), which stays hidden from commands and cannot be made writable; remove it from the whitelist")
			continue
		}
		white = append(white, x)
	}
	cfg.Policy.Blacklist, cfg.Policy.Whitelist = black, white
	return cfg, warns
}

// blacklisted reports the blacklist entry covering p, as written or with
// its symlinks resolved.
func blacklisted(rules []rule, p, home string) (string, bool) {
	lit := filepath.Clean(expandHome(p, home))
	if entry, ok := matchRules(rules, lit); ok {
		return entry, true
	}
	return matchRules(rules, resolvePath(lit, "/", home))
}

// blacklistRefusal explains why a blacklisted path cannot be granted.
func blacklistRefusal(path, entry string) error {
	return fmt.Errorf("%s is on the sandbox blacklist (%s): blacklisted paths stay hidden from every command and cannot be allowed; "+
		"if you really mean it, remove the entry from policy.filesystem.blacklist in sandbox.json (the built-in entries cannot be removed)", path, entry)
}
