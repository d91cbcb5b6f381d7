package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name     string
		file     string // "" means no file
		wantWarn []string
		check    func(t *testing.T, c Config)
	}{
		{name: "missing file gives defaults", check: func(t *testing.T, c Config) {
			if !c.Enabled || c.EnabledSet || c.Provider != "local" || !slices.Equal(c.Policy.Blacklist, DefaultBlacklist()) {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "full file", file: `{"enabled": false, "provider": "local", "policy": {"filesystem": {"whitelist": ["/data"], "blacklist": ["**/*.pem"]}, "network": {"allowNetwork": true}}}`,
			check: func(t *testing.T, c Config) {
				if c.Enabled || !c.EnabledSet || !c.Policy.AllowNetwork || !slices.Equal(c.Policy.Whitelist, []string{"/data"}) {
					t.Fatalf("%+v", c)
				}
				if !slices.Contains(c.Policy.Blacklist, "**/*.pem") || !slices.Contains(c.Policy.Blacklist, "~/.ssh") {
					t.Fatalf("user entries must add to the defaults: %v", c.Policy.Blacklist)
				}
			}},
		{name: "user blacklist cannot remove defaults", file: `{"policy": {"filesystem": {"blacklist": []}}}`,
			check: func(t *testing.T, c Config) {
				if !slices.Equal(c.Policy.Blacklist, DefaultBlacklist()) {
					t.Fatalf("%v", c.Policy.Blacklist)
				}
			}},
		{name: "invalid JSON", file: `{"enabled": tru`, wantWarn: []string{"sandbox.json", "invalid JSON", "left unchanged"},
			check: func(t *testing.T, c Config) {
				if !c.Enabled || c.EnabledSet {
					t.Fatalf("defaults not used: %+v", c)
				}
			}},
		{name: "wrong type names the field", file: `{"enabled": "yes", "policy": {"filesystem": {"whitelist": "/data", "blacklist": ["x"]}, "network": {"allowNetwork": 1}}}`,
			wantWarn: []string{`"enabled"`, `"policy.filesystem.whitelist"`, `"policy.network.allowNetwork"`, "sandbox.json"},
			check: func(t *testing.T, c Config) {
				if c.EnabledSet || c.Policy.Whitelist != nil || c.Policy.AllowNetwork || !slices.Contains(c.Policy.Blacklist, "x") {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "policy not an object", file: `{"policy": []}`, wantWarn: []string{`"policy"`}},
		{name: "the root as a whitelist entry is skipped", file: `{"policy": {"filesystem": {"whitelist": ["/", "/data"]}}}`,
			wantWarn: []string{`"policy.filesystem.whitelist"`, `"/"`, `"enabled": false`},
			check: func(t *testing.T, c Config) {
				if !slices.Equal(c.Policy.Whitelist, []string{"/data"}) {
					t.Fatalf("whitelist %q", c.Policy.Whitelist)
				}
			}},
		// A relative entry has no base in a file shared by every project: "." once
		// resolved against "/" and made the whole file system writable.
		{name: "relative whitelist entries are skipped with a warning", file: `{"policy": {"filesystem": {"whitelist": [".", "build", "../x", "/data", "~/work"]}}}`,
			wantWarn: []string{`"policy.filesystem.whitelist"`, `"."`, `"build"`, `"../x"`, "absolute"},
			check: func(t *testing.T, c Config) {
				if !slices.Equal(c.Policy.Whitelist, []string{"/data", "~/work"}) {
					t.Fatalf("whitelist %q", c.Policy.Whitelist)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sandbox.json")
			if tt.file != "" {
				writeFile(t, path, tt.file)
			}
			c, warns, err := LoadConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(warns, "\n")
			for _, w := range tt.wantWarn {
				if !strings.Contains(joined, w) {
					t.Errorf("warnings %q lack %q", joined, w)
				}
			}
			if len(tt.wantWarn) == 0 && len(warns) > 0 {
				t.Errorf("unexpected warnings: %v", warns)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
			if tt.file != "" {
				if b, _ := os.ReadFile(path); string(b) != tt.file {
					t.Fatalf("the file was rewritten: %s", b)
				}
			}
		})
	}
}

func TestAddWhitelistRefusesInvalidFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.json")
	const bad = `{"enabled": tru`
	writeFile(t, path, bad)
	if err := addWhitelistToFile(path, "/extra"); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatalf("invalid file was overwritten: %s", b)
	}
	writeFile(t, path, `{"policy": {"filesystem": {"whitelist": "oops"}}}`)
	if err := addWhitelistToFile(path, "/extra"); err == nil || !strings.Contains(err.Error(), "policy.filesystem.whitelist") {
		t.Fatalf("err = %v", err)
	}
}

func TestAddWhitelistCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "sandbox.json")
	if err := addWhitelistToFile(path, "/extra"); err != nil {
		t.Fatal(err)
	}
	c, warns, err := LoadConfig(path)
	if err != nil || len(warns) > 0 || !slices.Equal(c.Policy.Whitelist, []string{"/extra"}) {
		t.Fatalf("c=%+v warns=%v err=%v", c, warns, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}
