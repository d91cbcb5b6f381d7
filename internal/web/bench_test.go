package web

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// benchEngine installs script as the `codex` engine for a benchmark.
func benchEngine(b *testing.B, script string) *testEnv {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		b.Fatal(err)
	}
	return newTestEnv(b, func(o *Options) {
		o.Env[0] = "PATH=" + dir + ":/usr/bin:/bin"
	})
}

// readFrame reads one frame; output bytes are counted and acknowledged in
// 64 KiB batches like the page does.
type benchReader struct {
	conn    *websocket.Conn
	pending int
	got     int
}

func (r *benchReader) read(ctx context.Context) (websocket.MessageType, []byte, error) {
	typ, data, err := r.conn.Read(ctx)
	if err != nil || typ != websocket.MessageBinary {
		return typ, data, err
	}
	r.got += len(data)
	r.pending += len(data)
	if r.pending >= 64<<10 {
		if err := r.conn.Write(ctx, websocket.MessageText, []byte(`{"type":"ack","bytes":`+strconv.Itoa(r.pending)+`}`)); err != nil {
			return typ, data, err
		}
		r.pending = 0
	}
	return typ, data, nil
}

// BenchmarkTerminalThroughput measures PTY → WebSocket output: the program
// cats a 1 MiB file b.N times in raw mode; the client receives every byte over
// loopback. Run: go test ./internal/web -run '^$' -bench Throughput -benchtime 100x
func BenchmarkTerminalThroughput(b *testing.B) {
	const chunk = 1 << 20
	file := filepath.Join(b.TempDir(), "chunk")
	data := make([]byte, chunk)
	for i := range data {
		data[i] = byte('a' + i%26)
		if i%100 == 99 {
			data[i] = '\n'
		}
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
	e := benchEngine(b, `stty raw -echo
printf READY
read go
i=0
while [ "$i" -lt `+strconv.Itoa(b.N)+` ]; do cat '`+file+`' || exit 1; i=$((i+1)); done
`) // values in the script: engines get an environment allow-list
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("READY") // raw mode is on; nothing else comes before the flood
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := &benchReader{conn: c.conn}
	base := 0
	b.SetBytes(chunk)
	b.ResetTimer()
	if err := c.conn.Write(ctx, websocket.MessageBinary, []byte("go\n")); err != nil {
		b.Fatal(err)
	}
	want := b.N * chunk
	for r.got-base < want {
		typ, data, err := r.read(ctx)
		if err != nil {
			b.Fatalf("after %d of %d bytes: %v", r.got-base, want, err)
		}
		if typ == websocket.MessageText {
			b.Fatalf("unexpected frame %s after %d of %d bytes", data, r.got-base, want)
		}
	}
	b.StopTimer()
	e.stop(st.ID)
}

// BenchmarkKeystrokeEcho measures one keystroke's round trip over loopback:
// WebSocket → server → PTY → program (cat in raw mode) → PTY → WebSocket.
// Run: go test ./internal/web -run '^$' -bench KeystrokeEcho -benchtime 2000x
func BenchmarkKeystrokeEcho(b *testing.B) {
	e := benchEngine(b, "stty raw -echo\nprintf READY\nexec cat\n")
	st := e.start("codex-tui")
	c := e.dial(st.ID)
	c.waitOutput("READY")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := &benchReader{conn: c.conn}
	key := []byte{'k'}
	rtt := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := c.conn.Write(ctx, websocket.MessageBinary, key); err != nil {
			b.Fatal(err)
		}
		before := r.got
		for r.got == before {
			if _, _, err := r.read(ctx); err != nil {
				b.Fatal(err)
			}
		}
		rtt = append(rtt, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, rtt)
	e.stop(st.ID)
}

// reportPercentiles adds the median and 99th percentile of d (in µs) to the
// benchmark's output: on a shared machine the mean is swayed by a few
// descheduled round trips, the median much less.
func reportPercentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkKeystrokeEchoTTYD is BenchmarkKeystrokeEcho against ttyd, for
// the comparison the echo figures are quoted with: the same client, the same
// program (cat in raw mode), ttyd's protocol (a JSON hello, then input as
// "0"+bytes and output as "0"+bytes in binary frames, subprotocol "tty").
// It skips when ttyd is not on PATH (Debian bookworm has no package:
// scripts/ttyd.sh builds it from Debian's source package). Run: go test ./internal/web -run '^$' -bench EchoTTYD -benchtime 2000x
func BenchmarkKeystrokeEchoTTYD(b *testing.B) {
	bin, err := exec.LookPath("ttyd")
	if err != nil {
		b.Skip("ttyd is not installed: scripts/ttyd.sh builds 1.7.7 from Debian's source package")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	cmd := exec.Command(bin, "-W", "-i", "127.0.0.1", "-p", strconv.Itoa(port), "sh", "-c", "stty raw -echo; printf READY; exec cat")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var conn *websocket.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		conn, _, err = websocket.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(port)+"/ws", &websocket.DialOptions{Subprotocols: []string{"tty"}})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("cannot reach ttyd: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageBinary, []byte(`{"AuthToken":"","columns":80,"rows":24}`)); err != nil {
		b.Fatal(err)
	}
	var seen []byte
	output := func() error { // one frame; output frames start with '0'
		_, data, err := conn.Read(ctx)
		if err == nil && len(data) > 0 && data[0] == '0' {
			seen = append(seen, data[1:]...)
		}
		return err
	}
	for !strings.Contains(string(seen), "READY") {
		if err := output(); err != nil {
			b.Fatalf("waiting for the program: %v", err)
		}
	}
	key := []byte("0k")
	rtt := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := conn.Write(ctx, websocket.MessageBinary, key); err != nil {
			b.Fatal(err)
		}
		before := len(seen)
		for len(seen) == before {
			if err := output(); err != nil {
				b.Fatal(err)
			}
		}
		rtt = append(rtt, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, rtt)
}
