package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/synapse-agent/synapse/internal/agentsh/registry"
	"github.com/synapse-agent/synapse/internal/app"
	"github.com/synapse-agent/synapse/internal/headless"
	"github.com/synapse-agent/synapse/internal/mcp"
	"github.com/synapse-agent/synapse/internal/subagent"
	"github.com/synapse-agent/synapse/internal/textutil"
	"github.com/synapse-agent/synapse/internal/tool"
)

// sdkHost answers the Agent SDK's control requests for one `synapse run`
// session: it wires headless.Control's handlers to the agent, the gate
// and the output.
type sdkHost struct {
	g          *app.Agent
	perm       *tool.Permissions
	out        *runOutput
	ctl        *headless.Control
	hostAsks   bool     // --permission-prompt-tool stdio
	sdkServers []string // the host's in-process MCP servers (--mcp-config type sdk, initialize)
	startModel string
	basePrompt string // the system prompt after the flags
	errw       io.Writer

	// initEvent writes system/init and the start-up warnings; begin runs
	// it once, before anything else the host reads.
	initEvent func()
	started   sync.Once
	// agentModels are the custom agents' models as the host named them
	// (initialize's agents answer them back).
	agentModels map[string]string
	// dynamic are the MCP servers mcp_set_servers added, by name.
	dynamic map[string]bool
	mcpMu   sync.Mutex // one mcp_set_servers at a time
}

// begin writes system/init once (see headless.Handlers.Begin).
func (h *sdkHost) begin() {
	h.started.Do(func() {
		if h.initEvent != nil {
			h.initEvent()
		}
	})
}

func (h *sdkHost) handlers(turns *turnCancel) headless.Handlers {
	return headless.Handlers{
		Initialize:        h.initialize,
		Interrupt:         turns.interrupt,
		SetPermissionMode: h.setMode,
		SetModel:          h.setModel,
		MCPStatus:         h.mcpStatus,
		CallFor:           h.out.callFor,
		Denied:            h.out.denied,
		SetMCPServers:     h.setMCPServers,
		Begin:             h.begin,
	}
}

// notSupported reports what the host set up that Synapse does not do, on
// stderr and as a warning event.
func (h *sdkHost) notSupported(what string) {
	fmt.Fprintln(h.errw, "synapse: note:", textutil.Sanitize(what))
	h.out.warn(errors.New(what))
}

func (h *sdkHost) initialize(in headless.Init) (map[string]any, error) {
	// The host's agents first: a bad definition fails initialize before
	// anything else of it is applied, and system/init lists the good ones.
	agentNotes, err := h.setAgents(in.AgentDefs)
	if err != nil {
		return nil, err
	}
	h.begin()
	for _, n := range agentNotes {
		h.notSupported(n)
	}
	if in.SystemPrompt != "" || in.AppendSystemPrompt != "" {
		p := h.basePrompt
		if in.SystemPrompt != "" {
			p = in.SystemPrompt
		}
		if in.AppendSystemPrompt != "" {
			p += "\n\n" + in.AppendSystemPrompt
		}
		h.g.Runner.SetSystemPrompt(p)
	}
	resp := map[string]any{
		"commands":                []any{},
		"agents":                  h.agentInfos(),
		"output_style":            "default",
		"available_output_styles": []string{"default"},
		"models":                  []any{map[string]any{"value": h.g.Runner.Model(), "displayName": h.g.Runner.Model(), "description": "the session's model"}},
		"account":                 map[string]any{},
		"claude_code_version":     Version,
	}
	if len(in.Hooks) > 0 {
		cfg, notes := h.ctl.HookConfig(in.HookMatchers)
		for _, n := range notes {
			h.notSupported(n)
		}
		applied := len(cfg) > 0 && h.g.Hooks != nil
		if applied {
			h.g.Hooks.AddHooks(cfg)
		}
		resp["hooks_applied"] = applied
	}
	if len(in.MCPServers) > 0 {
		slices.Sort(in.MCPServers)
		h.notSupported("MCP servers sent in initialize (" + strings.Join(in.MCPServers, ", ") + ") are not started: synapse reads them from --mcp-config (the SDK's default delivery, mcpServersDelivery 'argv')")
		resp["mcp_servers_applied"] = false
	}
	// The host's in-process servers are MCP servers of the session, reached
	// through mcp_message: add those named here (the SDK names them only
	// here; --mcp-config's "type":"sdk" entries are added at start) and
	// connect them now that the host reads our requests.
	if m := h.mcp(); m != nil && h.ctl != nil {
		for _, s := range in.SDKMCPServers {
			if h.served(s) {
				continue
			}
			if err := m.Add(mcp.ServerConfig{Name: s, Type: mcp.KindHost, File: "initialize", Host: h.ctl}); err != nil {
				h.notSupported("the host's in-process MCP server " + s + " is not served: " + err.Error())
			}
		}
		var ours []string
		for _, st := range m.Status() {
			if st.Kind == mcp.KindHost {
				ours = append(ours, st.Name)
			}
		}
		m.Prefetch(ours...)
	}
	for _, s := range in.SDKMCPServers {
		if !h.served(s) && !slices.Contains(h.sdkServers, s) {
			h.sdkServers = append(h.sdkServers, s)
		}
	}
	return resp, nil
}

