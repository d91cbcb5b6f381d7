package mcp

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkWarmCallStdio is one mcp:test:add call through the handler on an
// open stdio connection: parse, map arguments, round trip, format.
func BenchmarkWarmCallStdio(b *testing.B) {
	mgr, h := newManager(b, Options{}, stdioServer(b, "test"))
	if rep := mgr.Start(context.Background()); rep.Servers != 1 {
		b.Fatal(rep.Lines())
	}
	benchCalls(b, h, "mcp:test:add 40 2")
}

// BenchmarkWarmCallHTTP is the same call over streamable HTTP on loopback.
func BenchmarkWarmCallHTTP(b *testing.B) {
	hs, _ := httpServer(b, false, nil)
	mgr, h := newManager(b, Options{}, ServerConfig{Name: "test", URL: hs.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer tok"}})
	if rep := mgr.Start(context.Background()); rep.Servers != 1 {
		b.Fatal(rep.Lines())
	}
	benchCalls(b, h, "mcp:test:add 40 2")
}

func benchCalls(b *testing.B, h *Handler, line string) {
	b.Helper()
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if r := h.Run(ctx, line); r.ExitCode != 0 || r.Stdout != "42\n" {
			b.Fatalf("%d %q %q", r.ExitCode, r.Stdout, r.Stderr)
		}
	}
}

// BenchmarkStartFiveStdioServers measures start-up with five configured stdio
// servers: spawn, initialize and list tools, concurrently, then shut down.
func BenchmarkStartFiveStdioServers(b *testing.B) {
	cfgs := map[string]ServerConfig{}
	for i := range 5 {
		c := stdioServer(b, fmt.Sprintf("s%d", i))
		cfgs[c.Name] = c
	}
	for b.Loop() {
		mgr := NewManager(cfgs, Options{})
		rep := mgr.Start(context.Background())
		if rep.Servers != 5 || rep.Tools != 50 {
			b.Fatal(rep.Lines())
		}
		b.StopTimer()
		mgr.Close()
		b.StartTimer()
	}
}
