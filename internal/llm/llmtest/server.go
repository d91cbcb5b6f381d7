// Package llmtest is a scripted fake LLM server over real HTTP, speaking the
// Anthropic Messages, OpenAI Chat Completions, OpenAI Responses and Gemini
// API (gemini.go) wire formats (JSON and SSE streaming), and Claude as Amazon
// Bedrock (SigV4 checked, AWS event-stream framing) and Google Vertex AI
// (OAuth token endpoint, streamRawPredict) serve it (cloud.go), so that the
// real provider adapters and the built binary can be tested without a key or
// the network.
//
// A test scripts the replies as Turns, points a client at URL() (Anthropic)
// or OpenAIBaseURL() (OpenAI, both wires), then asserts on the recorded Requests:
//
//	srv := llmtest.New(t,
//		llmtest.ToolTurn(llmtest.BashCall("c1", "ls")),
//		llmtest.TextTurn("done"),
//	)
//	// … run the agent with ANTHROPIC_BASE_URL=srv.URL() …
//	res, _ := srv.Requests()[1].ToolResult("c1")
//
// Replies come from the script in order; when it is exhausted, from the
// handler set with Handle (useful when requests arrive concurrently, as with
// parallel sub-agents); with neither, the request is refused with HTTP 400
// and, for a server made with New, the test fails.
//
// The provider adapters' shared contract (errors and retries, a text
// answer, usage, a tool round trip, idle timeouts, cancellation, …) is
// checked by the Check functions of conformance.go and providertest.go,
// which each provider's tests call with its own constructor and request.
package llmtest

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// Server is a running fake LLM server. All methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server
	tb  testing.TB

	mu          sync.Mutex
	script      []Turn
	handler     func(*Request) Turn
	requests    []*record
	unexpected  []string
	inFlight    int
	maxInFlight int
	tokenLimit  int   // LimitTokens
	refused     []int // requests refused as too long
	forget      bool  // ForgetRequests

	saKey        *rsa.PrivateKey // Vertex's service-account key, made on first use
	tokens       []string        // Vertex access tokens issued
	authFailures []string        // cloud requests refused for their credentials
}

// New starts a server with the given script; it is closed when the test ends,
// and the test fails if a request found no scripted reply.
func New(tb testing.TB, turns ...Turn) *Server {
	tb.Helper()
	s := NewServer(turns...)
	s.tb = tb
	tb.Cleanup(func() {
		s.Close()
		if u := s.Unexpected(); len(u) > 0 {
			tb.Errorf("llmtest: %d request(s) had no scripted reply:\n%s", len(u), strings.Join(u, "\n"))
		}
	})
	return s
}

// NewServer starts a server with the given script. Call Close when done.
func NewServer(turns ...Turn) *Server {
	s := &Server{script: append([]Turn(nil), turns...)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	return s
}

// ForgetRequests makes the server keep only the newest request: every
// earlier one is left with its index and format. For long benchmarks, where
// the server stands for a remote model: holding every body ever sent (and
// collecting the garbage of that heap) would load the machine more with
// each step and show up as the client's cost growing.
func (s *Server) ForgetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forget = true
}

// URL is the server's base URL, for ANTHROPIC_BASE_URL (the client appends /v1/messages).
func (s *Server) URL() string { return s.srv.URL }

// OpenAIBaseURL is URL()+"/v1", for OPENAI_BASE_URL (the client appends /chat/completions).
func (s *Server) OpenAIBaseURL() string { return s.srv.URL + "/v1" }

// AnthropicEnv returns environment entries pointing an Anthropic client here.
func (s *Server) AnthropicEnv() []string {
	return []string{"ANTHROPIC_BASE_URL=" + s.URL(), "ANTHROPIC_API_KEY=llmtest-key"}
}

// OpenAIEnv returns environment entries pointing an OpenAI client here.
func (s *Server) OpenAIEnv() []string {
	return []string{"OPENAI_BASE_URL=" + s.OpenAIBaseURL(), "OPENAI_API_KEY=llmtest-key"}
}

// ResponsesEnv is OpenAIEnv with the Responses wire chosen (the server is
// not api.openai.com, where gpt-5 models would choose it themselves).
func (s *Server) ResponsesEnv() []string {
	return append(s.OpenAIEnv(), "SYNAPSE_OPENAI_WIRE=responses")
}

// Close shuts the server down, cutting any open streams.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Script appends turns to the script.
func (s *Server) Script(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, turns...)
}

