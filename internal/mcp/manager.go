package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/synapse-agent/synapse/internal/sandbox"
	"github.com/synapse-agent/synapse/internal/textutil"
)

// Wrapper turns a stdio server's argv into the argv that runs it inside the
// sandbox with the session's policy; network says whether the server may use
// the network. nil means no sandbox (unit tests only).
type Wrapper func(argv []string, cwd string, network bool) ([]string, error)

// Defaults for Options.
const (
	DefaultStartTimeout   = 10 * time.Second
	DefaultConnectTimeout = 30 * time.Second
)

// Options configure a Manager.
type Options struct {
	Wrap Wrapper
	// Env is the base environment of stdio servers: the app passes the
	// sandbox manager's Env(), without the agent's credentials. nil means the
	// process environment without the provider credentials
	// (sandbox.ProviderCredentials). Each server's own "env" entries are
	// added to it explicitly, whatever their names.
	Env []string
	// Cwd is where stdio servers run unless their entry says otherwise, and
	// what a relative "cwd" is resolved against.
	Cwd string
	// StartTimeout bounds Start: a server not ready by then is reported and
	// keeps connecting in the background.
	StartTimeout time.Duration
	// ConnectTimeout bounds one connection attempt (handshake and tool list).
	ConnectTimeout time.Duration
	// HTTPClient is the base client for remote servers (nil: a default one).
	HTTPClient *http.Client
	// ClientName and ClientVersion identify Synapse to servers.
	ClientName, ClientVersion string
}

// Manager owns one connection per configured server, opened once and reused
// for the session, reopened when it fails.
type Manager struct {
	opts Options
	life context.Context
	stop context.CancelFunc

	reg     sync.RWMutex // guards servers and names (Add adds to them)
	servers map[string]*server
	names   []string
}

// lookup is the server named name.
func (m *Manager) lookup(name string) (*server, bool) {
	m.reg.RLock()
	defer m.reg.RUnlock()
	s, ok := m.servers[name]
	return s, ok
}

// mustLookup is a server known to exist; nil when Remove took it away
// meanwhile (its users are nil-safe).
func (m *Manager) mustLookup(name string) *server {
	s, _ := m.lookup(name)
	return s
}

// all is every server, by name.
func (m *Manager) all() []*server {
	m.reg.RLock()
	defer m.reg.RUnlock()
	out := make([]*server, 0, len(m.names))
	for _, n := range m.names {
		out = append(out, m.servers[n])
	}
	return out
}

// Add adds a server to a running manager (the Agent SDK host's in-process
// servers, named in its initialize request); it connects on first use or
// Prefetch. A name already taken is an error.
func (m *Manager) Add(c ServerConfig) error {
	m.reg.Lock()
	defer m.reg.Unlock()
	if m.life.Err() != nil {
		return errors.New("MCP manager is closed")
	}
	if !serverNameRE().MatchString(c.Name) {
		return fmt.Errorf("invalid server name %q: use letters, digits, '.', '_' or '-' (it becomes mcp:<server>:<tool>)", c.Name)
	}
	if _, ok := m.servers[c.Name]; ok {
		return fmt.Errorf("an MCP server named %q is already configured", c.Name)
	}
	m.servers[c.Name] = &server{m: m, cfg: c}
	m.names = append(m.names, c.Name)
	sort.Strings(m.names)
	return nil
}

// Remove takes a server added with Add away (the Agent SDK host's
// mcp_set_servers) and stops it; a call in flight on it fails. false when
// no server has that name.
func (m *Manager) Remove(name string) bool {
	m.reg.Lock()
	s, ok := m.servers[name]
	if ok {
		delete(m.servers, name)
		i := sort.SearchStrings(m.names, name)
		m.names = append(m.names[:i:i], m.names[i+1:]...)
	}
	m.reg.Unlock()
	if !ok {
		return false
	}
	s.mu.Lock()
	s.removed = true // a dial in flight closes what it opens
	s.mu.Unlock()
	s.shutdown()
	return true
}

