// Package acp serves the Agent Client Protocol over stdio so that editors
// (Zed and others) can drive Synapse: one app.Agent per ACP session, its
// events streamed as session/update notifications, the sandbox's grant
// prompt asked as session/request_permission. It speaks to the agent as the
// REPL does; the protocol itself is github.com/coder/acp-go-sdk.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/synapse-agent/synapse/internal/agent"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/mcp"
	sessions "github.com/synapse-agent/synapse/internal/session"
	"github.com/synapse-agent/synapse/internal/tool"

	"github.com/synapse-agent/synapse/internal/textutil"
)

// Options configure the server.
type Options struct {
	App     *app.App
	Version string // the synapse version, sent as agentInfo and to MCP servers
	// Provider and Model are the --provider and --model flags ("" defers to
	// the environment and settings).
	Provider, Model string
	// Mode is the permission mode sessions start in ("": default).
	Mode tool.Mode
	// Log receives diagnostics (stdout is the protocol): stderr.
	Log io.Writer
}

// Serve answers ACP requests read from in, writing to out, until the client
// closes the connection or ctx ends; then every session is closed.
func Serve(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &Server{opts: opts, ctx: ctx, sessions: map[string]*session{}, answers: &answerWatch{w: out}}
	// The SDK starts reading as it builds the connection, before its own
	// fields, s.conn and the logger are set: nothing is read until they are.
	// lineGuard keeps an oversized or malformed message from ending it.
	gate := &gatedReader{r: newLineGuard(in, opts.Log), ready: make(chan struct{})}
	s.conn = sdk.NewAgentSideConnection(s, s.answers, gate)
	s.conn.SetLogger(slog.New(slog.NewTextHandler(opts.Log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	close(gate.ready)
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	s.closeAll()
	return nil
}

// gatedReader reads from r once ready is closed.
type gatedReader struct {
	r     io.Reader
	ready chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.ready
	return g.r.Read(p)
}

// Server is the agent side of one ACP connection.
type Server struct {
	opts Options
	ctx  context.Context // the connection's lifetime: updates are sent under it
	conn *sdk.AgentSideConnection
	// answers runs a new session's first updates once its answer is out.
	answers *answerWatch

	mu       sync.Mutex
	sessions map[string]*session
}

var (
	_ sdk.Agent       = (*Server)(nil)
	_ sdk.AgentLoader = (*Server)(nil)

	_ sdk.ExtensionMethodHandler = (*Server)(nil)
)

// Initialize implements sdk.Agent.
func (s *Server) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			McpCapabilities:    sdk.McpCapabilities{Http: true, Sse: true},
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true, Image: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "synapse", Version: s.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate implements sdk.Agent: Synapse reads its provider keys from
// the environment and settings.json, so there is nothing to do.
func (s *Server) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements sdk.Agent: an agent in the client's cwd, with the
// client's MCP servers next to the configured ones. Its id is the saved
// session's id, which session/load takes.
func (s *Server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	sess, err := s.open(ctx, p.Cwd, p.McpServers, "")
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s.answers.after(sess.id, sess.greet)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(sess.id), Modes: sess.modeState(), Models: sess.modelState(), ConfigOptions: sess.configOptions()}, nil
}

// LoadSession implements sdk.AgentLoader: the saved session is resumed and
// its conversation replayed to the client as session/update notifications
// before the response.
func (s *Server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if strings.TrimSpace(string(p.SessionId)) == "" {
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams("sessionId is empty: pass the id session/new returned")
	}
	sess, err := s.open(ctx, p.Cwd, p.McpServers, string(p.SessionId))
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	sess.replay(sess.transcript())
	// The client named the session: its updates may precede the answer.
	sess.greet()
	return sdk.LoadSessionResponse{Modes: sess.modeState(), Models: sess.modelState(), ConfigOptions: sess.configOptions()}, nil
}

// ResumeSession implements sdk.Agent: session/load without the replay
// (the client still shows the conversation).
func (s *Server) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	if strings.TrimSpace(string(p.SessionId)) == "" {
		return sdk.ResumeSessionResponse{}, sdk.NewInvalidParams("sessionId is empty: pass the id session/new returned")
	}
	sess, err := s.open(ctx, p.Cwd, p.McpServers, string(p.SessionId))
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	sess.greet()
	return sdk.ResumeSessionResponse{Modes: sess.modeState(), Models: sess.modelState(), ConfigOptions: sess.configOptions()}, nil
}

func (s *Server) open(ctx context.Context, cwd string, servers []sdk.McpServer, resume string) (*session, error) {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd must be an absolute path, got %s", quoteClip(cwd)))
	}
	// The agent's shell and sandbox start there: a missing directory or a
	// file would only fail later, at the first command, with less to go on.
	switch st, err := os.Stat(cwd); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd %s does not exist: pass the project's directory", quoteClip(cwd)))
	case err != nil:
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd %s is invalid: %v", quoteClip(cwd), err))
	case !st.IsDir():
		return nil, sdk.NewInvalidParams(fmt.Sprintf("cwd %s is not a directory: pass the project's directory", quoteClip(cwd)))
	}
	if resume != "" {
		// The store also takes "latest" and id prefixes; the protocol names
		// one session, and a session loaded under another id than the one
		// the client sent could not be addressed by it.
		got, err := s.opts.App.SessionStore(func(error) {}).Resolve(resume)
		if err != nil || got != resume {
			return nil, sdk.NewInvalidParams(fmt.Sprintf("no saved session has the id %s: pass an id session/new or session/list gave", quoteClip(resume)))
		}
		// A second load of a session replaces the first; that one is
		// closed first, since it holds the session's writer lock.
		s.mu.Lock()
		old := s.sessions[resume]
		delete(s.sessions, resume)
		s.mu.Unlock()
		if old != nil {
			old.close()
		}
	}
	extra, err := mcpServers(servers)
	if err != nil {
		return nil, sdk.NewInvalidParams(err.Error())
	}
	sess := &session{srv: s, calls: map[string]openCall{}, live: map[string]*liveCall{}}
	sess.perm = tool.NewPermissions(sess, tool.ModeDefault, tool.ProjectRoot(cwd))
	g, err := s.opts.App.NewAgent(ctx, app.AgentSetup{
		Provider: s.opts.Provider,
		Model:    s.opts.Model,
		Cwd:      cwd,
		Persist:  true,
		ResumeID: resume,
		OnEvent:  sess.event,
		Warn:     func(err error) { fmt.Fprintln(s.opts.Log, "synapse acp: warning:", err) },
		Approver: sess.perm,
		Extensions: app.ExtensionOptions{ClientVersion: s.opts.Version, ExtraMCP: extra,
			// A clone the model asks for is put to the person, as in the REPL.
			Import: app.AskImports(sess.perm)},
	})
	var locked *sessions.LockedError
	if errors.As(err, &locked) {
		return nil, sdk.NewInvalidRequest(err.Error() + "; close it there first, or start a new session")
	}
	if err != nil {
		return nil, sdk.NewInternalError(map[string]any{"message": err.Error()})
	}
	for _, n := range g.Extensions.Notices() {
		fmt.Fprintln(s.opts.Log, "synapse acp:", n)
	}
	sess.g = g
	sess.perm.SetSwitch(g.ModeSwitch())
	sess.offerModels()
	if m := s.opts.Mode; m != "" {
		if err := sess.setMode(m); err != nil {
			_ = g.Close()
			return nil, sdk.NewInternalError(map[string]any{"message": fmt.Sprintf("permission mode %s: %v", m, err)})
		}
	}
	sess.id = g.Runner.BeginSession()
	if sess.id == "" {
		_ = g.Close()
		return nil, sdk.NewInternalError(map[string]any{"message": "the session could not be created: is the sessions directory writable?"})
	}
	s.mu.Lock()
	if old := s.sessions[sess.id]; old != nil {
		// Ids are unique and loads close the old one first; kept as a guard.
		defer old.close()
	}
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	return sess, nil
}

