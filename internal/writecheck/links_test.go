package writecheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestScratchFollowsLinks: with real files and links, a path counts as
// scratch by where its links lead, read through HostPath as the sandbox
// maps paths (here the whole namespace lies under a host directory), so a
// link an archive left in /tmp that leads into the project asks.
func TestScratchFollowsLinks(t *testing.T) {
	root := t.TempDir()
	host := func(p string) string { return filepath.Join(root, p) }
	for _, d := range []string{"/tmp/sub", "/work/p"} {
		if err := os.MkdirAll(host(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"/tmp/link":     "/work/p",         // into the project
		"/tmp/dangling": "/work/p/missing", // creates a project file
		"/tmp/in":       "sub",             // stays in /tmp
		"/tmp/abs":      "/tmp/sub",        // absolute, as commands see it
		"/tmp/loop1":    "loop2",
		"/tmp/loop2":    "loop1",
	} {
		if err := os.Symlink(target, host(link)); err != nil {
			t.Fatal(err)
		}
	}
	c := Checker{Scratch: []string{"/tmp"}, HostPath: host}
	for _, tt := range []struct {
		cmd, cwd string
		asks     bool
	}{
		{"touch /tmp/link/x", "/", true},
		{"touch x", "/tmp/link", true},
		{"echo x > /tmp/dangling", "/", true},
		{"touch /tmp/link/../x", "/", true}, // the project's parent, not /tmp
		{"touch ../x", "/tmp/link", true},
		{"touch /tmp/loop1/x", "/", true},
		{"touch /tmp/sub/x /tmp/sub/new/y /tmp/new", "/", false},
		{"mkdir -p /tmp/in/a /tmp/abs/b", "/", false},
		{"touch /tmp/link/../../tmp/x 2>/dev/null", "/", false}, // lands back in /tmp
	} {
		if got := c.Check(tt.cmd, tt.cwd); (len(got) > 0) != tt.asks {
			t.Errorf("Check(%q) in %s = %+v, want asking %v", tt.cmd, tt.cwd, got, tt.asks)
		}
	}

	// Without HostPath the paths are read on the host as they are.
	scratch, project := filepath.Join(root, "scratch"), host("/work/p")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(project, filepath.Join(scratch, "link")); err != nil {
		t.Fatal(err)
	}
	c = Checker{Scratch: []string{scratch}}
	if !c.InScratch(scratch+"/x") || c.InScratch(scratch+"/link/x") {
		t.Error("a link out of a host scratch path counts as scratch, or a plain file there does not")
	}
}
