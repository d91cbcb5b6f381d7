package sandbox

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentHomeIsReadOnlyAndItsKeysHidden: the directory holding
// sandbox.json ($SYNAPSE_HOME) is the agent's own configuration. A command
// that could change it could grant the agent more (sandbox.json "enabled":
// false, a whitelist entry, a skill, an MCP server), so it stays read-only
// even when a writable root contains it (the user runs Synapse in their home
// directory, or SYNAPSE_HOME lies under the temp directory). settings.json
// and mcp/mcp_servers.json hold credentials the shell's environment never
// gets, so they are not readable either.
func TestAgentHomeIsReadOnlyAndItsKeysHidden(t *testing.T) {
	for _, where := range []string{"workspace is the home directory", "agent home under the temp directory"} {
		t.Run(where, func(t *testing.T) {
			var agentHome string
			f := newFixture(t, func(o *ManagerOptions) {
				home := envValue(o.Env, "HOME")
				if strings.HasPrefix(where, "workspace") {
					o.Cwd = home
				} else {
					o.ConfigPath = filepath.Join(o.TempDir, "synapse-home", "sandbox.json")
				}
				agentHome = filepath.Dir(o.ConfigPath)
			})
			writeFile(t, filepath.Join(f.m.Cwd(), "sub", "keep"), "")
			sandboxJSON := filepath.Join(agentHome, "sandbox.json")
			settings := filepath.Join(agentHome, "settings.json")
			servers := filepath.Join(agentHome, "mcp", "mcp_servers.json")
			skill := filepath.Join(agentHome, "skills", "s", "SKILL.md")
			writeFile(t, sandboxJSON, `{"enabled": true}`)
			writeFile(t, settings, `{"env": {"ANTHROPIC_API_KEY": "`+secret+`"}}`)
			writeFile(t, servers, `{"mcpServers": {"x": {"env": {"TOKEN": "`+secret+`"}}}}`)
			writeFile(t, skill, "---\nname: s\ndescription: d\n---\nbody\n")
			before := snapshot(t, agentHome)

			q := func(p string) string { return "'" + p + "'" }
			attempts := []string{
				"echo '{\"enabled\": false}' > " + q(sandboxJSON),
				"echo '{}' > " + q(settings),
				"echo pwned >> " + q(skill),
				"mkdir -p " + q(filepath.Join(agentHome, "skills", "evil")),
				"rm -f " + q(sandboxJSON),
				"mv " + q(agentHome) + " " + q(agentHome+".old"),
				"rm -rf " + q(agentHome),
				"cat " + q(settings),
				"cat " + q(servers),
				"grep -r . " + q(agentHome),
			}
			for _, c := range attempts {
				res := f.run(t, c)
				if strings.Contains(res.Stdout+res.Stderr, secret) {
					t.Errorf("%s: a credential leaked:\n%s", c, res.Stdout+res.Stderr)
				}
			}
			if d := diffSnapshots(before, snapshot(t, agentHome)); len(d) > 0 {
				t.Errorf("the agent's configuration changed from inside the sandbox:\n%s", strings.Join(d, "\n"))
			}
			if exists(agentHome + ".old") {
				t.Errorf("the agent home was renamed")
			}
			// In-process file commands get the same answer.
			for _, p := range []string{sandboxJSON, skill, filepath.Join(agentHome, "new.json")} {
				if blocked, _, _ := f.m.CheckPath(p, true); !blocked {
					t.Errorf("CheckPath(%s, write) allowed", p)
				}
			}
			for _, p := range []string{settings, servers} {
				if blocked, _, _ := f.m.CheckPath(p, false); !blocked {
					t.Errorf("CheckPath(%s, read) allowed", p)
				}
			}
			// The rest stays as it was: skills readable, the workspace writable.
			if res := f.run(t, "cat "+q(skill)); res.ExitCode != 0 || !strings.Contains(res.Stdout, "name: s") {
				t.Errorf("a skill is no longer readable: %+v", res)
			}
			notes := "notes.txt"
			if underLandlock() {
				// Landlock cannot grant a folder that holds a hidden or
				// protected path (the agent home): its subfolders are writable.
				notes = "sub/notes.txt"
			}
			if res := f.run(t, "echo ok > "+notes+" && cat "+notes); res.Stdout != "ok" {
				t.Errorf("the workspace is no longer writable: %+v", res)
			}
		})
	}
}

// TestWorkspaceInsideAgentHomeStaysWritable: a user who works on a skill in
// place (Synapse started in $SYNAPSE_HOME/skills/dev) keeps that workspace;
// the rest of the agent home stays read-only.
func TestWorkspaceInsideAgentHomeStaysWritable(t *testing.T) {
	var agentHome string
	f := newFixture(t, func(o *ManagerOptions) {
		agentHome = filepath.Dir(o.ConfigPath)
		o.Cwd = filepath.Join(agentHome, "skills", "dev")
		writeFile(t, filepath.Join(o.Cwd, "SKILL.md"), "x")
	})
	if res := f.run(t, "echo y > SKILL.md && cat SKILL.md"); res.Stdout != "y" {
		t.Errorf("the workspace inside the agent home is not writable: %+v", res)
	}
	if blocked, reason, _ := f.m.CheckPath(filepath.Join(agentHome, "skills", "dev", "a.txt"), true); blocked {
		t.Errorf("CheckPath in the workspace blocked: %s", reason)
	}
	if res := f.run(t, "echo '{}' > '"+filepath.Join(agentHome, "sandbox.json")+"'"); res.ExitCode == 0 {
		t.Errorf("sandbox.json written from a workspace inside the agent home")
	}
	if blocked, _, _ := f.m.CheckPath(filepath.Join(agentHome, "sandbox.json"), true); !blocked {
		t.Errorf("CheckPath(sandbox.json, write) allowed")
	}
}

// TestSeatbeltProtectsAgentHome: on macOS the profile denies writes to the
// protected directory after allowing the roots around it (the last matching
// rule wins), and allows again a root inside it.
func TestSeatbeltProtectsAgentHome(t *testing.T) {
	p := Policy{
		Whitelist: []string{"/Users/u", "/Users/u/.synapse/skills/dev", "/private/tmp"},
		Protect:   []string{"/Users/u/.synapse"},
		Home:      "/Users/u",
	}
	prof := seatbeltProfile(p)
	allowHome := strings.Index(prof, `(allow file-write* (subpath "/Users/u"))`)
	deny := strings.Index(prof, `(deny file-write* (subpath "/Users/u/.synapse"))`)
	reallow := strings.LastIndex(prof, `(allow file-write* (subpath "/Users/u/.synapse/skills/dev"))`)
	if allowHome < 0 || deny < allowHome || reallow < deny {
		t.Errorf("want allow home, then deny the agent home, then allow the root inside it:\n%s", prof)
	}
}
