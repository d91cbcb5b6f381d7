// Package web is Synapse's web console: an authenticated HTTP server whose
// /ui/engines page runs one whitelisted agent CLI (codex, gemini, iflow) at a
// time in a PTY, confined by the sandbox, and shows it in an xterm.js terminal
// over a WebSocket.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// Options configure a Server.
type Options struct {
	// DataDir holds ui_shell_sessions/ and agent_home/.
	DataDir string
	// Env is the server's environment: its PATH finds the engines, and each
	// engine gets from it only what it needs (see Engine.Env).
	Env []string
	// EngineEnv maps an engine ID to more variables of Env it gets, by name:
	// the user's explicit choice, the only way an engine sees one of
	// Synapse's provider keys (settings.json "consoleEnv").
	EngineEnv map[string][]string
	// Auth says who may use the console; Auth.Token must be set.
	Auth Auth
	// Limits bound sessions; see LimitsFromEnv.
	Limits Limits
	// Wrap confines an engine's writes (nil: engines run unconfined and the
	// probe reports unsupported).
	Wrap WrapFunc
	// Probe overrides the sandbox probe (tests); nil runs ProbeSandbox with Wrap.
	Probe func(context.Context) ProbeResult
	// RequireSandbox refuses to start engines when the probe is not supported.
	RequireSandbox bool
	// Logger receives operational messages (nil: discarded).
	Logger *slog.Logger
}

// Server is the web console. Create it with New, serve Handler, and Close it.
type Server struct {
	opts    Options
	mgr     *manager
	handler http.Handler
	static  fs.FS
	baseCtx context.Context
	cancel  context.CancelFunc
}

// New checks opts and builds the server. It starts the sandbox probe in the
// background and applies the retention rule to old session directories.
func New(opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("web console: no data directory given: pass --data-dir")
	}
	if opts.Auth.Token == "" {
		return nil, errors.New("web console: no access token: every request must be authenticated")
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("web console: data directory %q: %w", opts.DataDir, err)
	}
	opts.DataDir = dataDir
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	static, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, fmt.Errorf("web console: embedded assets: %w", err)
	}
	probeDir := filepath.Join(dataDir, ".sandbox-probe")
	probe := opts.Probe
	if probe == nil {
		wrap := opts.Wrap
		probe = func(ctx context.Context) ProbeResult { return ProbeSandbox(ctx, wrap, probeDir) }
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:    opts,
		static:  static,
		baseCtx: ctx,
		cancel:  cancel,
		mgr: &manager{
			sessionsDir: filepath.Join(dataDir, "ui_shell_sessions"),
			agentHome:   filepath.Join(dataDir, "agent_home"),
			probeDir:    probeDir,
			env:         opts.Env,
			engineEnv:   opts.EngineEnv,
			limits:      opts.Limits,
			wrap:        opts.Wrap,
			probe:       probe,
			requireSB:   opts.RequireSandbox,
			log:         log,
			recent:      map[string]*Session{},
		},
	}
	s.handler = s.routes()
	s.mgr.cleanup(time.Now())
	go s.mgr.sandboxStatus(ctx)
	return s, nil
}

// Handler is the console's HTTP handler; every route requires authentication.
func (s *Server) Handler() http.Handler { return s.handler }

// AssetsPresent reports whether xterm.js was embedded at build time.
func (s *Server) AssetsPresent() bool {
	_, err := fs.Stat(s.static, "vendor/xterm.js")
	return err == nil
}

// Close stops the active session (grace then kill) and ends open terminals.
func (s *Server) Close(ctx context.Context) error {
	s.mgr.StopAll(ctx)
	s.cancel()
	return nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/engines", http.StatusFound)
	})
	mux.HandleFunc("GET /ui/engines", s.handlePage)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.HandlerFunc(s.handleStatic)))
	mux.HandleFunc("GET /api/engines", s.handleEngines)
	mux.HandleFunc("GET /api/sessions/current", s.handleCurrent)
	mux.HandleFunc("POST /api/sessions", s.handleStart)
	mux.HandleFunc("POST /api/sessions/{id}/stop", s.handleStop)
	mux.HandleFunc("GET /api/sessions/{id}/terminal", s.handleTerminal)
	return s.opts.Auth.checkHost(securityHeaders(s.opts.Auth.requireAuth(mux)))
}

