package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Environment variables that bound sessions.
const (
	EnvHardTTL   = "UI_SHELL_HARD_TTL_SECONDS"  // default 1800, at least 60
	EnvIdleTTL   = "UI_SHELL_IDLE_TTL_SECONDS"  // default 900, at least 60
	EnvRetention = "UI_SHELL_RETENTION_SECONDS" // default 7 days, at least 60
	EnvKeep      = "UI_SHELL_KEEP_SESSIONS"     // default 20, at least 1
)

// Limits bound sessions in time and on disk.
type Limits struct {
	HardTTL      time.Duration // a session never runs longer (0: no limit)
	IdleTTL      time.Duration // a session without input ends (0: no limit)
	Retention    time.Duration // ended session directories older than this are removed
	KeepSessions int           // at most this many session directories are kept
	StopGrace    time.Duration // between terminate and kill on Stop
}

// LimitsFromEnv reads the UI_SHELL_* variables. Unset or invalid values give
// the defaults; values below the minimum are raised to it.
func LimitsFromEnv(getenv func(string) string) Limits {
	secs := func(name string, def, floor int) time.Duration {
		n := def
		if v := strings.TrimSpace(getenv(name)); v != "" {
			if p, err := strconv.Atoi(v); err == nil {
				n = p
			}
		}
		return time.Duration(max(n, floor)) * time.Second
	}
	keep := 20
	if v, err := strconv.Atoi(strings.TrimSpace(getenv(EnvKeep))); err == nil {
		keep = max(v, 1)
	}
	return Limits{
		HardTTL:      secs(EnvHardTTL, 1800, 60),
		IdleTTL:      secs(EnvIdleTTL, 900, 60),
		Retention:    secs(EnvRetention, 7*24*3600, 60),
		KeepSessions: keep,
		StopGrace:    3 * time.Second,
	}
}

// StartError is a start that did not happen; Status is the HTTP status.
type StartError struct {
	Status int    `json:"-"`
	Code   string `json:"code"`
	Msg    string `json:"error"`
}

func (e *StartError) Error() string { return e.Msg }

// manager owns the one active session and the session directories.
type manager struct {
	sessionsDir string
	agentHome   string
	probeDir    string
	env         []string
	engineEnv   map[string][]string
	limits      Limits
	wrap        WrapFunc
	probe       func(context.Context) ProbeResult
	requireSB   bool
	log         *slog.Logger

	mu       sync.Mutex
	reserved string   // id of a session being started, "" when none
	active   *Session // the running session, nil when none
	recent   map[string]*Session

	probeMu  sync.Mutex // one probe at a time
	probeRes *ProbeResult
}

// sandboxStatus returns the probe result, probing when there is no good one yet.
func (m *manager) sandboxStatus(ctx context.Context) ProbeResult {
	m.probeMu.Lock()
	defer m.probeMu.Unlock()
	if m.probeRes != nil && m.probeRes.Status == SandboxSupported {
		return *m.probeRes
	}
	res := m.probe(ctx)
	m.probeRes = &res
	return res
}

// lastProbe returns the cached probe result without probing (nil when none yet).
func (m *manager) lastProbe() *ProbeResult {
	if !m.probeMu.TryLock() {
		return nil // a probe is running
	}
	defer m.probeMu.Unlock()
	if m.probeRes == nil {
		return nil
	}
	r := *m.probeRes
	return &r
}

func (m *manager) enginePath(e Engine) (string, bool) {
	p, err := lookPath(e.Command, envValue(m.env, "PATH"))
	return p, err == nil
}