// mcpServers turns the client's MCP servers into Synapse server entries.
// They run like servers of the user's own configuration: stdio ones in the
// sandbox, with the network (the user's editor chose them).
func mcpServers(in []sdk.McpServer) ([]mcp.ServerConfig, error) {
	var out []mcp.ServerConfig
	for i, m := range in {
		switch {
		case m.Stdio != nil:
			c := mcp.ServerConfig{Name: m.Stdio.Name, Type: mcp.KindStdio, Command: m.Stdio.Command, Args: m.Stdio.Args,
				Env: map[string]string{}, Sandbox: mcp.SandboxConfig{Network: true}, File: "the editor's ACP session"}
			for _, e := range m.Stdio.Env {
				c.Env[e.Name] = e.Value
			}
			out = append(out, c)
		case m.Http != nil:
			out = append(out, mcp.ServerConfig{Name: m.Http.Name, Type: mcp.KindHTTP, URL: m.Http.Url, Headers: headers(m.Http.Headers), File: "the editor's ACP session"})
		case m.Sse != nil:
			out = append(out, mcp.ServerConfig{Name: m.Sse.Name, Type: mcp.KindSSE, URL: m.Sse.Url, Headers: headers(m.Sse.Headers), File: "the editor's ACP session"})
		default:
			return nil, fmt.Errorf("mcpServers[%d]: only stdio, http and sse servers are supported", i)
		}
		n := out[len(out)-1]
		if n.Name == "" || strings.ContainsAny(n.Name, ": \t") {
			return nil, fmt.Errorf("mcpServers[%d]: name %s must be non-empty without colons or spaces (tools are called mcp:<name>:<tool>)", i, quoteClip(n.Name))
		}
		// As a config file's entries: the name becomes part of the model's
		// command list, the url is fetched by the host.
		if err := n.Validate(); err != nil {
			return nil, fmt.Errorf("mcpServers[%d]: %w", i, err)
		}
	}
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// Prompt implements sdk.Agent: one agent run; updates stream while it runs.
func (s *Server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !sess.start(runCtx, cancel) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	in, err := promptInput(runCtx, p.Prompt, sess.readFile)
	if err == nil && strings.TrimSpace(in.text) == "" {
		err = errors.New("the prompt is empty: send text, an image or a file")
	}
	if err != nil {
		sess.finish(nil)
		return sdk.PromptResponse{}, sdk.NewInvalidParams(err.Error())
	}
	if name, rest, ok := slashCommand(in.typed); ok {
		if fam := userCommand(name); fam != "" {
			// A command the person runs: the model is not asked.
			sess.runUserCommand(runCtx, fam, strings.TrimSpace(name+" "+rest))
			sess.finish(nil)
			sess.sendCommands()
			if runCtx.Err() != nil {
				return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
			}
			return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
		}
		if n, all, ok := slashCommand(in.text); ok && n == name && sess.hasSkill(name) {
			// The rest keeps the prompt's attachments.
			in.text = skillPrompt(name, all)
		}
	}
	// Plan mode wraps the prompt; the first after it ends carries a note.
	mode, text := sess.perm.Prompt(in.text)
	text = sess.modeNote(mode) + text
	if strings.TrimSpace(in.typed) != "" {
		// The title is what the person wrote, not the files they attached.
		sess.g.Runner.TitleSession(in.typed)
	}
	res, runErr := sess.g.Runner.RunImages(runCtx, text, in.images)
	sess.finish(runErr)
	// After every turn, before its answer: the context and cost it left,
	// and the slash commands when a skill came or went.
	sess.sendUsage()
	sess.sendCommands()
	switch {
	case runErr == nil:
		stop := sdk.StopReasonEndTurn
		if res.StopReason == llm.StopMaxTokens {
			stop = sdk.StopReasonMaxTokens
		}
		return sdk.PromptResponse{StopReason: stop, Usage: usage(res.Usage)}, nil
	case errors.Is(runErr, agent.ErrInterrupted) || runCtx.Err() != nil:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: usage(res.Usage)}, nil
	}
	var limit *agent.LimitError
	if errors.As(runErr, &limit) && limit.Reason == agent.StopMaxTurns {
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests, Usage: usage(res.Usage)}, nil
	}
	return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"message": runErr.Error()})
}