// securityHeaders keeps the page self-contained: scripts, styles and
// connections only to this server, no framing, no referrer (the first URL
// carries the token).
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self' ws://"+r.Host+" wss://"+r.Host+"; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handlePage(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(s.static, "index.html")
	if err != nil {
		http.Error(w, "the console page is missing from this build: rebuild with make build", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	if name == "" || strings.HasSuffix(name, "/") || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(s.static, name)
	if err != nil {
		if strings.HasPrefix(name, "vendor/") {
			http.Error(w, "xterm.js is missing from this build: run `make web-assets` (npm ci in web/) and rebuild", http.StatusNotFound)
			return
		}
		http.NotFound(w, r)
		return
	}
	ct := mime.TypeByExtension(filepath.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

type engineView struct {
	Engine
	Installed bool   `json:"installed"`
	Path      string `json:"path,omitempty"`
}

func (s *Server) handleEngines(w http.ResponseWriter, r *http.Request) {
	var list []engineView
	for _, e := range Engines() {
		p, ok := s.mgr.enginePath(e)
		list = append(list, engineView{Engine: e, Installed: ok, Path: p})
	}
	resp := map[string]any{
		"engines": list,
		"sandbox": s.mgr.lastProbe(),
		"session": stateOf(s.mgr.Latest()),
		"assets":  map[string]bool{"xterm": s.AssetsPresent()},
	}
	writeJSON(w, http.StatusOK, resp)
}

func stateOf(sess *Session) *SessionState {
	if sess == nil {
		return nil
	}
	st := sess.State()
	return &st
}

func (s *Server) handleCurrent(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"session": stateOf(s.mgr.Latest())})
}

type startRequest struct {
	Engine string `json:"engine"`
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
}

// checkPost rejects cross-site and non-JSON POSTs (a form on another site
// cannot send application/json without a CORS preflight, which we never grant).
func checkPost(w http.ResponseWriter, r *http.Request) bool {
	if err := sameOrigin(r, true); err != nil {
		writeJSON(w, http.StatusForbidden, &StartError{Code: "bad_origin", Msg: "forbidden: " + err.Error()})
		return false
	}
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, &StartError{Code: "bad_request", Msg: "send the request body as application/json"})
		return false
	}
	return true
}

func (s *Server) handleStart(w http.ResponseWriter, r *http.Request) {
	if !checkPost(w, r) {
		return
	}
	var req startRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields() // an engine id, never a command line
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, &StartError{Code: "bad_request",
			Msg: fmt.Sprintf("bad start request (%v): send {\"engine\": \"<engine id>\", \"cols\": N, \"rows\": N}", err)})
		return
	}
	if req.Cols <= 0 || req.Rows <= 0 {
		req.Cols, req.Rows = 80, 24
	}
	sess, probe, err := s.mgr.Start(r.Context(), req.Engine, req.Cols, req.Rows)
	if err != nil {
		var se *StartError
		if !errors.As(err, &se) {
			se = &StartError{Status: http.StatusInternalServerError, Code: "start_failed", Msg: err.Error()}
		}
		resp := map[string]any{"error": se.Msg, "code": se.Code}
		if probe.Status != "" {
			resp["sandbox"] = probe
		}
		writeJSON(w, se.Status, resp)
		return
	}
	resp := map[string]any{"session": sess.State(), "sandbox": probe}
	if probe.Status != SandboxSupported {
		// The message may be a sentence of its own ("… namespace."): one period.
		resp["warning"] = fmt.Sprintf("sandbox %s: %s. The session runs without the write boundary.", probe.Status, strings.TrimRight(probe.Message, ". "))
	}
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) handleStop(w http.ResponseWriter, r *http.Request) {
	if !checkPost(w, r) {
		return
	}
	sess := s.sessionOr404(w, r)
	if sess == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), sess.grace+drainWait+5*time.Second)
	defer cancel()
	sess.Stop(ctx, EndStopped)
	writeJSON(w, http.StatusOK, map[string]any{"session": sess.State()})
}

// sessionOr404 returns the session named by the request's {id}, or answers
// 404 and returns nil.
func (s *Server) sessionOr404(w http.ResponseWriter, r *http.Request) *Session {
	sess := s.mgr.Get(r.PathValue("id"))
	if sess == nil {
		writeJSON(w, http.StatusNotFound, &StartError{Code: "not_found", Msg: "no such session: reload the page"})
	}
	return sess
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
