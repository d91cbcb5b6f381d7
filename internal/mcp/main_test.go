package mcp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/synapse-agent/synapse/internal/mcp/mcptest"
)

// The test binary doubles as the stdio test server: a server entry runs it
// with SYNAPSE_MCPTEST_SERVER=stdio.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SYNAPSE_MCPTEST_SERVER"); mode == "stdio" || mode == "stdio-resources" {
		if err := mcptest.ServeStdio(context.Background(), mode == "stdio-resources"); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if b := os.Getenv("SYNAPSE_MCPTEST_HOSTILE"); b != "" {
		if err := mcptest.ServeHostile(b, os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "mcptest:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hostileServer is a config entry that starts mcptest.ServeHostile with
// behaviour over stdio.
func hostileServer(t testing.TB, name, behaviour string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: exe, Env: map[string]string{"SYNAPSE_MCPTEST_HOSTILE": behaviour}, File: "test config"}
}

// stdioServer is a config entry that starts the test server over stdio.
func stdioServer(t testing.TB, name string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: exe, Env: map[string]string{"SYNAPSE_MCPTEST_SERVER": "stdio"}, File: "test config"}
}

type bytesReadCloser struct{ *strings.Reader }

func (bytesReadCloser) Close() error { return nil }

func readCloser(b []byte) bytesReadCloser { return bytesReadCloser{strings.NewReader(string(b))} }