func usage(u llm.Usage) *sdk.Usage {
	cr, cw := int(u.CacheReadTokens), int(u.CacheCreationTokens)
	return &sdk.Usage{InputTokens: int(u.InputTokens), OutputTokens: int(u.OutputTokens),
		TotalTokens:      int(u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheCreationTokens),
		CachedReadTokens: &cr, CachedWriteTokens: &cw}
}

// Cancel implements sdk.Agent: the running prompt's context is cancelled;
// the prompt then answers with stopReason "cancelled".
func (s *Server) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return err
	}
	sess.cancelRun()
	return nil
}

// CloseSession implements sdk.Agent.
func (s *Server) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	sess := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if sess == nil {
		return sdk.CloseSessionResponse{}, sdk.NewInvalidParams(fmt.Sprintf("unknown session %s", quoteClip(string(p.SessionId))))
	}
	s.answers.forget(sess.id)
	sess.close()
	return sdk.CloseSessionResponse{}, nil
}

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// ListSessions implements sdk.Agent: the saved sessions (those
// `synapse sessions` lists), most recent first, narrowed to cwd when
// given, listPage at a time; the cursor is opaque to the client.
func (s *Server) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	start := 0
	if p.Cursor != nil && *p.Cursor != "" {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(fmt.Sprintf("cursor %s is not one this agent gave: pass nextCursor from the previous answer", quoteClip(*p.Cursor)))
		}
		start = n
	}
	entries, err := s.opts.App.SessionStore(func(err error) { fmt.Fprintln(s.opts.Log, "synapse acp: warning:", err) }).List()
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInternalError(map[string]any{"message": err.Error()})
	}
	var match []sessions.Entry
	for _, e := range entries {
		// An entry rebuilt from a history file alone has no directory; the
		// protocol needs one, so it is left out (synapse sessions --all shows it).
		if e.Cwd == "" || (p.Cwd != nil && *p.Cwd != "" && !e.InProject(*p.Cwd)) {
			continue
		}
		match = append(match, e)
	}
	out := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	for i := start; i < len(match) && i < start+listPage; i++ {
		e := match[i]
		info := sdk.SessionInfo{SessionId: sdk.SessionId(e.ID), Cwd: e.Cwd, UpdatedAt: sdk.Ptr(e.UpdatedAt.UTC().Format(time.RFC3339))}
		if e.Title != "" {
			info.Title = sdk.Ptr(e.Title)
		}
		out.Sessions = append(out.Sessions, info)
	}
	if start+listPage < len(match) {
		out.NextCursor = sdk.Ptr(strconv.Itoa(start + listPage))
	}
	return out, nil
}

