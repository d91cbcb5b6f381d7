package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// timedProvider records when each request started and ended, so the time the
// agent spends between requests (tool dispatch, history, events, session
// writes) can be told apart from the provider's round trip.
type timedProvider struct {
	llm.Provider
	mu         sync.Mutex
	start, end []time.Time
	// The process's CPU time at the same instants: wall time on a shared
	// machine also counts other processes (the fake server among them).
	cpuStart, cpuEnd []time.Duration
}

// procCPU is the CPU time this process has used (all threads: our goroutines
// and the runtime's background work such as GC).
func procCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (p *timedProvider) Stream(ctx context.Context, req llm.Request, on func(llm.Event)) (llm.Response, error) {
	p.mu.Lock()
	p.start = append(p.start, time.Now())
	p.cpuStart = append(p.cpuStart, procCPU())
	p.mu.Unlock()
	resp, err := p.Provider.Stream(ctx, req, on)
	p.mu.Lock()
	p.end = append(p.end, time.Now())
	p.cpuEnd = append(p.cpuEnd, procCPU())
	p.mu.Unlock()
	return resp, err
}

// BenchmarkAgentToolCalls runs one conversation of b.N tool-call turns (make
// bench: -benchtime 200x, so 200 calls) through the real Anthropic adapter
// against llmtest with no added latency, with session persistence on. It
// reports the agent's own time per call (everything outside the provider's
// request), that cost at the first and last quarter of the steps (medians), the provider round
// trip at both ends, the process's CPU time in both parts (means), and the process's peak RSS.
func BenchmarkAgentToolCalls(b *testing.B) {
	n := b.N
	url := startBenchServer(b, n)
	output := "total 8\ndrwxr-xr-x 2 user user 4096 Jan  1 00:00 .\n-rw-r--r-- 1 user user  120 Jan  1 00:00 main.go\n"
	p := &timedProvider{Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: url})}
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result { return tool.Result{Output: output} })
	r, err := New(Options{Provider: p, Model: "claude-sonnet-4-5", Tool: tt, Cwd: b.TempDir(),
		SessionsDir: benchSessionsDir(b), MaxTurns: n + 10, OnEvent: func(Event) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()

	b.ReportAllocs()
	b.ResetTimer()
	began := time.Now()
	res, err := r.Run(context.Background(), "Do the task step by step.")
	total := time.Since(began)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Turns != n+1 {
		b.Fatalf("turns = %d, want %d", res.Turns, n+1)
	}

	// Agent time of step i: from the end of request i to the start of request i+1.
	var inProvider time.Duration
	agentStep := make([]time.Duration, n)
	providerStep := make([]time.Duration, n+1)
	for i := 0; i <= n; i++ {
		providerStep[i] = p.end[i].Sub(p.start[i])
		inProvider += providerStep[i]
		if i < n {
			agentStep[i] = p.start[i+1].Sub(p.end[i])
		}
	}
	// Medians: a periodic session flush or a GC pause in one step should not
	// read as growth.
	avg := func(d []time.Duration) float64 {
		s := append([]time.Duration(nil), d...)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds()) / 1e3
	}
	k := max(1, n/4) // first and last quarter of the run
	agentCPU, provCPU := make([]time.Duration, n), make([]time.Duration, n+1)
	for i := 0; i <= n; i++ {
		provCPU[i] = p.cpuEnd[i] - p.cpuStart[i]
		if i < n {
			agentCPU[i] = p.cpuStart[i+1] - p.cpuEnd[i]
		}
	}
	mean := func(d []time.Duration) float64 {
		var t time.Duration
		for _, x := range d {
			t += x
		}
		return float64(t.Microseconds()) / float64(len(d))
	}
	// CPU in the provider call is ours too (the adapter encodes the request,
	// HTTP, SSE decoding): the part of a step that grows with the history.
	b.ReportMetric(mean(agentCPU[:k]), "agent-cpu-µs/step-firstQ-mean")
	b.ReportMetric(mean(agentCPU[n-k:]), "agent-cpu-µs/step-lastQ-mean")
	b.ReportMetric(mean(provCPU[:k]), "provider-cpu-µs/step-firstQ-mean")
	b.ReportMetric(mean(provCPU[n-k:n]), "provider-cpu-µs/step-lastQ-mean")
	b.ReportMetric(float64((total-inProvider).Microseconds())/float64(n), "agent-µs/call")
	b.ReportMetric(avg(agentStep[:k]), "agent-µs/step-firstQ-median")
	b.ReportMetric(avg(agentStep[n-k:]), "agent-µs/step-lastQ-median")
	b.ReportMetric(avg(providerStep[:k]), "provider-µs/step-firstQ-median")
	b.ReportMetric(avg(providerStep[n-k:n]), "provider-µs/step-lastQ-median")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
	}
}