// Start launches engine id in a new session directory.
func (m *manager) Start(ctx context.Context, id string, cols, rows int) (*Session, ProbeResult, error) {
	engine, ok := LookupEngine(id)
	if !ok {
		ids := make([]string, 0, 3)
		for _, e := range Engines() {
			ids = append(ids, e.ID)
		}
		return nil, ProbeResult{}, &StartError{http.StatusBadRequest, "unknown_engine",
			fmt.Sprintf("unknown engine id %q: choose one of %s", id, strings.Join(ids, ", "))}
	}
	sid, err := newSessionID(time.Now())
	if err != nil {
		return nil, ProbeResult{}, err
	}
	m.mu.Lock()
	if busy := m.busyLocked(); busy != nil {
		m.mu.Unlock()
		return nil, ProbeResult{}, busy
	}
	m.reserved = sid
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.reserved = ""
		m.mu.Unlock()
	}()

	path, ok := m.enginePath(engine)
	if !ok {
		return nil, ProbeResult{}, &StartError{http.StatusUnprocessableEntity, "not_installed",
			fmt.Sprintf("%s is not installed: no executable named %q on PATH. Install it (%s) and retry.", engine.Label, engine.Command, engine.Install)}
	}
	probe := m.sandboxStatus(ctx)
	if probe.Status != SandboxSupported && m.requireSB {
		return nil, probe, &StartError{http.StatusServiceUnavailable, "sandbox_unavailable",
			fmt.Sprintf("the sandbox is %s (%s), and this server only starts engines inside it (--require-sandbox): fix the sandbox and retry", probe.Status, probe.Message)}
	}
	dir := filepath.Join(m.sessionsDir, sid)
	if err := m.prepareDirs(dir); err != nil {
		return nil, probe, &StartError{http.StatusInternalServerError, "start_failed", err.Error()}
	}
	argv := []string{path}
	if probe.Status == SandboxSupported {
		argv, err = m.wrap([]string{dir, m.agentHome}, dir, argv)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, probe, &StartError{http.StatusInternalServerError, "sandbox_failed",
				fmt.Sprintf("cannot confine %s: %v", engine.Command, err)}
		}
	}
	cols, rows = clampSize(cols, rows)
	s, err := startSession(sessionSpec{
		id:       sid,
		engine:   engine,
		dir:      dir,
		argv:     argv,
		env:      sessionEnv(engineEnv(m.env, engine, m.engineEnv[engine.ID], withheldEnv()), m.agentHome, dir, sid),
		cols:     cols,
		rows:     rows,
		sandbox:  probe,
		limits:   m.limits,
		onEnd:    m.ended,
		now:      time.Now(),
		announce: fmt.Sprintf("\x1b[0m[session %s] engine=%s started\r\n", sid, engine.ID),
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, probe, &StartError{http.StatusInternalServerError, "start_failed", err.Error() + ": check that the program runs from a shell, then retry"}
	}
	m.mu.Lock()
	m.active = s
	m.recent[sid] = s
	m.mu.Unlock()
	m.log.Info("session started", "id", sid, "engine", engine.ID, "sandbox", probe.Status, "dir", dir)
	return s, probe, nil
}

// busyLocked returns the busy error when a session is starting or running.
func (m *manager) busyLocked() *StartError {
	switch {
	case m.active != nil:
		st := m.active.State()
		return &StartError{http.StatusConflict, "busy",
			fmt.Sprintf("busy: session %s (%s) is still running; stop it before starting another", st.ID, st.Label)}
	case m.reserved != "":
		return &StartError{http.StatusConflict, "busy", "busy: another session is starting; wait for it or stop it, then retry"}
	}
	return nil
}

// agentHomeDirs are the directories below agent_home that every session
// gets (its HOME and XDG directories), parents first.
var agentHomeDirs = []string{".config", ".cache", ".local", filepath.Join(".local", "share"), filepath.Join(".local", "state")}

func (m *manager) prepareDirs(dir string) error {
	for _, d := range []string{m.agentHome, m.sessionsDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	for _, rel := range agentHomeDirs {
		if err := m.ensureAgentDir(rel); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("create the session directory: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".tmp"), 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("create the session directory: %w", err)
	}
	return nil
}

// ensureAgentDir makes agent_home/rel a directory. Engines write agent_home,
// so what is there may be a symlink (to anywhere on the host), a file or a
// FIFO. Following a symlink would have the host create directories where it
// points, and leaving the entry would make every later start fail, so it
// is removed (the entry itself, never what it points to) and replaced.
// Parents are made first (agentHomeDirs), so the path below agent_home
// holds real directories only; no engine runs while a session is prepared.
func (m *manager) ensureAgentDir(rel string) error {
	p := filepath.Join(m.agentHome, rel)
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		kind := "special file"
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			kind = "symlink"
		case fi.Mode().IsRegular():
			kind = "file"
		}
		m.log.Warn("agent_home: replacing an entry an engine left where a directory belongs", "path", p, "was", kind)
		if err := os.Remove(p); err != nil {
			return fmt.Errorf("replace %s, which is not a directory, with one: %w", p, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("create %s: %w", p, err)
	}
	if err := os.Mkdir(p, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", p, err)
	}
	return nil
}

// ended is called once per session when it has ended.
func (m *manager) ended(s *Session) {
	st := s.State()
	m.mu.Lock()
	if m.active == s {
		m.active = nil
	}
	// Keep the last few ended sessions reachable for late reconnects.
	for id, old := range m.recent {
		if old != s && len(m.recent) > 4 {
			select {
			case <-old.Done():
				delete(m.recent, id)
			default:
			}
		}
	}
	m.mu.Unlock()
	code := -1
	if st.ExitCode != nil {
		code = *st.ExitCode
	}
	m.log.Info("session ended", "id", st.ID, "reason", st.EndReason, "exit_code", code)
	m.cleanup(time.Now())
}

// Active returns the running session, or nil.
func (m *manager) Active() *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.active
}

// Get returns a session of this server run by id.
func (m *manager) Get(id string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recent[id]
}

// Latest returns the running session, else the most recently started one, else nil.
func (m *manager) Latest() *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active != nil {
		return m.active
	}
	var latest *Session
	for _, s := range m.recent {
		if latest == nil || s.started.After(latest.started) {
			latest = s
		}
	}
	return latest
}