// setMode switches the permission mode (set_permission_mode, setPermissionMode()).
func (h *sdkHost) setMode(name string) error {
	m, err := headless.ParseMode(name, h.hostAsks)
	if err != nil {
		return err
	}
	if err := h.perm.SetMode(m.Mode); err != nil {
		return fmt.Errorf("permission mode %s: %w", name, err)
	}
	h.ctl.SetAsking(m.Ask)
	if m.Note != "" {
		fmt.Fprintln(h.errw, "synapse: note: permission mode", m.Note)
	}
	return nil
}

// setModel switches the model (set_model); "" and "default" go back to the
// session's first.
func (h *sdkHost) setModel(model string) error {
	if model == "" || model == "default" {
		model = h.startModel
	}
	if err := h.g.SwitchModel(model); err != nil {
		return err
	}
	h.out.setModel(model)
	return nil
}

// mcpStatus lists the MCP servers, the host's in-process ones as failed.
func (h *sdkHost) mcpStatus() []headless.MCPStatus {
	rows := mcpStatuses(h.g)
	for _, s := range h.sdkServers {
		if h.served(s) {
			continue
		}
		why := "in-process (SDK) MCP servers are served only in a stream-json session (--input-format stream-json)"
		rows = append(rows, headless.MCPStatus{Name: s, Status: "failed", Error: why, Source: "sdk"})
	}
	return rows
}

// served says whether the MCP manager serves the host's in-process server
// name (it was given in --mcp-config to a stream-json session).
func (h *sdkHost) served(name string) bool {
	m := h.mcp()
	if m == nil {
		return false
	}
	c, ok := m.Config(name)
	return ok && c.Host != nil
}

// mcp is the session's MCP manager (nil: none).
func (h *sdkHost) mcp() *mcp.Manager {
	if h.g.Extensions == nil {
		return nil
	}
	return h.g.Extensions.MCP
}

// apiKeySource is where the key comes from, as the SDK names it.
func apiKeySource(getenv func(string) string) string {
	if getenv("ANTHROPIC_API_KEY") != "" {
		return "ANTHROPIC_API_KEY"
	}
	return "none"
}

// skillNames are the installed skills (system/init's skills).
func skillNames(g *app.Agent) []string {
	var out []string
	if g.Extensions == nil || g.Extensions.Index == nil {
		return out
	}
	for _, s := range g.Extensions.Index.Skills() {
		out = append(out, s.Name)
	}
	return out
}

// taskTypes are the sub-agent types (system/init's agents): the
// registry's, then the session's custom ones.
func taskTypes(g *app.Agent) []string {
	var out []string
	for _, n := range registry.Names(registry.FamilyTask) {
		out = append(out, strings.TrimPrefix(n, registry.FamilyTask))
	}
	for _, k := range g.Agents.Defined() {
		if !slices.Contains(out, k.Name) {
			out = append(out, k.Name)
		}
	}
	return out
}

// agentInfos are the sub-agents for initialize's response (the SDK's
// AgentInfo): the registry's, each replaced by a custom one of its name,
// then the other custom ones.
func (h *sdkHost) agentInfos() []any {
	custom := map[string]subagent.Kind{}
	for _, k := range h.g.Agents.Defined() {
		custom[k.Name] = k
	}
	info := func(k subagent.Kind) map[string]any {
		m := map[string]any{"name": k.Name, "description": k.Summary}
		if model := h.agentModels[k.Name]; model != "" {
			m["model"] = model
		}
		return m
	}
	out := []any{}
	for _, c := range registry.All() {
		if c.Family != registry.FamilyTask {
			continue
		}
		name := strings.TrimPrefix(c.Name, registry.FamilyTask)
		if k, ok := custom[name]; ok {
			out = append(out, info(k))
			delete(custom, name)
			continue
		}
		out = append(out, map[string]any{"name": name, "description": c.Help})
	}
	for _, k := range h.g.Agents.Defined() {
		if _, ok := custom[k.Name]; ok {
			out = append(out, info(k))
		}
	}
	return out
}

