package shell

import (
	"bytes"
	"context"
	"github.com/synapse-agent/synapse/internal/textutil"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/command"
)

// spillTo is a SpillFunc creating files in dir.
func spillTo(dir string) command.SpillFunc {
	return func() (*os.File, error) { return os.CreateTemp(dir, "out-*.txt") }
}

// seqOutput is what `seq 1 n` prints.
func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// A stream that outgrows memory goes whole to the spill file; memory keeps
// its ends, and feeding 20 MB allocates a bounded amount, not the output.
func TestCappedSpillsAndStaysBounded(t *testing.T) {
	want := seqOutput(2_600_000) // about 20 MB
	c := capped{limit: DefaultMaxOutput, spill: spillTo(t.TempDir())}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for rest := want; len(rest) > 0; {
		n := min(len(rest), 64<<10)
		c.write(rest[:n])
		rest = rest[n:]
	}
	runtime.ReadMemStats(&after)
	text, f := c.result()
	if f == nil {
		t.Fatal("20 MB did not spill")
	}
	defer func() { _ = f.Close() }()
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 { // the memory before spilling (spillAt) and its growth
		t.Errorf("feeding %d bytes allocated %d bytes; want a bounded amount (< 8 MiB), not the output", len(want), alloc)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("spill file holds %d bytes, want the %d of the stream", len(got), len(want))
	}
	if len(text) > 2*spillKeep+200 || !strings.HasPrefix(text, "1\n2\n3\n") || !strings.HasSuffix(text, "2599999\n2600000\n") {
		t.Fatalf("kept text: %d bytes %q", len(text), trunc(text))
	}
	if !strings.Contains(text, "bytes more in "+f.Name()) {
		t.Fatalf("kept text does not say where the rest is: %q", trunc(text))
	}
}

// A spilled stream still stops at limit bytes: the file ends with the note
// of what was dropped and the stream's last bytes, like the memory cap.
func TestCappedSpillKeepsTheLimit(t *testing.T) {
	c := capped{limit: 2 << 20, spill: spillTo(t.TempDir())}
	chunk := bytes.Repeat([]byte("m"), 1000)
	c.write(bytes.Repeat([]byte("h"), 1000))
	for range 3000 {
		c.write(chunk)
	}
	c.write(bytes.Repeat([]byte("t"), 1000))
	_, f := c.result()
	defer func() { _ = f.Close() }()
	got, _ := os.ReadFile(f.Name())
	total := 1000 + 3000*1000 + 1000
	dropped := total - (2 << 20) - spillKeep
	note := "\n" + textutil.CutNote(int64(dropped)) + "\n"
	if len(got) != 2<<20+len(note)+spillKeep || !bytes.HasPrefix(got, bytes.Repeat([]byte("h"), 1000)) ||
		!bytes.Contains(got, []byte(note)) || !bytes.HasSuffix(got, append(bytes.Repeat([]byte("m"), spillKeep-1000), bytes.Repeat([]byte("t"), 1000)...)) {
		t.Fatalf("capped spill file: %d bytes, note present: %v", len(got), bytes.Contains(got, []byte(note)))
	}
}

// Through a real shell: a 20 MB stdout reaches the spill file whole and the
// Result carries it; without a SpillFunc nothing changes.
func TestLargeOutputSpills(t *testing.T) {
	s := startT(t, Options{})
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := s.Execute(command.WithSpill(ctx, spillTo(dir)), "seq 1 2600000; echo oops >&2")
	if err != nil {
		t.Fatal(err)
	}
	if r.StdoutFile == nil {
		t.Fatalf("no spill file; stdout %d bytes", len(r.Stdout))
	}
	defer r.DropSpill()
	got, _ := os.ReadFile(r.StdoutFile.Name())
	if !bytes.Equal(got, seqOutput(2_600_000)) || r.Stderr != "oops\n" || r.ExitCode != 0 {
		t.Fatalf("spill file %d bytes, stderr %q, exit %d", len(got), r.Stderr, r.ExitCode)
	}
	if len(r.Stdout) > 2*spillKeep+200 {
		t.Fatalf("Stdout keeps %d bytes", len(r.Stdout))
	}
	small := execT(t, s, "seq 1 3")
	if small.StdoutFile != nil || small.Stdout != "1\n2\n3\n" {
		t.Fatalf("small output: %+v", small)
	}
	r2, err := s.Execute(command.WithSpill(ctx, spillTo(dir)), "seq 1 3")
	if err != nil || r2.StdoutFile != nil || r2.Stdout != "1\n2\n3\n" {
		t.Fatalf("small output with a spill func: %+v %v", r2, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 1 {
		t.Fatalf("spill files: %v", files)
	}
}

// BenchmarkLargeOutput runs a 20 MB command through the shell with a spill
// file, as the Bash tool does, and reports the bytes allocated per run.
func BenchmarkLargeOutput(b *testing.B) {
	s, err := Start(context.Background(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	dir := b.TempDir()
	ctx := command.WithSpill(context.Background(), spillTo(dir))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range b.N {
		r, err := s.Execute(ctx, "seq 1 2600000")
		if err != nil {
			b.Fatal(err)
		}
		r.DropSpill()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
	b.ReportMetric(float64(after.HeapSys)/(1<<20), "MiB-heap-sys")
}
