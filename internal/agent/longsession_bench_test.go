package agent

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/contextmgr"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
	"github.com/synapse-agent/synapse/internal/llm/llmtest"
	"github.com/synapse-agent/synapse/internal/tool"
)

// stepClock records when each conversation request started and ended (the
// summary requests of compactions count as the agent's own time), the peak
// RSS after the first quarter of the steps, and the body size of every
// request sent.
type stepClock struct {
	llm.Provider
	quarter    int
	mu         sync.Mutex
	start, end []time.Time
	// allocStart, allocEnd: bytes allocated so far at the same moments:
	// what the agent allocates between requests, which no load disturbs.
	allocStart, allocEnd []uint64
	rssQ1                float64
	summaries            int
}

func (p *stepClock) Stream(ctx context.Context, req llm.Request, on func(llm.Event)) (llm.Response, error) {
	if req.System == contextmgr.SummarySystem {
		p.mu.Lock()
		p.summaries++
		p.mu.Unlock()
		return p.Provider.Stream(ctx, req, on)
	}
	p.mu.Lock()
	p.start = append(p.start, time.Now())
	p.allocStart = append(p.allocStart, allocated())
	if len(p.start) == p.quarter {
		p.rssQ1 = peakRSSMB()
	}
	p.mu.Unlock()
	resp, err := p.Provider.Stream(ctx, req, on)
	p.mu.Lock()
	p.allocEnd = append(p.allocEnd, allocated())
	p.end = append(p.end, time.Now())
	p.mu.Unlock()
	return resp, err
}

func peakRSSMB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Maxrss) / 1024
}

// allocated is the bytes the process has allocated on the heap.
func allocated() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// bodySizes records the size of every request body sent.
type bodySizes struct {
	base  http.RoundTripper
	mu    sync.Mutex
	sizes []int64
}

func (t *bodySizes) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.sizes = append(t.sizes, r.ContentLength)
	t.mu.Unlock()
	return t.base.RoundTrip(r)
}

// BenchmarkLongSessionLargeResults is one conversation of b.N tool calls
// (make bench: 2000) whose every result is 8 KB, through the real Anthropic
// adapter against llmtest in a child process, with persistence and the
// default context management of a 200k-token model: offload to the
// session's directory and compaction by summary requests. It reports the
// agent's own time per step (everything outside the conversation's
// requests, offload and compaction included) as medians of the first and
// last quarter, the peak RSS after the first quarter and at the end, the
// largest request body against the window, and the compactions made.
func BenchmarkLongSessionLargeResults(b *testing.B) {
	n := b.N
	url := startLongSessionServer(b, n)
	sizes := &bodySizes{base: http.DefaultTransport.(*http.Transport).Clone()}
	hc := &http.Client{Transport: llm.WithIdleTimeout(sizes, 0)}
	p := &stepClock{Provider: anthropic.New(anthropic.Options{APIKey: "k", BaseURL: url, HTTPClient: hc}), quarter: max(1, n/4)}
	result := strings.Repeat("-rw-r--r-- 1 user user  4096 Jan  1 00:00 some/generated/file.go\n", 8192/64)
	tt := newTestTool(func(ctx context.Context, cmd string) tool.Result { return tool.Result{Output: cmd + "\n" + result} })
	r, err := New(Options{Provider: p, Model: "claude-sonnet-4-5", Tool: tt, Cwd: b.TempDir(),
		SessionsDir: b.TempDir(), MaxTurns: n + 10, OnEvent: func(Event) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()

	b.ReportAllocs()
	b.ResetTimer()
	res, err := r.Run(context.Background(), "Do the task step by step.")
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Turns != n+1 {
		b.Fatalf("turns = %d, want %d", res.Turns, n+1)
	}
	agentStep, agentAlloc := make([]time.Duration, n), make([]float64, n)
	for i := 0; i < n; i++ {
		agentStep[i] = p.start[i+1].Sub(p.end[i])
		agentAlloc[i] = float64(p.allocStart[i+1] - p.allocEnd[i])
	}
	med := func(d []time.Duration) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2].Nanoseconds()) / 1e3
	}
	k := max(1, n/4)
	b.ReportMetric(med(agentStep[:k]), "agent-µs/step-firstQ-median")
	b.ReportMetric(med(agentStep[n-k:]), "agent-µs/step-lastQ-median")
	b.ReportMetric(medianOf(agentAlloc[:k]), "agent-B/step-firstQ-median")
	b.ReportMetric(medianOf(agentAlloc[n-k:]), "agent-B/step-lastQ-median")
	b.ReportMetric(p.rssQ1, "peak-RSS-MB-firstQ")
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB-end")
	window := llm.ContextWindow("claude-sonnet-4-5")
	b.ReportMetric(float64(slices.Max(sizes.sizes))/1024, "max-request-KB")
	b.ReportMetric(float64(window*4)/1024, "window-KB-at-4-chars-per-token")
	b.ReportMetric(float64(p.summaries), "compactions")
	b.ReportMetric(float64(r.ContextStats().Offloaded), "offloaded-now")
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// startLongSessionServer runs llmtest in a child process that answers b.N
// conversation requests with one Bash call each, then "All done."; summary
// requests get a short summary.
func startLongSessionServer(b *testing.B, turns int) string {
	b.Helper()
	return startHelperServer(b, "^TestLongSessionServerHelper$", "AGENT_LONG_SESSION_TURNS="+strconv.Itoa(turns))
}

// TestLongSessionServerHelper is the child process of the long-session
// benchmark; it does nothing in a normal test run.
func TestLongSessionServerHelper(t *testing.T) {
	v := os.Getenv("AGENT_LONG_SESSION_TURNS")
	if v == "" {
		t.Skip("only runs as the benchmark's server process")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	// The server stands for a remote model: its garbage collection, which
	// grows with the requests, must not compete with the agent for this
	// machine's cores (it collects only past 1 GiB).
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.ForgetRequests()
	var mu sync.Mutex
	calls := 0
	srv.Handle(func(req *llmtest.Request) llmtest.Turn {
		if strings.HasPrefix(req.System, "You summarise") {
			return llmtest.TextTurn("## Current state\n- the listing steps ran; keep going")
		}
		mu.Lock()
		defer mu.Unlock()
		if calls >= n {
			return llmtest.TextTurn("All done.")
		}
		calls++
		return llmtest.Turn{Text: "Next step.", ToolCalls: []llmtest.ToolCall{
			llmtest.BashCall(fmt.Sprintf("call-%d", calls), fmt.Sprintf("ls -la dir%d", calls)),
		}}
	})
	fmt.Printf("URL %s\n", srv.URL())
	waitStdin()
}