// Handle sets the function that answers once the script is exhausted.
func (s *Server) Handle(f func(req *Request) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Remaining counts the scripted turns not yet used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// record is a received request, decoded in full only when someone looks at
// it: decoding a long conversation costs far more than answering it, and
// benchmarks of the agent should not pay for it.
type record struct {
	req     Request
	decoded bool
}

// full returns the decoded request; the caller holds s.mu.
func (r *record) full() Request {
	if !r.decoded {
		r.decoded = true
		d, err := decode(r.req.Format, r.req.Raw)
		if err != nil {
			r.req.DecodeError = err.Error()
		} else {
			d.Index, d.Header, d.Raw, d.Path = r.req.Index, r.req.Header, r.req.Raw, r.req.Path
			switch r.req.Format {
			case FormatGemini: // the path names them, not the body
				d.Model, d.Stream = r.req.Model, r.req.Stream
			case FormatBedrock, FormatVertex:
				// The cloud platforms name the model in the path; Bedrock streams by path too.
				d.Format, d.Model, d.Stream = r.req.Format, r.req.Model, r.req.Stream
			}
			r.req = d
		}
	}
	return r.req
}

func decode(format string, body []byte) (Request, error) {
	switch format {
	case FormatAnthropic, FormatBedrock, FormatVertex:
		return decodeAnthropic(body)
	case FormatResponses:
		return decodeResponses(body)
	case FormatGemini:
		return decodeGemini(body)
	}
	return decodeOpenAI(body)
}

// Requests returns every request received so far, decoded, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.full()
	}
	return out
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// LastRequest returns the most recent request (ok false when none arrived).
func (s *Server) LastRequest() (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1].full(), true
}

// InFlight is the number of requests being answered right now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxConcurrent is the largest number of requests ever answered at once.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Unexpected describes the requests that found no reply.
func (s *Server) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/token" {
		s.serveToken(w, r)
		return
	}
	var format string
	gModel, gStream, gemini := geminiTarget(r.URL.Path)
	cloud, isCloud := routeCloud(r)
	switch {
	case r.Method == http.MethodPost && gemini:
		format = FormatGemini
	case isCloud:
		format = cloud.format
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
		format = FormatAnthropic
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		format = FormatOpenAI
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		format = FormatResponses
	default:
		http.Error(w, "llmtest: unknown endpoint "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	// Only what the reply needs is decoded now; the rest when asked for.
	var light struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	if err := json.Unmarshal(body, &light); err != nil {
		writeError(w, format, http.StatusBadRequest, APIError{Message: "llmtest: request body is not valid JSON: " + err.Error()}, "", "")
		return
	}
	req := Request{Format: format, Model: light.Model, Stream: light.Stream, Header: r.Header.Clone(), Raw: body, Path: r.URL.Path}
	switch {
	case gemini:
		req.Model, req.Stream = gModel, gStream
	case isCloud:
		if !s.checkCloud(w, r, cloud, body) {
			return
		}
		req.Model, req.Stream = cloud.model, cloud.stream
	}

	turn, ok := s.begin(&req)
	defer s.end()
	if !ok {
		writeError(w, format, http.StatusBadRequest, APIError{Message: fmt.Sprintf("llmtest: no scripted reply left for request #%d", req.Index)}, "", "")
		return
	}
	if turn.Reply != nil {
		full := s.decoded(req.Index)
		if full.DecodeError != "" {
			writeError(w, format, http.StatusBadRequest, APIError{Message: "llmtest: " + full.DecodeError}, "", "")
			return
		}
		turn = turn.Reply(&full)
	}
	if turn.Delay > 0 && !sleep(r.Context(), turn.Delay) {
		return
	}
	if turn.Status >= 400 {
		writeError(w, format, turn.Status, turn.Error, turn.RetryAfter, turn.RetryAfterMs)
		return
	}
	if turn.Raw != "" {
		ct := "application/json"
		if req.Stream {
			ct = "text/event-stream"
			if format == FormatBedrock {
				ct = "application/vnd.amazon.eventstream"
			}
		}
		w.Header().Set("Content-Type", ct)
		_, _ = io.WriteString(w, turn.Raw)
		return
	}
	reply := newReply(&req, turn)
	if turn.PlainJSON {
		req.Stream = false
	}
	switch format {
	case FormatAnthropic, FormatBedrock, FormatVertex:
		writeAnthropic(r.Context(), w, &req, turn, reply)
	case FormatResponses:
		writeResponses(r.Context(), w, &req, turn, reply)
	case FormatGemini:
		writeGemini(r.Context(), w, &req, turn, reply)
	default:
		writeOpenAI(r.Context(), w, &req, turn, reply)
	}
}

// begin records the request and picks its turn.
func (s *Server) begin(req *Request) (Turn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Index = len(s.requests)
	rec := &record{req: *req}
	if n := len(s.requests); s.forget && n > 0 {
		old := s.requests[n-1]
		*old = record{req: Request{Index: old.req.Index, Format: old.req.Format}, decoded: true}
	}
	s.requests = append(s.requests, rec)
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	if s.tokenLimit > 0 {
		full := rec.full()
		if n := EstimateTokens(&full); full.DecodeError == "" && n > s.tokenLimit {
			s.refused = append(s.refused, req.Index)
			return tooLong(req.Format, n, s.tokenLimit), true
		}
	}
	if len(s.script) > 0 {
		t := s.script[0]
		s.script = s.script[1:]
		return t, true
	}
	if s.handler != nil {
		return Turn{Reply: s.handler}, true
	}
	full := rec.full()
	s.unexpected = append(s.unexpected, fmt.Sprintf("#%d %s model=%q last user text=%q", req.Index, req.Format, req.Model, textutil.Clip(full.LastUserText(), 80)))
	return Turn{}, false
}

// decoded returns request i decoded in full.
func (s *Server) decoded(i int) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i].full()
}