// setAgents makes the host's agent definitions the session's custom
// sub-agent types (task:<name>); a name of a built-in type replaces it
// for the session. A definition's model that no configured provider
// serves falls back to the parent's, with a note. notes say what of the
// definitions cannot be honoured; an invalid definition is an error naming
// the agent and the field, and then nothing changes.
func (h *sdkHost) setAgents(defs []headless.AgentDefinition) (notes []string, err error) {
	if len(defs) == 0 {
		return nil, nil
	}
	if h.g.Agents == nil {
		return nil, errors.New("initialize: custom agents need a model provider, and this session has none")
	}
	kinds := make([]subagent.Kind, 0, len(defs))
	models := map[string]string{}
	for _, d := range defs {
		model := headless.AgentModel(d.Model)
		if model != "" {
			if _, perr := h.g.ModelProvider(model); perr != nil {
				notes = append(notes, fmt.Sprintf("agent %s: model %s is not available (%v); it runs on the parent's model", d.Name, d.Model, perr))
				model = ""
			}
		}
		k, kn, kerr := subagent.NewCustomKind(d.Name, subagent.Definition{Description: d.Description, Prompt: d.Prompt,
			Tools: d.Tools, DisallowedTools: d.DisallowedTools, Model: model})
		if kerr != nil {
			return nil, fmt.Errorf("initialize: %w", kerr)
		}
		notes = append(notes, kn...)
		if len(d.Ignored) > 0 {
			notes = append(notes, fmt.Sprintf("agent %s: %s mean nothing here; ignored", d.Name, strings.Join(d.Ignored, ", ")))
		}
		switch {
		case model != "":
			models[d.Name] = d.Model
		case d.Model != "":
			models[d.Name] = "inherit" // what it runs on: the parent's model
		}
		kinds = append(kinds, k)
	}
	h.g.Agents.Set(kinds)
	h.agentModels = models
	return notes, nil
}

// mcpSetTimeout bounds how long mcp_set_servers waits for the servers it
// added to connect, so that their failures are in its answer.
const mcpSetTimeout = 30 * time.Second

// setMCPServers answers mcp_set_servers (setMcpServers()): servers become
// the session's run-time MCP servers. Those an earlier call added and the
// host's in-process ones ("type":"sdk", which the SDK drops on its side
// when a call leaves them out) are replaced: one left out is removed, one
// whose configuration changed is restarted. Servers of settings and
// --mcp-config are never touched; a name of theirs is an error of that
// entry. Added servers are connected before the answer, whose errors say
// which failed (they stay listed, as failed, in mcp_status).
func (h *sdkHost) setMCPServers(servers map[string]json.RawMessage) (headless.MCPSetResult, error) {
	h.mcpMu.Lock()
	defer h.mcpMu.Unlock()
	m := h.mcp()
	if m == nil {
		return headless.MCPSetResult{}, errors.New("mcp_set_servers: this session has no MCP manager")
	}
	res := headless.MCPSetResult{Errors: map[string]string{}}
	want := map[string]mcp.ServerConfig{}
	for name, raw := range servers {
		c, err := h.dynamicConfig(name, raw)
		if err != nil {
			res.Errors[name] = err.Error()
			continue
		}
		want[name] = c
	}
	for _, name := range m.Names() {
		cur, _ := m.Config(name)
		if !h.dynamic[name] && cur.Host == nil {
			continue // settings or --mcp-config: not the host's to replace
		}
		w, wanted := want[name]
		switch {
		case wanted && sameServer(cur, w):
			delete(want, name) // unchanged: keeps running
		case wanted:
			m.Remove(name) // changed: added again below
			delete(h.dynamic, name)
		default:
			m.Remove(name)
			delete(h.dynamic, name)
			res.Removed = append(res.Removed, name)
		}
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, taken := m.Config(name); taken {
			res.Errors[name] = "an MCP server of that name comes from settings or --mcp-config; mcp_set_servers does not replace it"
			continue
		}
		if err := m.Add(want[name]); err != nil {
			res.Errors[name] = err.Error()
			continue
		}
		if h.dynamic == nil {
			h.dynamic = map[string]bool{}
		}
		h.dynamic[name] = true
		res.Added = append(res.Added, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpSetTimeout)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, name := range res.Added {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.ServerTools(ctx, name); err != nil {
				mu.Lock()
				res.Errors[name] = textutil.Sanitize(err.Error())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	slices.Sort(res.Removed)
	return res, nil
}

// dynamicConfig reads one mcp_set_servers entry (the SDK's
// McpServerConfigForProcessTransport).
func (h *sdkHost) dynamicConfig(name string, raw json.RawMessage) (mcp.ServerConfig, error) {
	var c mcp.ServerConfig
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("not an MCP server configuration: %w", err)
	}
	if c.Type == "sdk" {
		if h.ctl == nil {
			return c, errors.New("in-process (SDK) MCP servers are served only in a stream-json session")
		}
		return mcp.ServerConfig{Name: name, Type: mcp.KindHost, File: "mcp_set_servers", Host: h.ctl}, nil
	}
	if c.Command == "" && c.URL == "" {
		return c, errors.New("the configuration has neither a command nor a url")
	}
	c.Name, c.File = name, "mcp_set_servers"
	return c, nil
}

// sameServer reports whether two configurations run the same server (the
// host's in-process servers are all alike: the host serves them).
func sameServer(a, b mcp.ServerConfig) bool {
	if a.Host != nil || b.Host != nil {
		return a.Host != nil && b.Host != nil
	}
	a.File, b.File = "", ""
	return reflect.DeepEqual(a, b)
}