// startBenchServer runs llmtest in a child process (this test binary), so
// that the peak RSS measured here is the agent's, not the fake server's.
func startBenchServer(b *testing.B, turns int) string {
	return startHelperServer(b, "^TestBenchServerHelper$", fmt.Sprintf("AGENT_BENCH_SERVER_TURNS=%d", turns))
}

// startHelperServer runs the test named by run in a child process of this
// test binary with env added, and returns the URL it prints.
func startHelperServer(b *testing.B, run, env string) string {
	cmd := exec.Command(os.Args[0], "-test.run="+run)
	cmd.Env = append(os.Environ(), env)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "URL ") {
		b.Fatalf("bench server did not start: %q %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "URL "))
}

// TestBenchServerHelper is the child process of startBenchServer; it does
// nothing in a normal test run.
func TestBenchServerHelper(t *testing.T) {
	v := os.Getenv("AGENT_BENCH_SERVER_TURNS")
	if v == "" {
		t.Skip("only runs as the benchmark's server process")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if req.Turns() >= n {
			return llmtest.TextTurn("All done.")
		}
		return llmtest.Turn{Text: "Running the next step.", ToolCalls: []llmtest.ToolCall{
			llmtest.BashCall(fmt.Sprintf("call-%d", req.Turns()), fmt.Sprintf("ls -la dir%d", req.Turns())),
		}}
	})
	fmt.Printf("URL %s\n", srv.URL())
	waitStdin()
}

// waitStdin blocks until the benchmark closes the helper's stdin.
func waitStdin() { _, _ = io.Copy(io.Discard, os.Stdin) }

func benchSessionsDir(b *testing.B) string {
	if testing.Short() {
		return ""
	}
	return b.TempDir()
}

// instantProvider answers at once without HTTP: b.N tool-call turns, then
// text. It records the time between requests, which is all the agent's.
type instantProvider struct {
	n, i  int
	last  time.Time
	steps []time.Duration
}

func (p *instantProvider) Name() string { return "instant" }

func (p *instantProvider) Stream(ctx context.Context, req llm.Request, on func(llm.Event)) (llm.Response, error) {
	if !p.last.IsZero() {
		p.steps = append(p.steps, time.Since(p.last))
	}
	defer func() { p.last = time.Now() }()
	p.i++
	if p.i > p.n {
		return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: "done"}, StopReason: llm.StopEndTurn}, nil
	}
	call := llm.ToolCall{ID: fmt.Sprint("c", p.i), Name: "Bash", Input: json.RawMessage(`{"command":"ls -la"}`)}
	return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: "next step", ToolCalls: []llm.ToolCall{call}},
		StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 50, OutputTokens: 10}}, nil
}

// BenchmarkAgentLoopOnly is the loop's own cost per tool call (dispatch,
// history, events, session append) with no provider work at all, and that
// cost in the first and last quarter of the run: flat means the step does
// not depend on history length.
func BenchmarkAgentLoopOnly(b *testing.B) {
	p := &instantProvider{n: b.N}
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result { return tool.Result{Output: "main.go\ngo.mod\n"} })
	r, err := New(Options{Provider: p, Tool: tt, SessionsDir: b.TempDir(), MaxTurns: b.N + 10, OnEvent: func(Event) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := r.Run(context.Background(), "go"); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if q := len(p.steps) / 4; q > 0 {
		med := func(d []time.Duration) float64 {
			s := slices.Clone(d)
			slices.Sort(s)
			return float64(s[len(s)/2].Nanoseconds()) / 1e3
		}
		b.ReportMetric(med(p.steps[:q]), "µs/step-firstQ-median")
		b.ReportMetric(med(p.steps[len(p.steps)-q:]), "µs/step-lastQ-median")
	}
}

// BenchmarkRecordUsage is one sub-agent request's usage reported to a parent
// with a session, from 5 goroutines at once (a full task batch), while the
// parent's run is going: what each sub-agent step pays for its roll-up.
func BenchmarkRecordUsage(b *testing.B) {
	started, release := make(chan struct{}), make(chan struct{})
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result {
		close(started)
		<-release
		return tool.Result{Output: "ok"}
	})
	p := &fakeProvider{turns: []llmtest.Turn{llmtest.BashTurn("a", "task:explore --prompt x --description x"), llmtest.TextTurn("done")}}
	r, err := New(Options{Provider: p, Model: "m", Tool: tt, Cwd: b.TempDir(), SessionsDir: benchSessionsDir(b), OnEvent: func(Event) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() { _, err := r.Run(context.Background(), "go"); done <- err }()
	<-started
	u := llm.Usage{InputTokens: 1200, OutputTokens: 80, CacheReadTokens: 9000}
	b.SetParallelism(5)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.RecordUsage(u, "claude-sonnet-4-5")
		}
	})
	b.StopTimer()
	close(release)
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