// cleanup applies the retention rule to session directories: remove those
// older than Retention and all but the newest KeepSessions. The active (or
// starting) session's directory is never touched. It runs under m.mu so no
// session can start between choosing and removing.
func (m *manager) cleanup(now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	entries, err := os.ReadDir(m.sessionsDir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			m.log.Warn("session cleanup: cannot list session directories", "dir", m.sessionsDir, "err", err)
		}
		return
	}
	type dirInfo struct {
		name string
		mod  time.Time
	}
	var dirs []dirInfo
	for _, e := range entries {
		if !e.IsDir() || e.Name() == m.reserved || (m.active != nil && e.Name() == m.active.id) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		dirs = append(dirs, dirInfo{e.Name(), lastUse(e.Name(), fi.ModTime(), now)})
	}
	// Newest first; names start with the start time, which breaks mtime ties.
	slices.SortFunc(dirs, func(a, b dirInfo) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(b.name, a.name)
	})
	keep := m.limits.KeepSessions
	if m.active != nil || m.reserved != "" {
		keep-- // the live session counts towards the limit
	}
	for i, d := range dirs {
		if i < keep && now.Sub(d.mod) <= m.limits.Retention {
			continue
		}
		if err := os.RemoveAll(filepath.Join(m.sessionsDir, d.name)); err != nil {
			m.log.Warn("session cleanup: cannot remove", "dir", d.name, "err", err)
		}
	}
}

// lastUse is when session directory name was last used, for the retention
// rule: its modification time, unless that lies in the future. The engine
// owns its directory and can date it as it likes, and one dated in the
// future would outlive every retention period and hold a kept slot for
// good; then the start time in its name (which Synapse chose) counts, and a
// name without one makes it the oldest.
func lastUse(name string, mod, now time.Time) time.Time {
	if !mod.After(now) {
		return mod
	}
	if len(name) >= len(sessionIDTime) {
		if t, err := time.Parse(sessionIDTime, name[:len(sessionIDTime)]); err == nil && !t.After(now) {
			return t
		}
	}
	return time.Time{}
}

// StopAll stops the active session (server shutdown).
func (m *manager) StopAll(ctx context.Context) {
	if s := m.Active(); s != nil {
		s.Stop(ctx, EndShutdown)
	}
}

// sessionIDTime is the layout of the start time (UTC) that begins a session id.
const sessionIDTime = "20060102-150405"

func newSessionID(now time.Time) (string, error) {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a session id: %w", err)
	}
	return now.UTC().Format(sessionIDTime) + "-" + hex.EncodeToString(b), nil
}

// envValue returns the last value of key in env.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// sessionEnv is the engine's environment: base (engineEnv's allow-list),
// minus the console's own secrets and the variables that point at the
// user's real home, plus a home and XDG directories under agent_home and a
// capable TERM.
func sessionEnv(base []string, agentHome, dir, id string) []string {
	drop := map[string]bool{
		"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true,
		"XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true, "TERM": true, "COLORTERM": true,
		"TMPDIR": true, "PWD": true, "OLDPWD": true,
		EnvToken: true, EnvUser: true, EnvPassword: true,
	}
	env := make([]string, 0, len(base)+12)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	return append(env,
		"HOME="+agentHome,
		"XDG_CONFIG_HOME="+filepath.Join(agentHome, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(agentHome, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(agentHome, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(agentHome, ".local", "state"),
		"TMPDIR="+filepath.Join(dir, ".tmp"),
		"PWD="+dir,
		"TERM=xterm-256color",
		"COLORTERM=truecolor",
		"SYNAPSE_UI_SESSION_ID="+id,
	)
}