// SetSessionMode implements sdk.Agent: the permission modes (default,
// accept-edits, plan, ask); the next command follows the new one.
func (s *Server) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m, err := tool.ParseMode(string(p.ModeId))
	if err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(err.Error())
	}
	if err := sess.switchMode(m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidRequest(fmt.Sprintf("mode %s: %v", m, err))
	}
	return sdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption implements sdk.Agent: the permission mode (as
// session/set_mode) and the model (as session/set_model).
func (s *Server) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := p.ValueId
	if v == nil || (v.ConfigId != modeConfigID && v.ConfigId != modelConfigID) {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(`the session config options are "mode" (a value: default, accept-edits, plan or ask) and "model" (a value of its options)`)
	}
	sess, err := s.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if v.ConfigId == modelConfigID {
		if err := sess.switchModel(string(v.Value)); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		return sdk.SetSessionConfigOptionResponse{ConfigOptions: sess.configOptions()}, nil
	}
	m, err := tool.ParseMode(string(v.Value))
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(err.Error())
	}
	if err := sess.switchMode(m); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidRequest(fmt.Sprintf("mode %s: %v", m, err))
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: sess.configOptions()}, nil
}

// UnstableSetSessionModel implements session/set_model (unstable in the
// protocol): the same switch as the "model" config option.
func (s *Server) UnstableSetSessionModel(ctx context.Context, p sdk.UnstableSetSessionModelRequest) (sdk.UnstableSetSessionModelResponse, error) {
	sess, err := s.session(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := sess.switchModel(string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

func (s *Server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[string(id)]; sess != nil {
		return sess, nil
	}
	return nil, sdk.NewInvalidParams(fmt.Sprintf("unknown session %s: create it with session/new or load it with session/load", quoteClip(string(id))))
}

// quoteClip quotes a string the client sent for an error message, cut to
// a length worth reading: errors go back to the client (and to logs), and
// an id of megabytes should not come back whole.
func quoteClip(v string) string {
	const max = 120
	if len(v) <= max {
		return strconv.Quote(v)
	}
	return strconv.Quote(textutil.HeadBytes(v, max)) + fmt.Sprintf("… (%d bytes)", len(v))
}

func (s *Server) closeAll() {
	s.mu.Lock()
	all := s.sessions
	s.sessions = map[string]*session{}
	s.mu.Unlock()
	for _, sess := range all {
		sess.close()
	}
}
