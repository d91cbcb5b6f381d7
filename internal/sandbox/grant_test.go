package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrantOfANewFileMakesExactlyThatFileWritable covers the permission
// prompt's retry for a file that does not exist yet: the grant creates it
// empty, the rebuilt sandbox binds it, and the directory around it stays
// read-only.
func TestGrantOfANewFileMakesExactlyThatFileWritable(t *testing.T) {
	for _, permanent := range []bool{false, true} {
		name := "runtime"
		if permanent {
			name = "permanent"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			outside := t.TempDir() // neither the workspace nor the sandbox's temp dir
			target := filepath.Join(outside, "new.txt")

			res := f.run(t, "echo hi > '"+target+"'")
			if !res.Blocked || res.BlockedResource != target {
				t.Fatalf("first write: blocked=%v resource=%q, want blocked on %s (%+v)", res.Blocked, res.BlockedResource, target, res)
			}
			grant := f.m.AddRuntimeWhitelist
			if permanent {
				grant = f.m.AddPermanentWhitelist
			}
			if err := grant(res.BlockedResource); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(target); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
				t.Fatalf("after the grant %s should be an empty file: %v %v", target, st, err)
			}
			if res := f.run(t, "echo hi > '"+target+"' && cat '"+target+"'"); res.ExitCode != 0 || res.Stdout != "hi" {
				t.Fatalf("retry after the grant: %+v", res)
			}
			sibling := filepath.Join(outside, "sibling.txt")
			if res := f.run(t, "echo x > '"+sibling+"'"); !res.Blocked || res.BlockedResource != sibling {
				t.Fatalf("a sibling of the granted file was not blocked: %+v", res)
			}
			if _, err := os.Stat(sibling); err == nil {
				t.Fatal("the grant widened to the directory: the sibling was written")
			}
			if res := f.run(t, "mkdir '"+filepath.Join(outside, "sub")+"'"); res.ExitCode == 0 {
				t.Fatal("the grant widened to the directory: mkdir beside the file worked")
			}
		})
	}
}

// TestGrantCreatesNothingWhenItNeedNot checks the cases where a grant of a
// missing path must not create anything.
func TestGrantCreatesNothingWhenItNeedNot(t *testing.T) {
	f := newFixture(t, nil)
	outside := t.TempDir()
	tests := []struct {
		name string
		path string
	}{
		{"no parent directory", filepath.Join(outside, "missing", "new.txt")},
		{"already writable in the workspace", filepath.Join(f.ws, "new.txt")},
		{"already writable in the private temp dir", filepath.Join(f.m.PrivateTmp(), "new.txt")},
		{"blacklisted", filepath.Join(outside, ".env")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.m.AddRuntimeWhitelist(tt.path)
			if tt.name == "blacklisted" {
				if err == nil {
					t.Error("a blacklisted path was granted")
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(tt.path); err == nil {
				t.Errorf("%s was created", tt.path)
			}
		})
	}

	t.Run("sandbox off", func(t *testing.T) {
		off := newFixture(t, func(o *ManagerOptions) { o.Config, o.ConfigPath = Config{Enabled: false}, "" })
		p := filepath.Join(t.TempDir(), "new.txt")
		if err := off.m.AddRuntimeWhitelist(p); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created with the sandbox off", p)
		}
	})

	t.Run("dangling symlink", func(t *testing.T) {
		link := filepath.Join(outside, "link.txt")
		aim := filepath.Join(t.TempDir(), "aim.txt")
		if err := os.Symlink(aim, link); err != nil {
			t.Fatal(err)
		}
		if err := f.m.AddRuntimeWhitelist(link); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(aim); err == nil {
			t.Errorf("the grant created the symlink's target %s", aim)
		}
	})
}

// TestGrantOfTheRootIsRefused: making "/" writable binds the host's /proc
// and /dev over the private ones and leaves no sandbox at all (the shell
// then died with "malformed exit status"); it is refused with a message
// that says how to turn the sandbox off instead, and nothing is written.
func TestGrantOfTheRootIsRefused(t *testing.T) {
	for _, path := range []string{"/", "/.", "//", "/tmp/.."} {
		f := newFixture(t, nil)
		for name, grant := range map[string]func(string) error{"runtime": f.m.AddRuntimeWhitelist, "permanent": f.m.AddPermanentWhitelist} {
			err := grant(path)
			if err == nil || !strings.Contains(err.Error(), "enabled") {
				t.Errorf("%s grant of %q: err %v, want a refusal naming \"enabled\"", name, path, err)
			}
		}
		if _, err := os.Stat(f.cfgPath); err == nil {
			t.Errorf("grant of %q wrote sandbox.json", path)
		}
		if res := f.run(t, "echo ok"); res.ExitCode != 0 || res.Stdout != "ok" {
			t.Fatalf("after the refused grant of %q: %+v", path, res)
		}
	}
}

// TestWorkspaceAtTheRootStaysReadOnly: starting Synapse in / (a container's
// default directory) made the workspace, so the whole root, writable, and the
// shell died with "malformed exit status". The root is not a workspace: it
// stays read-only, the manager says so, and commands run.
func TestWorkspaceAtTheRootStaysReadOnly(t *testing.T) {
	f := newFixture(t, func(o *ManagerOptions) { o.Cwd = "/" })
	if res := f.run(t, "pwd"); res.ExitCode != 0 || res.Stdout != "/" {
		t.Fatalf("pwd in a workspace at /: %+v", res)
	}
	if res := f.run(t, "touch /etc/synapse-root-workspace"); res.ExitCode == 0 {
		_ = os.Remove("/etc/synapse-root-workspace")
		t.Fatal("a workspace at / made /etc writable")
	}
	if blocked, _, _ := f.m.CheckPath("/etc/synapse-root-workspace", true); !blocked {
		t.Error("the in-process check lets write reach /etc from a workspace at /")
	}
	if w := strings.Join(f.m.Warnings(), "\n"); !strings.Contains(w, "read-only") {
		t.Errorf("warnings %q do not say the workspace / is read-only", w)
	}
}
