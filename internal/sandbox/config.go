package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/synapse-agent/synapse/internal/fsutil"
)

// ConfigPolicy is the policy part of sandbox.json.
type ConfigPolicy struct {
	Whitelist    []string // policy.filesystem.whitelist
	Blacklist    []string // policy.filesystem.blacklist, default entries included
	AllowNetwork bool     // policy.network.allowNetwork
}

// Config is sandbox.json, resolved:
//
//	{"enabled": true, "provider": "local",
//	 "policy": {"filesystem": {"whitelist": [], "blacklist": []},
//	            "network": {"allowNetwork": false}}}
type Config struct {
	Enabled bool
	// EnabledSet is true when the file says "enabled"; otherwise the sandbox
	// is on where the platform can run it (see the package comment).
	EnabledSet bool
	Provider   string
	Policy     ConfigPolicy
}

// DefaultConfig is the configuration without a sandbox.json.
func DefaultConfig() Config {
	return Config{Enabled: true, Provider: "local", Policy: ConfigPolicy{Blacklist: DefaultBlacklist()}}
}

// LoadConfig reads sandbox.json. A missing file gives the defaults. Invalid
// JSON or a field of the wrong type gives a warning naming the file and the
// field, and the default for what could not be read; the file is never
// rewritten here. The error is for a file that exists but cannot be read.
func LoadConfig(path string) (Config, []string, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil, nil
	}
	if err != nil {
		return cfg, nil, fmt.Errorf("read %s: %w (fix its permissions or remove it)", path, err)
	}
	var warns []string
	warn := func(field, want string, err error) {
		warns = append(warns, fmt.Sprintf("%s: field %q: %s; using the default (the file was left unchanged)", path, field, describeJSONErr(want, err)))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return cfg, nil, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		warns = append(warns, fmt.Sprintf("%s: invalid JSON: %v; using the default sandbox settings (the file was left unchanged)", path, err))
		return cfg, warns, nil
	}
	if raw, ok := top["enabled"]; ok {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			warn("enabled", "true or false", err)
		} else {
			cfg.Enabled, cfg.EnabledSet = b, true
		}
	}
	if raw, ok := top["provider"]; ok {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" {
			warn("provider", "a provider name such as \"local\"", err)
		} else {
			cfg.Provider = s
		}
	}
	pol, ok := object(top, "policy", "policy", warn)
	if !ok {
		return cfg, warns, nil
	}
	if fsys, ok := object(pol, "filesystem", "policy.filesystem", warn); ok {
		if raw, ok := fsys["whitelist"]; ok {
			var l []string
			if err := json.Unmarshal(raw, &l); err != nil {
				warn("policy.filesystem.whitelist", "an array of paths", err)
			} else {
				cfg.Policy.Whitelist = nil
				for _, e := range l {
					// The file serves every project, so a relative entry has no
					// base; resolved against "/" it would open far more ("."
					// is the whole file system) than the user meant.
					// $VAR entries are expanded (and checked again) by the manager.
					if t := strings.TrimSpace(e); t != "" && !filepath.IsAbs(t) && t != "~" && !strings.HasPrefix(t, "~/") && !strings.HasPrefix(t, "$") {
						warns = append(warns, fmt.Sprintf("%s: field \"policy.filesystem.whitelist\": entry %q is not an absolute path; it was skipped (write it as /full/path or ~/path; the file was left unchanged)", path, e))
						continue
					}
					if filepath.Clean(strings.TrimSpace(e)) == "/" {
						warns = append(warns, fmt.Sprintf("%s: field \"policy.filesystem.whitelist\": entry \"/\" was skipped: %s (the file was left unchanged)", path, rootGrantAdvice))
						continue
					}
					cfg.Policy.Whitelist = append(cfg.Policy.Whitelist, e)
				}
			}
		}
		if raw, ok := fsys["blacklist"]; ok {
			var l []string
			if err := json.Unmarshal(raw, &l); err != nil {
				warn("policy.filesystem.blacklist", "an array of paths or globs", err)
			} else {
				for _, e := range l {
					if e != "" && !slices.Contains(cfg.Policy.Blacklist, e) {
						cfg.Policy.Blacklist = append(cfg.Policy.Blacklist, e)
					}
				}
			}
		}
	}
	if netw, ok := object(pol, "network", "policy.network", warn); ok {
		if raw, ok := netw["allowNetwork"]; ok {
			var b bool
			if err := json.Unmarshal(raw, &b); err != nil {
				warn("policy.network.allowNetwork", "true or false", err)
			} else {
				cfg.Policy.AllowNetwork = b
			}
		}
	}
	return cfg, warns, nil
}

func object(m map[string]json.RawMessage, key, field string, warn func(string, string, error)) (map[string]json.RawMessage, bool) {
	raw, ok := m[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		warn(field, "an object", err)
		return nil, false
	}
	return out, true
}

func describeJSONErr(want string, err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("expected %s, found a JSON %s", want, te.Value)
	}
	if err != nil {
		return fmt.Sprintf("expected %s (%v)", want, err)
	}
	return "expected " + want
}

// addWhitelistToFile adds path to policy.filesystem.whitelist in the file at
// configPath, keeping every other key, and writes it atomically. A file that
// is not valid JSON is refused rather than replaced.
func addWhitelistToFile(configPath, path string) error {
	top := map[string]any{}
	mode := fs.FileMode(0o644)
	data, err := os.ReadFile(configPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read %s: %w", configPath, err)
	default:
		if st, err := os.Stat(configPath); err == nil {
			mode = st.Mode().Perm()
		}
		if len(bytes.TrimSpace(data)) > 0 {
			d := json.NewDecoder(bytes.NewReader(data))
			d.UseNumber()
			if err := d.Decode(&top); err != nil {
				return fmt.Errorf("%s is not valid JSON (%v): fix it by hand, then allow %s again; the file was not changed", configPath, err, path)
			}
		}
	}
	pol, err := childObject(top, "policy", configPath)
	if err != nil {
		return err
	}
	fsys, err := childObject(pol, "filesystem", configPath)
	if err != nil {
		return err
	}
	var list []any
	switch l := fsys["whitelist"].(type) {
	case nil:
	case []any:
		list = l
	default:
		return fmt.Errorf("%s: field \"policy.filesystem.whitelist\" is not an array: fix it by hand; the file was not changed", configPath)
	}
	for _, e := range list {
		if s, ok := e.(string); ok && s == path {
			return nil
		}
	}
	fsys["whitelist"] = append(list, path)
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", configPath, err)
	}
	if err := os.MkdirAll(filepath.Dir(configPath), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(configPath), err)
	}
	return fsutil.WriteFileAtomic(configPath, append(out, '\n'), mode)
}

func childObject(m map[string]any, key, file string) (map[string]any, error) {
	switch v := m[key].(type) {
	case nil:
		c := map[string]any{}
		m[key] = c
		return c, nil
	case map[string]any:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: field %q is not an object: fix it by hand; the file was not changed", file, key)
	}
}