// NewManager prepares servers; nothing connects until Start or first use.
func NewManager(cfgs map[string]ServerConfig, opts Options) *Manager {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.ClientName == "" {
		opts.ClientName = "synapse"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	life, stop := context.WithCancel(context.Background())
	m := &Manager{opts: opts, servers: map[string]*server{}, life: life, stop: stop}
	for name, c := range cfgs {
		if c.Name == "" {
			c.Name = name
		}
		m.servers[name] = &server{m: m, cfg: c}
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m
}

// StartReport summarises start-up.
type StartReport struct {
	Servers  int // servers connected
	Tools    int // tools loaded from them
	Failures []string
}

// Lines is the report as one line per fact: the count, then each failure.
func (r StartReport) Lines() []string {
	lines := []string{fmt.Sprintf("MCP: loaded %d tools from %d servers", r.Tools, r.Servers)}
	return append(lines, r.Failures...)
}

// Start connects to every server concurrently and returns once all are ready
// or StartTimeout has passed, whichever is first (ctx can end it sooner).
func (m *Manager) Start(ctx context.Context) StartReport {
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartTimeout)
	defer cancel()
	var wg sync.WaitGroup
	servers := m.all()
	errs := make([]error, len(servers))
	for i, s := range servers {
		if s.cfg.Kind() == KindHost {
			// The host answers once its control protocol is read, which
			// starts after the agent: its servers connect on first use
			// (or Prefetch), not here.
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = s.session(ctx)
		}()
	}
	wg.Wait()
	var rep StartReport
	for i, s := range servers {
		name := s.cfg.Name
		if s.cfg.Kind() == KindHost {
			continue
		}
		if errs[i] == nil {
			rep.Servers++
			rep.Tools += len(s.toolList())
			continue
		}
		msg := errs[i].Error()
		if errors.Is(errs[i], context.DeadlineExceeded) {
			msg = fmt.Sprintf("not ready after %s (still connecting in the background; its tools appear when it answers)", m.opts.StartTimeout)
		}
		rep.Failures = append(rep.Failures, fmt.Sprintf("MCP server %q failed to start: %s", name, oneLine(msg)))
	}
	return rep
}

// Close ends every session and stops every server process.
func (m *Manager) Close() error {
	m.reg.Lock()
	m.stop()
	m.reg.Unlock()
	var wg sync.WaitGroup
	for _, s := range m.all() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	wg.Wait()
	return nil
}

// Prefetch connects to the named servers in the background (an error is
// kept for Status and the next use).
func (m *Manager) Prefetch(names ...string) {
	for _, n := range names {
		if s, ok := m.lookup(n); ok {
			go func() { _, _, _ = s.session(m.life) }()
		}
	}
}

// Names lists the configured servers.
func (m *Manager) Names() []string {
	m.reg.RLock()
	defer m.reg.RUnlock()
	return append([]string(nil), m.names...)
}

// Config returns a server's configuration.
func (m *Manager) Config(name string) (ServerConfig, bool) {
	s, ok := m.lookup(name)
	if !ok {
		return ServerConfig{}, false
	}
	return s.cfg, true
}

// ServerStatus describes one server for listings.
type ServerStatus struct {
	Name      string
	Kind      string
	Connected bool
	Tools     int
	Err       string
}

// Status lists every server and its state, without connecting.
func (m *Manager) Status() []ServerStatus {
	out := []ServerStatus{}
	for _, s := range m.all() {
		n := s.cfg.Name
		s.mu.Lock()
		st := ServerStatus{Name: n, Kind: s.cfg.Kind(), Connected: s.sess != nil, Tools: len(s.tools)}
		if s.lastErr != nil {
			st.Err = oneLine(s.lastErr.Error())
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// ToolInfo is one tool of one server.
type ToolInfo struct {
	Server      string
	Name        string
	Description string
	Schema      *Schema
	// ReadOnly is the server's readOnlyHint annotation: the tool changes
	// nothing, so the ask permission mode runs it without asking.
	ReadOnly bool
}

// Command is the shell command that runs the tool.
func (t ToolInfo) Command() string { return "mcp:" + t.Server + ":" + t.Name }

// Tools lists the tools of every connected server (no connection is made).
func (m *Manager) Tools() []ToolInfo {
	var out []ToolInfo
	for _, s := range m.all() {
		out = append(out, s.toolList()...)
	}
	return out
}

// ErrUnknownServer is returned for a server name that is not configured.
var ErrUnknownServer = errors.New("unknown MCP server")

// ServerTools connects to server if needed and returns its tools.
func (m *Manager) ServerTools(ctx context.Context, server string) ([]ToolInfo, error) {
	s, ok := m.lookup(server)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	if _, _, err := s.session(ctx); err != nil {
		return nil, err
	}
	return s.toolList(), nil
}

// CallResult is a tool result plus whether the server had to be restarted first.
type CallResult struct {
	*sdk.CallToolResult
	Reconnected bool
}

// ServerDownError reports a server that stopped during a call.
type ServerDownError struct {
	Server string
	Err    error
	Stderr string // the tail of a stdio server's stderr
}

func (e *ServerDownError) Error() string {
	msg := fmt.Sprintf("MCP server %q stopped responding during the call (%v); it will be restarted on the next call", e.Server, e.Err)
	if e.Stderr != "" {
		msg += stderrHeading + e.Stderr
	}
	return msg
}

func (e *ServerDownError) Unwrap() error { return e.Err }

// StalledError reports a call to a stdio server that timed out: the server
// may be wedged, and every later call would wait the whole timeout too, so
// it was stopped and is being restarted.
type StalledError struct {
	Server string
	Err    error // context.DeadlineExceeded
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("MCP server %q did not answer in time, so it was stopped and is being restarted (the call may have had effects: check before repeating it)", e.Server)
}

func (e *StalledError) Unwrap() error { return e.Err }

// RejectedError is a JSON-RPC error answer: the server is fine, the request was not.
type RejectedError struct {
	// Tool names the request: "the call to <tool>", "reading <uri>", …
	Server, Tool, Message string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("MCP server %q rejected %s: %s", e.Server, e.Tool, e.Message)
}

// Call runs a tool with already-mapped arguments. A server that exited since
// the last call is restarted first; one that fails during the call is
// reported (the call may have had effects, so it is not repeated) and
// restarted on the next call; a stdio server that lets a call time out is
// restarted at once (StalledError). A request the server never saw (its HTTP session
// expired) is retried once on a fresh session.
func (m *Manager) Call(ctx context.Context, server, tool string, args map[string]any) (CallResult, error) {
	var res *sdk.CallToolResult
	reconnected, err := m.request(ctx, server, "the call to "+tool, func(ctx context.Context, sess *sdk.ClientSession) (err error) {
		res, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		return err
	})
	if err != nil {
		return CallResult{}, err
	}
	return CallResult{CallToolResult: res, Reconnected: reconnected}, nil
}

// request runs one request on server's session with Call's handling of a
// server that stopped, stalled or rejected it (what names the request in a
// rejection). reconnected says the server had to be started again first.
func (m *Manager) request(ctx context.Context, server, what string, do func(context.Context, *sdk.ClientSession) error) (reconnected bool, _ error) {
	s, ok := m.lookup(server)
	if !ok {
		return false, fmt.Errorf("%w %q", ErrUnknownServer, server)
	}
	for attempt := 0; ; attempt++ {
		sess, _, err := s.session(ctx)
		if err != nil {
			return false, err
		}
		err = do(ctx, sess)
		if err == nil {
			s.mu.Lock()
			reconnected := s.restarted
			s.restarted = false
			s.mu.Unlock()
			return reconnected, nil
		}
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && s.cfg.Kind() == KindStdio {
				s.restart(sess)
				return false, &StalledError{Server: server, Err: ctx.Err()}
			}
			return false, ctx.Err()
		}
		var wire *jsonrpc.Error
		if errors.As(err, &wire) {
			return false, &RejectedError{Server: server, Tool: what, Message: wire.Message}
		}
		tail := s.drop(sess, err)
		if errors.Is(err, sdk.ErrSessionMissing) && attempt == 0 {
			continue
		}
		return false, &ServerDownError{Server: server, Err: err, Stderr: tail}
	}
}

// server is one configured server and its current session.
type server struct {
	m   *Manager
	cfg ServerConfig

	mu        sync.Mutex
	sess      *sdk.ClientSession
	proc      *exec.Cmd // the stdio process behind sess
	stderr    *tail
	tools     []ToolInfo // parsed once per tool list
	listNotes []string   // what was left out of the tool list, and why
	lastErr   error
	dialing   chan struct{}
	connected bool // a session existed before: the next dial is a restart
	restarted bool // a restart happened that no call has reported yet
	removed   bool // Remove took it away: it never connects again
	// The server's resources, resource templates and prompts, listed at
	// connection when it declares them and again on their list_changed.
	lists serverLists
	// refresh has, per list, whether a refresh runs and whether a
	// list_changed came meanwhile, so it runs once more when done (a server
	// may send them by the thousand: one refresh each was a goroutine and a
	// request each).
	refresh [numLists]refreshState
}

func (s *server) toolList() []ToolInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		return nil
	}
	return s.tools // never modified in place: replaced as a whole
}

// ListNotes says what a server's tool list left out (tools whose names
// cannot be commands, pages past the bound); nil when nothing.
func (m *Manager) ListNotes(server string) []string {
	s, ok := m.lookup(server)
	if !ok {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listNotes
}

// Bounds on what a server's tool list may bring.
const (
	// extrasListTimeout bounds listing a server's resources and prompts
	// while it connects: its tools are not held up longer by them.
	extrasListTimeout = 10 * time.Second
	// maxToolPages bounds the pages of one tools/list: a server that
	// always sends a next cursor is not listed for ever.
	maxToolPages = 100
	// maxToolName is the MCP specification's bound on a tool name.
	maxToolName = 128
	// maxToolDescription bounds a description kept for help and search
	// (in characters).
	maxToolDescription = 16 << 10
)

// validToolName reports whether a server's tool name can be offered as
// mcp:<server>:<name>: the specification's characters (letters, digits,
// '_', '-', '.') plus '/' and ':', which namespaced servers use and which
// the command word keeps intact. Whitespace would split the command, a
// line break would add a line to the model's command list, escapes would
// drive the terminal, shell syntax invites quoting mistakes.
func validToolName(name string) bool {
	if name == "" || len(name) > maxToolName {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("_-./:", c):
		default:
			return false
		}
	}
	return true
}

// infos turns a server's tools into what is offered, and notes what was
// not: a server's names and descriptions are its own words, shown in the
// terminal and the model's command list.
func (s *server) infos(tools []*sdk.Tool) ([]ToolInfo, []string) {
	out := make([]ToolInfo, 0, len(tools))
	var bad []string
	for _, t := range tools {
		if !validToolName(t.Name) {
			bad = append(bad, strconv.Quote(textutil.OneLine(textutil.Sanitize(t.Name), 40)))
			continue
		}
		desc := textutil.Sanitize(t.Description)
		desc = textutil.Truncate(desc, maxToolDescription)
		out = append(out, ToolInfo{Server: s.cfg.Name, Name: t.Name, Description: desc, Schema: ParseSchema(t.InputSchema),
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	var notes []string
	if len(bad) > 0 {
		notes = append(notes, fmt.Sprintf("%d tools are not offered: their names cannot be commands (1 to %d letters, digits and _ - . / :): %s",
			len(bad), maxToolName, strings.Join(bad[:min(len(bad), 5)], ", ")))
	}
	return out, notes
}

// session returns the live session, dialing when there is none; concurrent
// callers share one dial. redialed is true when a previous session was lost.
func (s *server) session(ctx context.Context) (_ *sdk.ClientSession, redialed bool, _ error) {
	s.mu.Lock()
	if s.sess != nil {
		sess := s.sess
		s.mu.Unlock()
		return sess, false, nil
	}
	if s.m.life.Err() != nil {
		s.mu.Unlock()
		return nil, false, errors.New("MCP manager is closed")
	}
	if s.removed {
		s.mu.Unlock()
		return nil, false, fmt.Errorf("the MCP server %q was removed", s.cfg.Name)
	}
	wasConnected := s.connected
	if s.dialing == nil {
		s.dialing = make(chan struct{})
		go s.dial(s.dialing)
	}
	ch := s.dialing
	s.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		return s.sess, wasConnected, nil
	}
	return nil, false, s.lastErr
}

func (s *server) dial(done chan struct{}) {
	ctx, cancel := context.WithTimeout(s.m.life, s.m.opts.ConnectTimeout)
	defer cancel()
	sess, proc, errTail, tools, lists, err := s.connect(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(done)
	s.dialing = nil
	if err != nil {
		if ctx.Err() != nil && s.m.life.Err() == nil {
			err = fmt.Errorf("no answer within %s: %w", s.m.opts.ConnectTimeout, err)
		}
		if t := errTail.String(); t != "" {
			err = fmt.Errorf("%w"+stderrHeading+"%s", err, t)
		}
		s.lastErr = err
		return
	}
	if s.m.life.Err() != nil || s.removed { // closed or removed while dialing
		go closeSession(sess, proc)
		s.lastErr = errors.New("MCP manager is closed")
		if s.removed {
			s.lastErr = fmt.Errorf("the MCP server %q was removed", s.cfg.Name)
		}
		return
	}
	s.restarted = s.restarted || s.connected
	s.sess, s.proc, s.stderr, s.tools, s.lists, s.lastErr, s.connected = sess, proc, errTail, tools, lists, nil, true
	go func() {
		// A stdio session ends when the process exits: forget it so the next
		// call starts a new one.
		_ = sess.Wait()
		s.drop(sess, errors.New("the server closed the connection"))
	}()
}

// drop forgets sess (if current) and stops it; it returns the stderr tail.
func (s *server) drop(sess *sdk.ClientSession, why error) string {
	s.mu.Lock()
	var proc *exec.Cmd
	tailText := ""
	if s.stderr != nil {
		tailText = s.stderr.String()
	}
	if s.sess == sess {
		proc = s.proc
		s.sess, s.proc, s.tools, s.lists = nil, nil, nil, serverLists{}
		s.lastErr = fmt.Errorf("the server stopped: %v", why)
		if tailText != "" {
			s.lastErr = fmt.Errorf("%w"+stderrHeading+"%s", s.lastErr, tailText)
		}
	}
	s.mu.Unlock()
	go closeSession(sess, proc)
	return tailText
}

// restart stops a stdio server that let a call time out and starts a new
// one in the background. Its process group is killed first: closing the
// session alone waits seconds for a wedged process to exit.
func (s *server) restart(sess *sdk.ClientSession) {
	s.mu.Lock()
	if s.sess == sess {
		killGroup(s.proc)
	}
	s.mu.Unlock()
	s.drop(sess, errors.New("a call timed out"))
	go func() { _, _, _ = s.session(s.m.life) }() // a failed start is reported by the next call
}

func (s *server) shutdown() {
	s.mu.Lock()
	sess, proc := s.sess, s.proc
	s.sess, s.proc, s.tools, s.lists = nil, nil, nil, serverLists{}
	s.mu.Unlock()
	if sess != nil {
		closeSession(sess, proc)
	}
}

func closeSession(sess *sdk.ClientSession, proc *exec.Cmd) {
	if sess != nil {
		_ = sess.Close()
	}
	killGroup(proc)
}

// killGroup ends whatever is left of a stdio server's process group.
func killGroup(proc *exec.Cmd) {
	if proc != nil && proc.Process != nil {
		_ = syscall.Kill(-proc.Process.Pid, syscall.SIGKILL)
	}
}

func (s *server) connect(ctx context.Context) (*sdk.ClientSession, *exec.Cmd, *tail, []ToolInfo, serverLists, error) {
	errTail := &tail{max: 4096}
	transport, proc, err := s.transport(errTail)
	if err != nil {
		return nil, nil, errTail, nil, serverLists{}, err
	}
	client := sdk.NewClient(&sdk.Implementation{Name: s.m.opts.ClientName, Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, req *sdk.ToolListChangedRequest) {
			go s.refreshList(req.Session, kindTools)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *sdk.ResourceListChangedRequest) {
			go s.refreshList(req.Session, kindResources)
		},
		PromptListChangedHandler: func(ctx context.Context, req *sdk.PromptListChangedRequest) {
			go s.refreshList(req.Session, kindPrompts)
		},
	})
	sess, err := client.Connect(ctx, transport, nil)
	if err != nil {
		killGroup(proc)
		return nil, nil, errTail, nil, serverLists{}, fmt.Errorf("connect: %w", err)
	}
	tools, cut, err := fetchTools(ctx, sess)
	if err != nil {
		closeSession(sess, proc)
		return nil, nil, errTail, nil, serverLists{}, fmt.Errorf("list tools: %w", err)
	}
	infos, notes := s.infos(tools)
	// Resources and prompts are extras: a server that fails to list them,
	// or takes long, still serves its tools (the listing commands ask again
	// and say why they are missing).
	ectx, cancel := context.WithTimeout(ctx, extrasListTimeout)
	defer cancel()
	lists := fetchLists(ectx, sess, s.cfg.Name, kindResources, serverLists{})
	lists = fetchLists(ectx, sess, s.cfg.Name, kindPrompts, lists)
	s.mu.Lock()
	s.listNotes = append(notes, cut...)
	s.mu.Unlock()
	return sess, proc, errTail, infos, lists, nil
}

// fetchTools reads every page of the server's tool list, up to
// maxToolPages; cut says when it stopped there.
func fetchTools(ctx context.Context, sess *sdk.ClientSession) (tools []*sdk.Tool, cut []string, _ error) {
	cursor := ""
	for page := 0; ; page++ {
		if page == maxToolPages {
			cut = []string{fmt.Sprintf("the server's tool list has more pages than %d: the tools of the first %d are offered", maxToolPages, maxToolPages)}
			break
		}
		res, err := sess.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, nil, err
		}
		for _, t := range res.Tools {
			if t != nil {
				tools = append(tools, t)
			}
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, cut, nil
}

// refreshList fetches a list again after its list_changed notification;
// one refresh of a list runs at a time, and notifications during it make
// one more.
func (s *server) refreshList(sess *sdk.ClientSession, which listKind) {
	s.mu.Lock()
	st := &s.refresh[which]
	if st.running {
		st.again = true
		s.mu.Unlock()
		return
	}
	st.running = true
	s.mu.Unlock()
	for {
		s.refreshOnce(sess, which)
		s.mu.Lock()
		if !st.again || s.sess != sess {
			st.running, st.again = false, false
			s.mu.Unlock()
			return
		}
		st.again = false
		s.mu.Unlock()
	}
}

func (s *server) refreshOnce(sess *sdk.ClientSession, which listKind) {
	ctx, cancel := context.WithTimeout(s.m.life, s.m.opts.ConnectTimeout)
	defer cancel()
	if which != kindTools {
		s.mu.Lock()
		old := s.lists
		s.mu.Unlock()
		lists := fetchLists(ctx, sess, s.cfg.Name, which, old)
		s.mu.Lock()
		if s.sess == sess {
			s.lists.merge(lists, which)
		}
		s.mu.Unlock()
		return
	}
	tools, cut, err := fetchTools(ctx, sess)
	if err != nil {
		return
	}
	infos, notes := s.infos(tools)
	s.mu.Lock()
	if s.sess == sess {
		s.tools, s.listNotes = infos, append(notes, cut...)
	}
	s.mu.Unlock()
}

func (s *server) transport(errTail *tail) (sdk.Transport, *exec.Cmd, error) {
	c := s.cfg
	switch c.Kind() {
	case KindHost:
		if c.Host == nil {
			return nil, nil, errors.New("an in-process server of the Agent SDK's host: served only in a stream-json session with the control protocol")
		}
		return &hostTransport{link: c.Host, server: c.Name}, nil, nil
	case KindStdio:
		return s.stdioTransport(errTail)
	case KindSSE:
		return &detachedTransport{t: &sdk.SSEClientTransport{Endpoint: c.URL, HTTPClient: s.httpClient()}, life: s.m.life}, nil, nil
	default:
		return &sdk.StreamableClientTransport{Endpoint: c.URL, HTTPClient: s.httpClient()}, nil, nil
	}
}

func (s *server) stdioTransport(errTail *tail) (sdk.Transport, *exec.Cmd, error) {
	c := s.cfg
	if !strings.ContainsRune(c.Command, '/') {
		if _, err := exec.LookPath(c.Command); err != nil {
			return nil, nil, fmt.Errorf("command %q not found on PATH: install it or fix \"command\" in %s", c.Command, c.File)
		}
	}
	cwd := s.m.opts.Cwd
	if c.Cwd != "" {
		cwd = c.Cwd
		if !filepath.IsAbs(cwd) && s.m.opts.Cwd != "" {
			cwd = filepath.Join(s.m.opts.Cwd, cwd)
		}
	}
	argv := append([]string{c.Command}, c.Args...)
	if s.m.opts.Wrap != nil {
		wrapped, err := s.m.opts.Wrap(argv, cwd, c.Sandbox.Network)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot run the server in the sandbox: %w", err)
		}
		argv = wrapped
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	env := s.m.opts.Env
	if env == nil {
		env = sandbox.ScrubEnv(os.Environ())
	}
	env = append([]string(nil), env...)
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+c.Env[k])
	}
	cmd.Env = env
	cmd.Stderr = errTail
	// Own session and so own process group, so stopping the server also
	// stops what it spawned; a session rather than only a group because the
	// Landlock launcher starts one, which a group leader may not.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, cmd, nil
}

func (s *server) httpClient() *http.Client {
	base := s.m.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	rt := base.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := *base
	c.Transport = &limitTransport{base: &headerTransport{base: rt, headers: s.cfg.Headers}}
	return &c
}

// maxHTTPAnswer bounds one JSON answer of an HTTP server: the SDK reads
// such a body whole, so an endless one grew the host's memory until the
// call's timeout (event streams are read an event at a time, each bounded
// by the SDK, and may rightly last for hours).
const maxHTTPAnswer = 32 << 20

// limitTransport cuts answers that are not event streams at maxHTTPAnswer.
type limitTransport struct{ base http.RoundTripper }

func (l *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || resp.Body == nil || strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxHTTPAnswer}
	return resp, nil
}

// limitedBody fails once more than left bytes were read.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("the server's answer is over %d MB: refused", maxHTTPAnswer>>20)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.base.RoundTrip(req)
}