func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// reply is a turn with its defaults resolved.
type reply struct {
	id         string
	model      string
	stop       string
	signature  string
	calls      []resolvedCall
	usage      Usage
	fragment   int
	eventDelay time.Duration
}

type resolvedCall struct {
	id, name, input string
}

func newReply(req *Request, t Turn) reply {
	rp := reply{
		id:         fmt.Sprintf("msg_llmtest_%d", req.Index),
		model:      req.Model,
		stop:       t.stopReason(),
		signature:  t.Signature,
		usage:      t.Usage,
		fragment:   t.fragment(),
		eventDelay: t.EventDelay,
	}
	if rp.model == "" {
		rp.model = "llmtest-model"
	}
	if rp.signature == "" && t.Thinking != "" {
		rp.signature = fmt.Sprintf("sig-%d", req.Index)
	}
	out := len(t.Text) + len(t.Thinking)
	for i, c := range t.ToolCalls {
		id := c.ID
		if id == "" {
			prefix := "toolu"
			if req.Format == FormatOpenAI || req.Format == FormatResponses || req.Format == FormatGemini {
				prefix = "call"
			}
			id = fmt.Sprintf("%s_llmtest_%d_%d", prefix, req.Index, i)
		}
		in := c.input()
		out += len(in) + len(c.Name)
		rp.calls = append(rp.calls, resolvedCall{id: id, name: c.Name, input: in})
	}
	if !rp.usage.Exact {
		if rp.usage.InputTokens == 0 {
			rp.usage.InputTokens = int64(len(req.Raw)/4 + 1)
		}
		if rp.usage.OutputTokens == 0 {
			rp.usage.OutputTokens = int64(out/4 + 1)
		}
	}
	return rp
}

// sse writes server-sent events, flushing each, and cuts the connection
// after cutAfter events when asked to. For Bedrock it writes each event as
// an AWS event-stream chunk instead.
type sse struct {
	ctx      context.Context
	w        http.ResponseWriter
	rc       *http.ResponseController
	n        int
	cutAfter int
	stall    int
	delay    time.Duration
	crlf     bool // end events with CRLF CRLF, as Google does
	bedrock  bool
}

func newSSE(ctx context.Context, w http.ResponseWriter, t Turn) *sse {
	return newEventStream(ctx, w, t, "")
}

// newEventStream starts a stream in the format's framing: Bedrock's event
// stream, else server-sent events.
func newEventStream(ctx context.Context, w http.ResponseWriter, t Turn, format string) *sse {
	bedrock := format == FormatBedrock
	if bedrock {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Bedrock-Content-Type", "application/json")
		w.Header().Set("X-Amzn-RequestId", "llmtest-request")
	} else {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	return &sse{ctx: ctx, w: w, rc: http.NewResponseController(w), cutAfter: t.CutAfter, stall: t.StallAfter, delay: t.EventDelay, bedrock: bedrock}
}

// send writes one event (event may be "" for data-only events). It reports
// false when the client went away.
func (e *sse) send(event string, data []byte) bool {
	if e.ctx.Err() != nil {
		return false
	}
	if e.n > 0 && e.delay > 0 && !sleep(e.ctx, e.delay) {
		return false
	}
	var b []byte
	if e.bedrock {
		b = bedrockChunk(data)
	} else {
		if event != "" {
			b = append(b, "event: "+event+"\n"...)
		}
		b = append(b, "data: "...)
		b = append(b, data...)
		if e.crlf {
			b = append(b, "\r\n\r\n"...)
		} else {
			b = append(b, "\n\n"...)
		}
	}
	if _, err := e.w.Write(b); err != nil {
		return false
	}
	_ = e.rc.Flush()
	e.n++
	if e.cutAfter > 0 && e.n >= e.cutAfter {
		// Abort: the server drops the connection without the terminating chunk.
		panic(http.ErrAbortHandler)
	}
	if e.stall > 0 && e.n >= e.stall {
		<-e.ctx.Done()
		return false
	}
	return true
}
