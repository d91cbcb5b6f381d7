package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/testutil"
)

// TestRedTeamProjectFileNotRegular: the agent's commands can write the
// project's MCP files. A FIFO named .mcp.json hung every later start of
// Synapse in the project (the read never returned, and SIGTERM did not end
// it); a .mcp.json linked to a file elsewhere (~/.ssh/config) had the host
// read that file. Both are now refused with a problem line and the other
// files still load.
func TestRedTeamProjectFileNotRegular(t *testing.T) {
	user := filepath.Join(t.TempDir(), "mcp_servers.json")
	testutil.WriteFile(t, user, `{"mcpServers": {"mine": {"command": "m"}}}`)
	secret := filepath.Join(t.TempDir(), "config")
	testutil.WriteFile(t, secret, `{"mcpServers": {"SECRET": {"command": "s"}}}`)
	cwd := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(cwd, ".mcp.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(cwd, "mcp_servers.json")); err != nil {
		t.Fatal(err)
	}
	type loaded struct {
		servers  map[string]ServerConfig
		problems []string
		pending  []PendingFile
	}
	done := make(chan loaded, 1)
	go func() {
		files := ConfigFiles(user, cwd)
		s, p, pend := Load(files[0], files[1:], nil, ProjectOptions{Approved: func(string, []byte) bool { return true }})
		done <- loaded{s, p, pend}
	}()
	var got loaded
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		// Unblock the reader so the test binary can end.
		if f, err := os.OpenFile(filepath.Join(cwd, ".mcp.json"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("loading the MCP files hung on a FIFO named .mcp.json")
	}
	if _, ok := got.servers["mine"]; !ok {
		t.Errorf("the user's server did not load: %v", got.servers)
	}
	if _, ok := got.servers["SECRET"]; ok || len(got.pending) != 0 {
		t.Errorf("the linked file was read: servers %v, pending %v", got.servers, got.pending)
	}
	all := strings.Join(got.problems, "\n")
	if !strings.Contains(all, "not a regular file") || !strings.Contains(all, "symbolic link") {
		t.Errorf("the refused files are not reported: %q", got.problems)
	}
}