// detachedTransport connects with a context that lives as long as the manager
// (the SSE transport ties its event stream to the Connect context), while
// still giving up when the caller's context ends.
type detachedTransport struct {
	t      sdk.Transport
	life   context.Context
	cancel context.CancelFunc // of the stream's context; it also ends with life
}

func (d *detachedTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	type result struct {
		c   sdk.Connection
		err error
	}
	ch := make(chan result, 1)
	cctx, cancel := context.WithCancel(d.life)
	go func() {
		c, err := d.t.Connect(cctx)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		// On success cctx stays alive with the stream; it ends with the manager
		// or when the connection closes its body.
		d.cancel = cancel
		return r.c, nil
	case <-ctx.Done():
		cancel()
		return nil, ctx.Err()
	}
}

// tail keeps the last max bytes written (a server's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String is the tail as text for errors and notices: a server's stderr
// is its own bytes, so terminal escapes are removed.
func (t *tail) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(textutil.Sanitize(string(t.buf)))
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s
	}
	// A server that dies at start-up usually says why on stderr (a missing
	// program, a bad flag): its last line is worth more than the SDK's EOF.
	if _, tail, ok := strings.Cut(s, stderrHeading); ok {
		lines := strings.Split(strings.TrimSpace(tail), "\n")
		return s[:i] + " (server stderr: " + strings.TrimSpace(lines[len(lines)-1]) + ")"
	}
	return s[:i] + " …"
}

// stderrHeading introduces the tail of a stdio server's stderr in errors.
const stderrHeading = "\nserver stderr (last lines):\n"
